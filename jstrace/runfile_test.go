package jstrace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFile checks that the trace lands in the file whole (its size is
// the bytes Run wrote) and that a run that fails leaves no file.
func TestRunFile(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	app := filepath.Join(dir, "a.js")
	if err := os.WriteFile(app, []byte("const a = {};\nprocess.exit(3);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a.hxtrace")
	res, err := RunFile(context.Background(), []string{"node", app}, Options{}, out)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Bytes != int64(len(raw)) {
		t.Errorf("result %+v for a file of %d bytes, want exit 3 and its size", res, len(raw))
	}
	evs := decode(t, raw, dir)
	if len(grep(evs, "CREATE_OBJ a.js:1:11")) != 1 || len(grep(evs, "END code 3")) != 1 {
		t.Errorf("events:\n%s", strings.Join(evs, "\n"))
	}
	none := filepath.Join(dir, "none.hxtrace")
	if _, err := RunFile(context.Background(), nil, Options{}, none); err == nil {
		t.Error("no program ran, and no error")
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s (%v)", none, err)
	}
}

// TestDefaultPath checks the trace file named after the script.
func TestDefaultPath(t *testing.T) {
	for argv, want := range map[string]string{
		"node app.js":                        "app.hxtrace",
		"node --inspect srv/main.mjs --port": "main.hxtrace",
		"node -r x.cjs":                      "x.hxtrace",
		"node --eval 1":                      "trace.hxtrace",
		"":                                   "trace.hxtrace",
	} {
		if got := DefaultPath(strings.Fields(argv)); got != want {
			t.Errorf("DefaultPath(%q) = %q, want %q", argv, got, want)
		}
	}
}
