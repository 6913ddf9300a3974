package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heapx/heapx/internal/admit"
	"github.com/heapx/heapx/mcpserver"
)

// TestConcurrentHeavyCalls makes 40 paths and SQL calls at once (the SDK
// runs an agent's calls concurrently) to a server that runs one of each
// class at a time and queues two: each call is answered or refused with a
// tool error saying the server is busy and when to call again, never a
// protocol error, and the next calls are answered.
func TestConcurrentHeavyCalls(t *testing.T) {
	limits := map[string]admit.Limit{}
	for _, c := range []string{admit.Paths, admit.SQL, admit.Queries, admit.Open} {
		limits[c] = admit.Limit{Running: 1, Waiting: 2, MaxWait: time.Minute}
	}
	cs := connect(t, mcpserver.New(mcpserver.Options{Open: cachedOpen(t), Limits: limits}))
	var opened map[string]any
	call(t, cs, "open", map[string]any{"file": fixture("node-basic.heapsnapshot.gz")}, &opened)
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, busy := 0, 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, args := "paths", map[string]any{"id": "@1", "k": 1 + i%5}
			if i%2 == 1 {
				name, args = "sql", map[string]any{"query": "SELECT count(*) FROM node WHERE self_size > " + string(rune('0'+i%10))}
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				t.Errorf("%s: protocol error %v", name, err)
				return
			}
			text := res.Content[0].(*mcp.TextContent).Text
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !res.IsError:
				answered++
			case strings.Contains(text, "heapx is busy with "+name+" requests") && strings.Contains(text, "ask again in"):
				busy++
			default:
				t.Errorf("%s: %s", name, text)
			}
		}()
	}
	wg.Wait()
	if answered < 2 || answered+busy != 40 {
		t.Errorf("%d answered, %d refused as busy, of 40", answered, busy)
	}
	var page map[string]any
	call(t, cs, "sql", map[string]any{"query": "SELECT 1"}, &page)
	t.Logf("%d answered, %d refused as busy", answered, busy)
}
