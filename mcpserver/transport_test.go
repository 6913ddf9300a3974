package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/heapx/heapx/mcpserver"
)

// TestLineTransport serves the MCP server over LineTransport with a small
// bound: a CRLF line, a line of blanks and a line over the bound are each
// taken as a client means them, and the session goes on to the end of
// the input.
func TestLineTransport(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcpserver.New(mcpserver.Options{})
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(context.Background(), &mcpserver.LineTransport{In: inR, Out: outW, MaxRequest: 1000})
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	answer := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line); err != nil {
			t.Fatal(err)
		}
		b, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%.60q: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%.60q: answered %q", line, b)
		}
		return m
	}
	init := answer(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\r\n")
	if init["result"] == nil {
		t.Fatalf("initialize over CRLF: %v", init)
	}
	io.WriteString(inW, "   \n")
	long := answer(`{"id":7,"jsonrpc":"2.0","method":"tools/list","params":{"pad":"` + strings.Repeat("p", 2000) + `"}}` + "\n")
	if e, _ := long["error"].(map[string]any); long["id"] != float64(7) || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "at most 1000 bytes") {
		t.Errorf("a line over the bound: %v", long)
	}
	next := answer(`{"jsonrpc":"2.0","id":"next","method":"tools/list"}` + "\n")
	if next["id"] != "next" || next["result"] == nil {
		t.Errorf("the request after: %v", next)
	}
	inW.Close()
	if err := <-done; err != nil && err != io.EOF {
		t.Errorf("the session ended with %v", err)
	}
}
