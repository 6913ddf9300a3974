package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/session"
)

// TestOpenTraceErrors: what is not a whole memory trace fails when the
// session opens, naming the file, not at the first question.
func TestOpenTraceErrors(t *testing.T) {
	b, err := os.ReadFile("../analysis/lifetime/testdata/handler.memtrace")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.memtrace")
	if err := os.WriteFile(cut, b[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		cut: "cut.memtrace: byte 200: the trace is truncated",
		filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"): "node-basic.heapsnapshot.gz",
	} {
		if _, err := session.OpenTrace(path, session.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenTrace(%s): %v, want an error saying %q", path, err, want)
		}
	}
}
