package v8

import "fmt"

// FormatError reports input that is not a well-formed V8 heap snapshot. It
// names the file, the section being read and the byte offset (in the
// uncompressed stream for gzip input) where the problem was found.
type FormatError struct {
	File    string
	Section string
	Offset  int64 // -1 when the problem is not tied to one position
	Msg     string
}

func (e *FormatError) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	where := ""
	if e.Section != "" {
		where = " " + e.Section + ":"
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("%s:%s byte %d: %s", file, where, e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s:%s %s", file, where, e.Msg)
}
