package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/internal/testfixtures"
)

// mcpClient speaks JSON-RPC to a heapx mcp process, as an MCP client
// does on stdio: one message a line.
type mcpClient struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
}

func (c *mcpClient) send(msg map[string]any) {
	c.t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// request sends method with params and returns the result of the
// response to it; every line heapx writes to stdout must be JSON-RPC.
func (c *mcpClient) request(method string, params any) json.RawMessage {
	c.t.Helper()
	c.nextID++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: reading the answer: %v", method, err)
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      *int            `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" {
			c.t.Fatalf("stdout has a line that is not JSON-RPC: %q", line)
		}
		if msg.ID == nil || *msg.ID != c.nextID {
			continue // a notification
		}
		if msg.Error != nil {
			c.t.Fatalf("%s: JSON-RPC error %s", method, msg.Error)
		}
		return msg.Result
	}
}

// tool calls a tool and returns its text content and whether it is an
// error.
func (c *mcpClient) tool(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	raw := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
		c.t.Fatalf("tools/call %s: %s", name, raw)
	}
	return res.Content[0].Text, res.IsError
}

// answer calls a tool that must answer and decodes its answer into v.
func (c *mcpClient) answer(name string, args map[string]any, v any) {
	c.t.Helper()
	text, isErr := c.tool(name, args)
	if isErr {
		c.t.Fatalf("%s %v: %s", name, args, text)
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		c.t.Fatalf("%s %v: %v in %s", name, args, err, text)
	}
}

// sameJSON says whether two JSON documents hold the same values.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v in %.200s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v in %.200s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestMCPProcess runs heapx mcp on the Node leak series as an MCP client
// starts it (its stdin and stdout the protocol), and checks that it
// answers the same questions as the CLI: top, leaks, paths and summary
// give what --json prints for them.
func TestMCPProcess(t *testing.T) {
	dir := testfixtures.Dir()
	base, target, final := filepath.Join(dir, "node-leak-1.heapsnapshot.gz"), filepath.Join(dir, "node-leak-2.heapsnapshot.gz"), filepath.Join(dir, "node-leak-3.heapsnapshot.gz")
	p := startMCP(t, final, base, target)
	c, in, exited, stderr := p.mcpClient, p.in, p.exited, p.stderr
	stopped := false
	defer func() {
		if !stopped {
			p.cmd.Process.Kill()
			<-exited
		}
	}()
	if !strings.Contains(p.instructions, "next_cursor") {
		t.Fatalf("initialize: instructions %q", p.instructions)
	}
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(c.request("tools/list", map[string]any{}), &tools); err != nil || len(tools.Tools) < 15 {
		t.Fatalf("tools/list: %+v", tools)
	}

	// The dumps given on the command line are open: the questions need
	// no open.
	top, _ := c.tool("top", map[string]any{"limit": 5})
	if cli := ok(t, "top", "--json", "-n", "5", final); !sameJSON(t, top, cli) {
		t.Errorf("top differs from heapx top --json:\nmcp: %s\ncli: %s", top, cli)
	}
	leaks, _ := c.tool("leaks", nil)
	if cli := ok(t, "leaks", "--json", base, target, final); !sameJSON(t, leaks, cli) {
		t.Errorf("leaks differs from heapx leaks --json:\nmcp: %.2000s\ncli: %.2000s", leaks, cli)
	}
	if !strings.Contains(leaks, "LeakedItem") {
		t.Errorf("leaks does not name LeakedItem: %.1000s", leaks)
	}

	// Summary: the classes --json lists, with their index added.
	var page struct {
		Classes []map[string]any `json:"classes"`
	}
	c.answer("summary", map[string]any{"limit": 20}, &page)
	var cli struct {
		Classes []map[string]any `json:"classes"`
	}
	okJSON(t, &cli, "summary", "--json", final)
	if len(page.Classes) != 20 || len(cli.Classes) != 20 {
		t.Fatalf("summary: %d classes, the CLI's %d", len(page.Classes), len(cli.Classes))
	}
	for i := range page.Classes {
		delete(page.Classes[i], "index")
		if !reflect.DeepEqual(page.Classes[i], cli.Classes[i]) {
			t.Errorf("summary row %d: %v, heapx summary --json's %v", i, page.Classes[i], cli.Classes[i])
		}
	}

	// Paths: the same steps as heapx paths --json, for the largest
	// LeakedItem.
	var leaked struct {
		Classes []struct {
			Index int `json:"index"`
		} `json:"classes"`
	}
	c.answer("summary", map[string]any{"filter": "LeakedItem"}, &leaked)
	var inst struct {
		Objects []struct {
			ID uint64 `json:"id"`
		} `json:"objects"`
	}
	c.answer("instances", map[string]any{"class": leaked.Classes[0].Index, "limit": 1}, &inst)
	id := fmt.Sprint(inst.Objects[0].ID)
	type paths struct {
		Paths []struct {
			Distance int32 `json:"distance"`
			Steps    []struct {
				Edge string `json:"edge"`
				To   struct {
					ID uint64 `json:"id"`
				} `json:"to"`
			} `json:"steps"`
		} `json:"paths"`
	}
	var mp, cp paths
	c.answer("paths", map[string]any{"id": id, "k": 3}, &mp)
	okJSON(t, &cp, "paths", "--json", "--id", id, "-n", "3", final)
	// Two paths: the third DevTools would list differs from these only
	// in a runtime hop, so neither front end shows it.
	if len(mp.Paths) != 2 || !reflect.DeepEqual(mp, cp) {
		t.Errorf("paths to @%s differ from heapx paths --json:\nmcp %+v\ncli %+v", id, mp, cp)
	}

	// A bad id is the tool's error; the server answers on.
	if text, isErr := c.tool("inspect", map[string]any{"id": "@424242424"}); !isErr || !strings.Contains(text, "no object with id @424242424") {
		t.Errorf("inspect of a bad id: %v %q", isErr, text)
	}
	var obj struct {
		Object struct {
			Constructor string `json:"constructor"`
		} `json:"object"`
	}
	c.answer("inspect", map[string]any{"id": id}, &obj)
	if obj.Object.Constructor != "LeakedItem" {
		t.Errorf("inspect @%s: %+v", id, obj)
	}

	// The client closes stdin: heapx exits, successfully.
	in.Close()
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("heapx mcp exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("heapx mcp did not exit when its stdin closed")
	}
	if s := stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
		t.Errorf("stderr:\n%s", s)
	}
}

// mcpProcess is a heapx mcp process with a client on its stdio, past
// the protocol's handshake.
type mcpProcess struct {
	*mcpClient
	cmd          *exec.Cmd
	exited       chan error
	stderr       *syncBuffer
	instructions string
}

// startMCP starts heapx mcp args in a temporary directory (the SQL cache,
// if any, goes beside the dump) and makes the handshake.
func startMCP(t *testing.T, args ...string) *mcpProcess {
	t.Helper()
	cmd := heapxCommand(t, append([]string{"mcp"}, args...)...)
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpProcess{cmd: cmd, exited: make(chan error, 1), stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	p.mcpClient = &mcpClient{t: t, in: in, out: bufio.NewReader(out)}
	var init struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities struct {
			Tools *struct{} `json:"tools"`
		} `json:"capabilities"`
		Instructions string `json:"instructions"`
	}
	raw := p.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "heapx-test", "version": "1"}})
	if err := json.Unmarshal(raw, &init); err != nil || init.ServerInfo.Name != "heapx" || init.Capabilities.Tools == nil {
		cmd.Process.Kill()
		t.Fatalf("initialize: %s", raw)
	}
	p.instructions = init.Instructions
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return p
}

// TestMCPTrace: heapx mcp opens a memory trace as heapx serve does, given
// on the command line or to the open tool: its queries are the lifetime
// analyses, which answer what heapx prints (the leak marked in the
// Problems column), and overview is its report.
func TestMCPTrace(t *testing.T) {
	abs, err := filepath.Abs(handlerTrace)
	if err != nil {
		t.Fatal(err)
	}
	p := startMCP(t, abs)
	defer func() {
		p.in.Close()
		if err := <-p.exited; err != nil {
			t.Errorf("heapx mcp: %v\n%s", err, p.stderr.String())
		}
	}()
	var rows struct {
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	p.answer("query", map[string]any{"name": "lifetimes"}, &rows)
	if len(rows.Sections) == 0 || len(rows.Sections[0].Rows) == 0 || rows.Sections[0].Rows[0]["site"] != "/app/handler.js:3:14" || rows.Sections[0].Rows[0]["problems"] != "leak, unused" {
		t.Errorf("query lifetimes: %+v", rows)
	}
	leaks, _ := p.tool("query", map[string]any{"name": "trace-leaks"})
	if cli := ok(t, "trace-leaks", "--json", abs); !sameJSON(t, leaks, cli) {
		t.Errorf("trace-leaks differs from the CLI's:\nmcp: %s\ncli: %s", leaks, cli)
	}
	var opened struct {
		Dump    string   `json:"dump"`
		Runtime string   `json:"runtime"`
		Queries []string `json:"queries"`
	}
	p.answer("open", map[string]any{"file": abs}, &opened)
	if opened.Runtime != "memtrace" || !slices.Contains(opened.Queries, "trace-leaks") || slices.Contains(opened.Queries, "top") {
		t.Errorf("open of a trace: %+v", opened)
	}
	var doc struct {
		Format string `json:"format"`
		Parts  []struct {
			Key string `json:"key"`
		} `json:"parts"`
	}
	p.answer("overview", map[string]any{}, &doc)
	if doc.Format != "memtrace" || len(doc.Parts) == 0 || doc.Parts[0].Key != "lifetimes" {
		t.Errorf("overview of a trace: %+v", doc)
	}
	if text, isErr := p.tool("summary", map[string]any{}); !isErr || !strings.Contains(text, "memory trace") {
		t.Errorf("summary of a trace: %v %s", isErr, text)
	}
}

// TestMCPUnreadable: a file on the command line that cannot be read
// stops heapx mcp before it serves, with the file named.
func TestMCPUnreadable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone.heapsnapshot")
	r := heapxProcess(t, strings.NewReader(""), "mcp", missing)
	if r.code != 1 || !strings.Contains(r.stderr, missing) || r.stdout != "" {
		t.Errorf("heapx mcp %s: exit %d, stdout %q, stderr %q", missing, r.code, r.stdout, r.stderr)
	}
}

// TestMCPBadFrames sends heapx mcp what a broken or hostile client might:
// a request line of 20 MB (over the 4 MiB bound), a line that is not JSON,
// a request cut short, a batch, JSON that is not JSON-RPC, a number. Each
// gets a JSON-RPC error (with the request's id when the line shows one),
// the server's memory does not grow with the long line, and a valid call
// after them is answered.
func TestMCPBadFrames(t *testing.T) {
	cmd := heapxCommand(t, "mcp", filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"))
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	c := &mcpClient{t: t, in: in, out: bufio.NewReader(out)}
	c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "heapx-test", "version": "1"}})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	hwm := func() int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			return 0
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				var kb int
				fmt.Sscan(v, &kb)
				return kb
			}
		}
		return 0
	}
	before := hwm()
	long := `{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{"name":"sql","arguments":{"query":"` + strings.Repeat("x", 20<<20) + `"}}}`
	for _, f := range []struct {
		line string
		id   string // the id the error must carry
		code int
		want string
	}{
		{long, "901", -32600, "heapx mcp reads requests of at most 4194304 bytes"},
		{"this is not JSON", "null", -32700, "the request is not JSON"},
		{`{"jsonrpc":"2.0","id":"s-902","method":"tools/call","params":{"name":"top"`, `"s-902"`, -32700, "unexpected end of JSON input"},
		{`[{"jsonrpc":"2.0","id":903,"method":"tools/list"}]`, "null", -32600, "batches are not supported"},
		{`{"id":904,"method":"tools/list"}`, "904", -32600, "not a JSON-RPC 2.0 message"},
		{`42`, "null", -32600, "not a JSON-RPC 2.0 message"},
	} {
		if _, err := io.WriteString(in, f.line+"\n"); err != nil {
			t.Fatalf("%.40s: the server stopped reading: %v", f.line, err)
		}
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%.40s: no answer: %v; stderr:\n%s", f.line, err, stderr.String())
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" || string(msg.ID) != f.id || msg.Error.Code != f.code || !strings.Contains(msg.Error.Message, f.want) {
			t.Errorf("%.40s: answered %s; want error %d with id %s saying %q", f.line, line, f.code, f.id, f.want)
		}
	}
	// The 20 MB line was read through, never held: the resident peak grew
	// by the 4 MiB kept of it and the buffer's growth, not by 20 MB.
	if grew := hwm() - before; before > 0 && grew > 12<<10 {
		t.Errorf("peak RSS grew by %d kB reading the bad lines", grew)
	}
	text, isErr := c.tool("top", map[string]any{"limit": 3})
	if isErr || !strings.Contains(text, `"retained_size"`) {
		t.Errorf("top after the bad lines: %.300s", text)
	}
	if n := strings.Count(stderr.String(), "heapx mcp: refused a request"); n != 6 {
		t.Errorf("stderr says %d requests were refused, want 6:\n%s", n, stderr.String())
	}
	in.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("heapx mcp exited with %v after its input ended", err)
		}
		exited <- nil
	case <-time.After(30 * time.Second):
		t.Error("heapx mcp did not exit when its input ended")
	}
}
