package formats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Side files are what heapx capture writes beside a dump that the dump
// itself does not keep (the scripts the inspector reported, an
// allocation timeline's heap statistics, a page's source maps): JSON
// Lines whose first line names the file's format and version, so a
// reader refuses a file it does not know instead of misreading it.

// SidePath is the side file of the dump at path with suffix ext: the
// dump's name without ".gz", plus ext (app.heapsnapshot.gz and
// ".scripts.jsonl" give app.heapsnapshot.scripts.jsonl).
func SidePath(path, ext string) string {
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		path = path[:len(path)-3]
	}
	return path + ext
}

// sideHeader is a side file's first line.
type sideHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

// WriteSideHeader writes a side file's first line, naming its format
// and version.
func WriteSideHeader(w io.Writer, format string, version int) error {
	return WriteJSONLine(w, sideHeader{Format: format, Version: version})
}

// WriteJSONLine writes v as one line of JSON.
func WriteJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadSideFile reads a side file from r (named file in errors): a first
// line naming format at version, then each further line handed to line,
// in order. An error line returns, a line over maxLine bytes, or a file
// without its header ends the read with a FormatError naming the line
// and its byte offset.
func ReadSideFile(r io.Reader, file, format string, version, maxLine int, line func(b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine)), maxLine)
	var offset int64
	n := 0
	at := func(msg string) error {
		return &FormatError{File: file, Section: fmt.Sprintf("line %d", n), Offset: offset, Msg: msg}
	}
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if n == 1 {
			var h sideHeader
			if err := json.Unmarshal(b, &h); err != nil || h.Format != format {
				return at(fmt.Sprintf("want the header {\"format\":%q,\"version\":%d}", format, version))
			}
			if h.Version != version {
				return at(fmt.Sprintf("version %d of %s; this heapx reads version %d", h.Version, format, version))
			}
		} else if err := line(b); err != nil {
			return at(err.Error())
		}
		offset += int64(len(b)) + 1
	}
	if err := sc.Err(); err != nil {
		n++
		if err == bufio.ErrTooLong {
			return at(fmt.Sprintf("a line longer than %d bytes", maxLine))
		}
		return at(err.Error())
	}
	if n == 0 {
		return &FormatError{File: file, Offset: 0, Msg: "empty: want a header line", Err: ErrTruncated}
	}
	return nil
}
