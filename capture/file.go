package capture

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/gz"
)

// writeFile writes the file at path through fill, atomically
// (formats.WriteFileAtomic: a temporary file renamed into place only when
// fill succeeds, with the mode the umask gives), gzip-compressed when path
// ends in ".gz". It returns the size of the file on disk.
func writeFile(path string, fill func(w io.Writer) error) (int64, error) {
	gzipped := strings.HasSuffix(strings.ToLower(path), ".gz")
	err := formats.WriteStream(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		var w io.Writer = bw
		var zw *gz.Writer
		if gzipped {
			zw = gz.NewWriter(bw)
			w = zw
		}
		err := fill(w)
		if zw != nil {
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
		}
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// SeriesPath is the name of the i-th file (from 1) of a series written
// to path: "leak.heapsnapshot.gz" gives "leak-2.heapsnapshot.gz".
func SeriesPath(path string, i int) string {
	dir, name := filepath.Split(path)
	gzExt := ""
	if strings.HasSuffix(strings.ToLower(name), ".gz") {
		name, gzExt = name[:len(name)-3], name[len(name)-3:]
	}
	ext := filepath.Ext(name)
	if ext == name {
		ext = "" // a name like ".heapsnapshot" is all stem
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%d%s%s", strings.TrimSuffix(name, ext), i, ext, gzExt))
}
