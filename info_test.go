package heapx_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx"
)

// TestInfoWriteText checks the text of heapx info: the key/value block
// and the two census tables, with a V8 snapshot's real values.
func TestInfoWriteText(t *testing.T) {
	d := open(t, "testdata/node-sites.heapsnapshot.gz", heapx.Options{Stored: heapx.SkipStored, NodesOnly: true})
	info := d.Info()
	info.ReadSeconds = 0.25 // the one value that is not the file's
	var b strings.Builder
	if err := info.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `File              testdata/node-sites.heapsnapshot.gz (1.1 MB, gzip)
Format            v8.heapsnapshot
Producer          Node.js (V8)
Nodes             65,386
Edges             244,874
Strings           26,759
Total self size   5.3 MB (5,259,583 bytes)
Locations         yes (7,050)
Allocation trace  yes
Detachedness      yes (8 detached)
Thread stacks     no
Read time         0.25 s

Node type            Category              Count  Self size      %
array                array                 8,036     1.5 MB  27.8%
`
	if got := b.String(); !strings.HasPrefix(got, want) {
		t.Errorf("text starts\n%s\nwant\n%s", got[:min(len(got), len(want))], want)
	}
	cats := "\nCategory              Count  Self size      %\narray                 8,036     1.5 MB  27.8%\n"
	if !strings.Contains(b.String(), cats) {
		t.Errorf("no category table starting %q in\n%s", cats, b.String())
	}
	if n := strings.Count(b.String(), "\n"); n != 12+1+1+len(info.NodeTypes)+1+1+len(info.Categories) {
		t.Errorf("%d lines for %d types and %d categories", n, len(info.NodeTypes), len(info.Categories))
	}
}
