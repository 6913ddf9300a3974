// Package heapprofile reads V8 sampling heap profiles: the .heapprofile
// files `node --heap-prof`, DevTools' "Allocation sampling" and `heapx
// capture --sampling` write (the protocol's HeapProfiler.SamplingHeapProfile
// as JSON, optionally gzip-compressed).
//
// A sampling profile is not a heap graph: it has no objects and no edges,
// only a call tree of allocation stacks with the bytes sampled at each
// frame, and the samples themselves. So it is not a formats registry entry
// (the registry's readers produce a model.Graph) and is not forced into
// one: Read returns a model.SamplingProfile, which the analyses
// (alloc.ProfileSites) and `heapx sites` read directly. The formats
// registry still recognises the file by its head and says what it is when
// it is given where a heap dump is expected.
//
// Whether a sample's object was later collected is not in the file: with
// includeObjectsCollectedByMajorGC/MinorGC (heapx capture --sampling) the
// samples include collected objects, without them (node --heap-prof) they
// are the objects still alive when sampling stopped. Which of the two a
// file is cannot be known from it, so views speak of sampled bytes.
package heapprofile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/heapx/heapx/model"
)

// Profile is one sampling heap profile, as the analyses take it
// (alloc.ProfileSites): the reader's result is model data, so the
// analyses need not depend on this reader.
type Profile = model.SamplingProfile

// Node is one frame of a profile's allocation call tree.
type Node = model.ProfileNode

// Sample is one sampled allocation.
type Sample = model.ProfileSample

// Detect reports whether head, the first bytes of a file (decompressed),
// is a sampling heap profile: a JSON object whose first key is "head" and
// that has call frames with self sizes.
func Detect(head []byte) bool {
	j := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !bytes.HasPrefix(j, []byte("{")) {
		return false
	}
	j = bytes.TrimLeft(j[1:], " \t\r\n")
	return bytes.HasPrefix(j, []byte(`"head"`)) && bytes.Contains(head, []byte(`"callFrame"`))
}

// headSize is how much of a file DetectFile looks at.
const headSize = 4096

// DetectFile reports whether the file at path, plain or gzip-compressed,
// is a sampling heap profile. A file it cannot read is not one; the
// reader that comes next says why.
func DetectFile(path string) bool {
	f, r, err := open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, _ := io.ReadFull(r, head)
	return Detect(head[:n])
}

// IsProfileFile reports whether the file at path is to be read as a
// sampling heap profile (ReadFile) rather than as a heap dump: a regular
// file named .heapprofile (plain or .gz), even when its head does not look
// like one, so that ReadFile says what is wrong with it; or whose head is
// one (DetectFile). Anything but a regular file is not one: reading a
// pipe's head would take it from the dump reader, which says what a
// profile given through a pipe is.
func IsProfileFile(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return strings.HasSuffix(strings.TrimSuffix(strings.ToLower(path), ".gz"), ".heapprofile") || DetectFile(path)
}

// ReadFile reads the profile at path, plain or gzip-compressed.
func ReadFile(path string) (*Profile, error) {
	f, r, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(r, path)
}

// open opens path and returns its content, decompressed when it is gzip.
func open(path string) (*os.File, io.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, zr, nil
	}
	return f, br, nil
}

// Error is bad input: the file, the byte offset (of the decompressed
// JSON) and what was expected there.
type Error struct {
	Name   string
	Offset int64
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: not a valid sampling heap profile at byte %d: %s", e.Name, e.Offset, e.Msg)
}

// maxDepth bounds the call tree's nesting. V8 samples at most 128 frames
// of a stack (the inspector's HeapProfiler.startSampling, which node
// --heap-prof uses too), so a profile's tree is at most 129 deep; the
// bound leaves room for other writers while keeping what views that
// expand each stack (bottom-up, a call tree printed indented) cost in
// proportion: their work grows with the nodes times the depth.
const maxDepth = 1024

// Read reads a profile from r as a stream of JSON tokens, never holding
// the text whole; name is for messages.
func Read(r io.Reader, name string) (*Profile, error) {
	p := &reader{dec: json.NewDecoder(r), name: name, strs: map[string]string{}}
	p.dec.UseNumber()
	prof, err := p.profile()
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = p.fail("%v", err)
		}
		return nil, err
	}
	return prof, nil
}

type reader struct {
	dec  *json.Decoder
	name string
	prof Profile
	strs map[string]string // interned names and URLs
	ids  map[uint32]int32  // node id -> index
}

func (p *reader) fail(format string, args ...any) error {
	return &Error{Name: p.name, Offset: p.dec.InputOffset(), Msg: fmt.Sprintf(format, args...)}
}

func (p *reader) delim(want json.Delim) error {
	t, err := p.dec.Token()
	if err != nil {
		return p.fail("expected %q: %v", want, err)
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return p.fail("expected %q, found %v", want, t)
	}
	return nil
}

func (p *reader) key() (string, error) {
	t, err := p.dec.Token()
	if err != nil {
		return "", p.fail("expected a key: %v", err)
	}
	k, ok := t.(string)
	if !ok {
		return "", p.fail("expected a key, found %v", t)
	}
	return k, nil
}

func (p *reader) uint(what string, max uint64) (uint64, error) {
	var n json.Number
	if err := p.dec.Decode(&n); err != nil {
		return 0, p.fail("%s: expected a number: %v", what, err)
	}
	v, err := n.Int64()
	if err != nil || v < 0 || uint64(v) > max {
		// V8 writes sizes as integers; a fraction or a negative is bad.
		f, ferr := n.Float64()
		if ferr != nil || f < 0 || f > float64(max) || f != float64(uint64(f)) {
			return 0, p.fail("%s: expected a non-negative integer, found %s", what, n)
		}
		v = int64(f)
	}
	return uint64(v), nil
}

func (p *reader) intern(s string) string {
	if t, ok := p.strs[s]; ok {
		return t
	}
	p.strs[s] = s
	return s
}

func (p *reader) profile() (*Profile, error) {
	if err := p.delim('{'); err != nil {
		return nil, err
	}
	p.ids = map[uint32]int32{}
	var sawHead bool
	var raw []rawSample
	for p.dec.More() {
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		switch k {
		case "head":
			if sawHead {
				return nil, p.fail("a second \"head\"")
			}
			sawHead = true
			if err := p.node(-1, 0); err != nil {
				return nil, err
			}
		case "samples":
			if raw, err = p.samples(); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage // small: profiles have no other big keys
			if err := p.dec.Decode(&skip); err != nil {
				return nil, p.fail("value of %q: %v", k, err)
			}
		}
	}
	if err := p.delim('}'); err != nil {
		return nil, err
	}
	if !sawHead {
		return nil, p.fail("no \"head\" call tree")
	}
	for _, s := range raw {
		i, ok := p.ids[s.node]
		if !ok {
			i = -1
		}
		p.prof.Samples = append(p.prof.Samples, Sample{Size: s.size, Node: i, Ordinal: s.ordinal})
	}
	return &p.prof, nil
}

type callFrame struct {
	FunctionName string  `json:"functionName"`
	ScriptID     any     `json:"scriptId"` // a string in the protocol, a number in some writers
	URL          string  `json:"url"`
	LineNumber   float64 `json:"lineNumber"`
	ColumnNumber float64 `json:"columnNumber"`
}

// node reads one call tree node and its children.
func (p *reader) node(parent int32, depth int) error {
	if depth > maxDepth {
		return p.fail("call tree nested deeper than %d", maxDepth)
	}
	if err := p.delim('{'); err != nil {
		return err
	}
	idx := int32(len(p.prof.Nodes))
	p.prof.Nodes = append(p.prof.Nodes, Node{Parent: parent, Line: -1, Column: -1})
	var sawID bool
	for p.dec.More() {
		k, err := p.key()
		if err != nil {
			return err
		}
		switch k {
		case "callFrame":
			var cf callFrame
			if err := p.dec.Decode(&cf); err != nil {
				return p.fail("callFrame: %v", err)
			}
			n := &p.prof.Nodes[idx]
			n.Function, n.URL = p.intern(cf.FunctionName), p.intern(cf.URL)
			if cf.ScriptID != nil {
				n.ScriptID = p.intern(fmt.Sprint(cf.ScriptID))
			}
			n.Line, n.Column = position(cf.LineNumber), position(cf.ColumnNumber)
		case "selfSize":
			v, err := p.uint("selfSize", 1<<62)
			if err != nil {
				return err
			}
			p.prof.Nodes[idx].SelfSize = v
		case "id":
			v, err := p.uint("id", 1<<32-1)
			if err != nil {
				return err
			}
			id := uint32(v)
			if _, dup := p.ids[id]; dup {
				return p.fail("node id %d appears twice", id)
			}
			p.ids[id] = idx
			p.prof.Nodes[idx].ID = id
			sawID = true
		case "children":
			if err := p.delim('['); err != nil {
				return err
			}
			for p.dec.More() {
				if err := p.node(idx, depth+1); err != nil {
					return err
				}
			}
			if err := p.delim(']'); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := p.dec.Decode(&skip); err != nil {
				return p.fail("value of %q: %v", k, err)
			}
		}
	}
	if !sawID {
		return p.fail("call tree node without an \"id\"")
	}
	return p.delim('}')
}

// position turns V8's zero-based line or column into an int32, -1 for
// unknown (negative or out of range).
func position(f float64) int32 {
	if f < 0 || f > 1<<31-1 || f != float64(int32(f)) {
		return -1
	}
	return int32(f)
}

type rawSample struct {
	size, ordinal uint64
	node          uint32
}

func (p *reader) samples() ([]rawSample, error) {
	if err := p.delim('['); err != nil {
		return nil, err
	}
	var out []rawSample
	for p.dec.More() {
		if err := p.delim('{'); err != nil {
			return nil, err
		}
		var s rawSample
		var sawNode bool
		for p.dec.More() {
			k, err := p.key()
			if err != nil {
				return nil, err
			}
			switch k {
			case "size":
				s.size, err = p.uint("sample size", 1<<62)
			case "nodeId":
				var v uint64
				v, err = p.uint("sample nodeId", 1<<32-1)
				s.node, sawNode = uint32(v), true
			case "ordinal":
				s.ordinal, err = p.uint("sample ordinal", 1<<62)
			default:
				var skip json.RawMessage
				if e := p.dec.Decode(&skip); e != nil {
					err = p.fail("value of %q: %v", k, e)
				}
			}
			if err != nil {
				return nil, err
			}
		}
		if !sawNode {
			return nil, p.fail("sample without a \"nodeId\"")
		}
		if err := p.delim('}'); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, p.delim(']')
}
