package jsonl

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
)

// reader reads a flat file in four jobs, each in files of its own:
// framing cuts the input into lines (frame.go, and parallel.go for the
// bulk of node and edge lines), declarations say what the records hold
// (declare.go), record decoders read each record type's fields through one
// table per type (records.go, nodes.go) and finishing resolves what could
// only be resolved at the end (finish.go). Its state is grouped the same
// way.
type reader struct {
	name  string
	bound int64 // most bytes the text can have, for sanity-checking counts
	opt   ReadOptions
	g     *model.Graph
	c     cursor // the line being read

	framing  // lines
	declared // declarations and metadata
	columns  // nodes and edges being appended
	idLookup // node identifiers to indexes
	deferred // references resolved at the end
}

func newReader(src *input.Reader, name string, bound int64, opt ReadOptions) *reader {
	size := 1 << 20
	if bound < int64(size) {
		size = max(int(bound), 4096)
	}
	return &reader{
		name: name, bound: bound, opt: opt, g: &model.Graph{},
		framing:  framing{src: src, buf: make([]byte, size)},
		declared: newDeclared(),
		columns:  columns{rootKinds: map[string]uint16{}},
		idLookup: idLookup{lastIdx: -1},
		deferred: deferred{strSeq: true},
	}
}

func (rd *reader) errorf(format string, args ...any) error {
	return &formats.FormatError{File: rd.name, Section: "line " + strconv.FormatInt(rd.line, 10), Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

func (rd *reader) errAt(line int64, format string, args ...any) error {
	sec := ""
	if line > 0 {
		sec = "line " + strconv.FormatInt(line, 10)
	}
	return &formats.FormatError{File: rd.name, Section: sec, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

func (rd *reader) run() error {
	first := true
	for {
		if !first && rd.bulkAhead() {
			// The rest of the file goes through the parallel parser.
			if err := rd.runParallel(); err != nil {
				return err
			}
			break
		}
		l, err := rd.nextLine()
		if err != nil {
			return err
		}
		if l == nil {
			break
		}
		if first {
			if err := rd.version(l); err != nil {
				return err
			}
			first = false
			continue
		}
		if err := rd.handle(l); err != nil {
			return err
		}
	}
	if first {
		return rd.errAt(0, "empty file, not a heapx flat file")
	}
	return rd.finish()
}

// handle reads one line other than the first.
func (rd *reader) handle(l []byte) error {
	if len(l) == 0 || len(l) == 1 && l[0] == '\r' {
		return nil
	}
	if err := rd.record(l); err != nil {
		if rd.line == rd.cutLine {
			// A last line without its newline that does not parse: the
			// file was cut inside it.
			return rd.inputError()
		}
		var fe *formats.FormatError
		if errors.As(err, &fe) {
			return err
		}
		return rd.errorf("%v", err)
	}
	return nil
}

// record dispatches one line.
func (rd *reader) record(l []byte) error {
	c := &rd.c
	c.b, c.i = l, 0
	if err := c.expect('[', "'[' starting a record"); err != nil {
		return err
	}
	tag, err := c.str("record type")
	if err != nil {
		return err
	}
	var d *decl
	switch string(tag) {
	case "edge":
		d = rd.edgeD
	case "node":
		d = rd.nodeD
	case "string":
		d = rd.strD
	case "metadata":
		return rd.metadata()
	case "record":
		return rd.declare()
	default:
		// Extension records come in runs (all locations, then all
		// trace nodes): remember the last one instead of a map lookup
		// per line.
		if rd.lastD != nil && string(tag) == rd.lastD.name {
			d = rd.lastD
		} else {
			d = rd.decls[string(tag)]
			rd.lastD = d
		}
	}
	if d == nil {
		if _, ok := recordTypes[string(tag)]; ok {
			return fmt.Errorf("%q record before its declaration ([\"record\",%q,[...]])", tag, tag)
		}
		rd.undecl[string(tag)]++
		return nil
	}
	d.count++
	if d.kind == nil {
		return nil
	}
	if err := d.kind.read(rd, d); err != nil {
		return err
	}
	return c.end()
}
