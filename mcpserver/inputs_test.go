package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/internal/partitiontest"
	"github.com/heapx/heapx/mcpserver"
	"github.com/heapx/heapx/session"
)

// openAnswer is what the open tool answers, as far as these tests read it.
type openAnswer struct {
	Dump string `json:"dump"`
	session.InfoJSON
	Queries []string `json:"queries"`
}

// TestOpenParquetPartition: the open tool reads a Parquet partition
// (heapx export's) as heapx mcp opens dumps by default (session.Open),
// and answers about it as about the snapshot it was written from, SQL
// included.
func TestOpenParquetPartition(t *testing.T) {
	snap := fixture("node-leak-3.heapsnapshot.gz")
	part := partitiontest.Write(t, snap)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // where the SQL copy of a partition goes
	cs := connect(t, mcpserver.New(mcpserver.Options{}))
	var opened openAnswer
	call(t, cs, "open", map[string]any{"file": part}, &opened)
	in := opened.Inputs[0]
	if opened.Runtime != "v8" || in.Format != "parquet" || in.Nodes != 53155 || in.Info == nil || in.Info.NodeCount != 53155 {
		t.Fatalf("open %s: runtime %q, inputs %+v", part, opened.Runtime, opened.Inputs)
	}
	var classes classPage
	call(t, cs, "summary", map[string]any{"filter": "LeakedItem"}, &classes)
	if len(classes.Classes) != 1 || classes.Classes[0].Count != 1500 {
		t.Errorf("LeakedItem in the partition: %+v", classes.Classes)
	}
	var paths session.PathsJSON
	call(t, cs, "paths", map[string]any{"id": "80593", "k": 1}, &paths)
	if len(paths.Paths) != 1 || !strings.Contains(pathText(paths.Paths[0]), ".bus EventEmitter") {
		t.Errorf("the path to the leaked array:\n%s", pathText(paths.Paths[0]))
	}
	var sql session.SQLJSON
	call(t, cs, "sql", map[string]any{"query": "SELECT count(*) AS n FROM node"}, &sql)
	var rows []struct {
		N int `json:"n"`
	}
	if err := json.Unmarshal(sql.Rows, &rows); err != nil || len(rows) != 1 || rows[0].N != 53155 {
		t.Errorf("SQL count of the partition's nodes: %s", sql.Rows)
	}
}

// TestOpenNodeCore: the open tool reads a Node.js core (made at test
// time by gcore) with the node executable the agent gives as binary, and
// with the server's (heapx mcp --binary) when it gives none. It skips
// without gcore or the node binary, unless CI=true.
func TestOpenNodeCore(t *testing.T) {
	c := coretest.Make(t, coretest.Majors(t)[0])
	tickets := func(cs *mcp.ClientSession) int {
		t.Helper()
		var classes classPage
		call(t, cs, "summary", map[string]any{"filter": c.Expect.Tickets.Class, "limit": 1000}, &classes)
		for _, cl := range classes.Classes {
			if cl.Constructor == c.Expect.Tickets.Class {
				return cl.Count
			}
		}
		return 0
	}

	cs := connect(t, mcpserver.New(mcpserver.Options{}))
	if msg := callErr(t, cs, "open", map[string]any{"file": c.Core, "binary": "/bin/sh"}); !strings.Contains(msg, c.Core) {
		t.Errorf("a core opened with /bin/sh: %q, want an error naming the core", msg)
	}
	var opened openAnswer
	call(t, cs, "open", map[string]any{"file": c.Core, "binary": c.Binary}, &opened)
	if in := opened.Inputs[0]; opened.Runtime != "v8" || in.Format != "nodecore" || in.Info == nil || in.Info.ThreadCount < 1 || opened.Threads != in.Info.ThreadCount {
		t.Fatalf("open %s: runtime %q, threads %d, inputs %+v", c.Core, opened.Runtime, opened.Threads, opened.Inputs)
	}
	if n := tickets(cs); n != c.Expect.Tickets.Count {
		t.Errorf("%d %s, want %d", n, c.Expect.Tickets.Class, c.Expect.Tickets.Count)
	}

	cs = connect(t, mcpserver.New(mcpserver.Options{Dump: heapx.Options{Binary: c.Binary}}))
	call(t, cs, "open", map[string]any{"file": c.Core}, &opened)
	if n := tickets(cs); n != c.Expect.Tickets.Count {
		t.Errorf("with the server's binary: %d %s, want %d", n, c.Expect.Tickets.Class, c.Expect.Tickets.Count)
	}
}
