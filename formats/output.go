package formats

import (
	"fmt"
	"sort"
	"strings"
)

// Writable lists the formats heapx can write, with their extensions, for
// help texts and messages.
func Writable() string {
	var names []string
	for _, f := range All() {
		if f.Write != nil || f.WriteFile != nil {
			names = append(names, f.Name+" ("+strings.Join(f.Extensions, ", ")+")")
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ForOutput picks the format of an output file at path: the one named
// name, or, when name is "", the one path's extension says. It is told
// before anything is read, so a mistake costs nothing. The errors call
// name --to, heapx convert's flag for it.
func ForOutput(path, name string) (*Format, error) {
	var f *Format
	if name != "" {
		var ok bool
		if f, ok = Lookup(name); !ok {
			return nil, fmt.Errorf("--to %s: no such format (formats heapx writes: %s)", name, Writable())
		}
	} else {
		var ok bool
		if f, ok = ByExtension(path); !ok {
			return nil, fmt.Errorf("%s: cannot tell the output format from the extension; name it .heapsnapshot, .jsonl, .jsonl.gz or .db, or use --to (formats heapx writes: %s)", path, Writable())
		}
	}
	if f.Write == nil && f.WriteFile == nil {
		return nil, fmt.Errorf("heapx cannot write format %s (formats heapx writes: %s)", f.Name, Writable())
	}
	return f, nil
}
