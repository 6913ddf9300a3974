package v8

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// FuzzRead feeds arbitrary bytes to the reader: it must return a graph that
// validates or a FormatError, and never panic; the general number parser
// alone (without parseColumns) must give the same graph or the same error.
// Seeds are the hand-made tiny
// snapshot and the head of real fixtures (their first kilobytes hold the
// real meta of Node 20 and Chrome 156 and the start of the nodes array).
func FuzzRead(f *testing.F) {
	f.Add([]byte(tiny))
	f.Add([]byte(tinyScripts))
	for _, name := range []string{"node-basic", "node-trace", "chromium-small-page"} {
		zf, err := os.Open(fixture(name))
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(zf)
		if err != nil {
			f.Fatal(err)
		}
		head := make([]byte, 4096)
		n, _ := io.ReadFull(zr, head)
		zf.Close()
		f.Add(head[:n])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data), "fuzz", ReadOptions{Workers: 2})
		fastColumns = false
		general, gerr := Read(bytes.NewReader(data), "fuzz", ReadOptions{Workers: 2})
		fastColumns = true
		if (err == nil) != (gerr == nil) || err != nil && err.Error() != gerr.Error() {
			t.Fatalf("with parseColumns: %v; general parser: %v", err, gerr)
		}
		if !testfixtures.CheckRead(t, g, err) {
			return
		}
		sameGraph(t, g, general)
	})
}
