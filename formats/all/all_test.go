package all_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestLinksEveryFormat checks that importing the package registers every
// format heapx has.
func TestLinksEveryFormat(t *testing.T) {
	var names []string
	for _, f := range formats.All() {
		names = append(names, f.Name)
	}
	if want := []string{"hprof", "jsonl", "parquet", "spidermonkey", "sqlite", "v8"}; !slices.Equal(names, want) {
		t.Errorf("registered formats %v, want %v", names, want)
	}
}

// TestReadsEveryFormat opens a dump of each format: the bundled V8,
// HPROF and Firefox dumps, and the V8 one written as .jsonl and .db.
func TestReadsEveryFormat(t *testing.T) {
	td := testfixtures.Dir()
	v8dump := filepath.Join(td, "node-basic.heapsnapshot.gz")
	g, _, err := formats.Open(v8dump, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]string{
		"v8":           v8dump,
		"hprof":        filepath.Join(td, "hprof", "java-leakdemo-small.hprof.gz"),
		"spidermonkey": filepath.Join(td, "spidermonkey", "ff-small-page.fxsnapshot"),
		"jsonl":        filepath.Join(dir, "basic.jsonl"),
		"sqlite":       filepath.Join(dir, "basic.db"),
	}
	for _, name := range []string{"jsonl", "sqlite"} {
		f, _ := formats.Lookup(name)
		if err := formats.Save(paths[name], f, g, formats.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, path := range paths {
		h, f, err := formats.Open(path, formats.ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if f.Name != name || h.NumNodes() == 0 {
			t.Errorf("%s: read as %s, %d nodes", path, f.Name, h.NumNodes())
		}
	}
}

// TestUnknownFileNamesEveryFormat checks the message for a file of no
// format when every format is linked: the command's message, with no
// advice to import anything.
func TestUnknownFileNamesEveryFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("not a heap dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := formats.Detect(path)
	want := path + ": not a heap dump heapx can read (known formats: hprof, jsonl, spidermonkey, sqlite, v8)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
