package memtrace

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
)

// Reader decodes a trace front to back. Make one with NewReader.
type Reader struct {
	r    *bufio.Reader
	name string
	off  int64 // bytes consumed so far
	rec  int64 // offset of the record being decoded

	clock   uint64
	strings []string // id -> text; strings[0] is ""
	scripts []script // sorted by base: the shim allocates iids upward
	names   []string // FREE_VARS buffer, reused
	buf     []byte   // inline strings and STRING texts
	ended   bool
	version byte
	cur     Kind // kind of the record being decoded, for messages
	last    int  // index into scripts of the last position lookup
}

// script is one SCRIPT record's position table.
type script struct {
	id, base uint64
	file     string
	lines    []uint32
	cols     []uint32
}

// NewReader checks the trace's magic and version and returns a Reader of
// its records. name (the file) starts every error message.
func NewReader(r io.Reader, name string) (*Reader, error) {
	t := &Reader{r: bufio.NewReaderSize(r, 64<<10), name: name, strings: []string{""}}
	var head [5]byte
	n, err := io.ReadFull(t.r, head[:])
	t.off = int64(n)
	if err != nil || string(head[:4]) != Magic {
		return nil, fmt.Errorf("%s: not a heapx memory trace (it does not begin with the bytes 89 48 58 54, \"\\x89HXT\")", name)
	}
	if head[4] < 1 || head[4] > Version {
		return nil, fmt.Errorf("%s: byte 4: memory trace version %d; this heapx reads versions 1 to %d", name, head[4], Version)
	}
	t.version = head[4]
	return t, nil
}

// Time is the clock: the time of the last program event read.
func (t *Reader) Time() uint64 { return t.clock }

// Next decodes the next record (STRING records are taken in and skipped).
// After the END record it returns io.EOF. Input that ends without END
// gives an error saying the trace is truncated, after every whole record
// before it; any malformed record gives an error naming its byte offset.
func (t *Reader) Next() (Event, error) {
	for {
		if t.ended {
			if _, err := t.r.ReadByte(); err == nil {
				return Event{}, t.errorf(t.off, "data after the END record")
			}
			return Event{}, io.EOF
		}
		t.rec = t.off
		b, err := t.r.ReadByte()
		if err == io.EOF {
			return Event{}, fmt.Errorf("%s: byte %d: the trace is truncated: it ends without an END record (the program or heapx was killed before heapx finished the file)", t.name, t.off)
		}
		if err != nil {
			return Event{}, fmt.Errorf("%s: byte %d: %w", t.name, t.off, err)
		}
		t.off++
		k := Kind(b)
		if !k.knownIn(t.version) {
			return Event{}, t.errorf(t.rec, "unknown record kind 0x%02x in a version %d trace", b, t.version)
		}
		if k == StringDef {
			if err := t.readString(); err != nil {
				return Event{}, err
			}
			continue
		}
		if k.IsEvent() {
			t.clock++
		}
		ev := Event{Kind: k, Time: t.clock, Offset: t.rec}
		if err := t.decode(&ev); err != nil {
			return Event{}, err
		}
		return ev, nil
	}
}

// errorf is an error at byte offset off of the trace.
func (t *Reader) errorf(off int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s", t.name, off, fmt.Sprintf(format, args...))
}

// uvarint reads one unsigned LEB128 field, named for the error.
func (t *Reader) uvarint(field string) (uint64, error) {
	var x uint64
	var s uint
	start := t.off
	for i := 0; ; i++ {
		b, err := t.r.ReadByte()
		if err != nil {
			return 0, t.truncated(start, field)
		}
		t.off++
		if i == 9 && b > 1 {
			return 0, t.errorf(start, "%s record at byte %d: field %s: varint overflows 64 bits", t.cur, t.rec, field)
		}
		if b < 0x80 {
			return x | uint64(b)<<s, nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
}

func (t *Reader) truncated(at int64, field string) error {
	return t.errorf(at, "%s record at byte %d: the trace ends inside field %s (truncated)", t.cur, t.rec, field)
}

// varint reads a zig-zag signed field.
func (t *Reader) varint(field string) (int64, error) {
	u, err := t.uvarint(field)
	return int64(u>>1) ^ -int64(u&1), err
}

// str reads an inline string field (length, bytes).
func (t *Reader) str(field string) (string, error) {
	b, err := t.bytes(field)
	return string(b), err
}

func (t *Reader) bytes(field string) ([]byte, error) {
	start := t.off
	n, err := t.uvarint(field)
	if err != nil {
		return nil, err
	}
	if n > 1<<26 {
		return nil, t.errorf(start, "%s record at byte %d: field %s: a string of %d bytes (the limit is 64 MiB)", t.cur, t.rec, field, n)
	}
	// The buffer grows with the bytes that come, a megabyte at a time,
	// so a length the rest of the file does not hold costs nothing.
	t.buf = t.buf[:0]
	for rest := n; rest > 0; {
		k := min(rest, 1<<20)
		t.buf = slices.Grow(t.buf, int(k))
		m, err := io.ReadFull(t.r, t.buf[len(t.buf):len(t.buf)+int(k)])
		t.buf = t.buf[:len(t.buf)+m]
		t.off += int64(m)
		if err != nil {
			return nil, t.truncated(start, field)
		}
		rest -= k
	}
	return t.buf, nil
}

// sid reads a string id field and resolves it.
func (t *Reader) sid(field string) (string, error) {
	start := t.off
	id, err := t.uvarint(field)
	if err != nil {
		return "", err
	}
	if id >= uint64(len(t.strings)) {
		return "", t.errorf(start, "%s record at byte %d: field %s: string id %d is not defined (%d strings so far)", t.cur, t.rec, field, id, len(t.strings)-1)
	}
	return t.strings[id], nil
}

func (t *Reader) readString() error {
	t.cur = StringDef
	start := t.off
	id, err := t.uvarint("id")
	if err != nil {
		return err
	}
	if id != uint64(len(t.strings)) {
		return t.errorf(start, "STRING record at byte %d: defines string id %d where %d was expected (ids are dense, from 1)", t.rec, id, len(t.strings))
	}
	s, err := t.str("text")
	if err != nil {
		return err
	}
	t.strings = append(t.strings, s)
	return nil
}

// iid reads an instruction id field and resolves it to ev.Pos.
func (t *Reader) iid(ev *Event) error {
	start := t.off
	at, err := t.uvarint("at")
	if err != nil {
		return err
	}
	ev.At = at
	if at == 0 {
		return nil
	}
	p, ok := t.position(at)
	if !ok {
		return t.errorf(start, "%s record at byte %d: iid %d is not defined by a SCRIPT record", t.cur, t.rec, at)
	}
	ev.Pos = p
	return nil
}

// position resolves an iid through the script tables.
func (t *Reader) position(at uint64) (Pos, bool) {
	i := t.last
	if i >= len(t.scripts) || at <= t.scripts[i].base || at > t.scripts[i].base+uint64(len(t.scripts[i].lines)) {
		i = sort.Search(len(t.scripts), func(j int) bool { return t.scripts[j].base >= at }) - 1
		if i < 0 || at > t.scripts[i].base+uint64(len(t.scripts[i].lines)) {
			return Pos{}, false
		}
		t.last = i
	}
	s := &t.scripts[i]
	j := at - s.base - 1
	return Pos{File: s.file, Line: int(s.lines[j]), Column: int(s.cols[j])}, true
}

// Position resolves an iid to its place in the source, as Event.Pos does;
// ok is false for an iid no SCRIPT record read so far defines.
func (t *Reader) Position(iid uint64) (p Pos, ok bool) { return t.position(iid) }

// key decodes a PUTFIELD property key (p) or, with collection set, a
// COLL_* key (k).
func (t *Reader) key(ev *Event, collection bool) error {
	start := t.off
	u, err := t.uvarint("key")
	if err != nil {
		return err
	}
	switch {
	case collection && u&1 == 0:
		ev.Key = Key{Kind: KeyObject, N: u >> 1}
		return nil
	case !collection && u&1 == 1:
		ev.Key = Key{Kind: KeyIndex, N: u >> 1}
		return nil
	}
	id := u >> 1
	if id >= uint64(len(t.strings)) {
		return t.errorf(start, "%s record at byte %d: field key: string id %d is not defined", t.cur, t.rec, id)
	}
	ev.Key = Key{Kind: KeyName, Name: t.strings[id]}
	return nil
}

// decode reads the fields of ev.Kind's record.
func (t *Reader) decode(ev *Event) (err error) {
	t.cur = ev.Kind
	u := func(field string, dst *uint64) {
		if err == nil {
			*dst, err = t.uvarint(field)
		}
	}
	iid := func() {
		if err == nil {
			err = t.iid(ev)
		}
	}
	name := func(field string, dst *string) {
		if err == nil {
			*dst, err = t.sid(field)
		}
	}
	switch ev.Kind {
	case ScriptDef:
		return t.readScript(ev)
	case FreeVars:
		iid()
		var n uint64
		u("n", &n)
		if err != nil {
			return err
		}
		ev.AnyVars = n == 0
		t.names = t.names[:0]
		for i := uint64(1); i < n && err == nil; i++ {
			var s string
			name("name", &s)
			t.names = append(t.names, s)
		}
		ev.Names = t.names
	case LastUse:
		u("obj", &ev.Obj)
		u("time", &ev.UseTime)
		iid()
		if err == nil && ev.UseTime > t.clock {
			return t.errorf(ev.Offset, "LAST_USE record: use at time %d, after the clock (%d)", ev.UseTime, t.clock)
		}
	case EndLastUse:
		u("upto", &ev.UseTime)
	case Unseen:
		iid()
		u("what", &ev.How)
		if err == nil {
			ev.Text, err = t.str("detail")
		}
	case Exit:
		if err == nil {
			ev.Code, err = t.varint("code")
		}
		u("how", &ev.How)
		if err == nil {
			ev.Text, err = t.str("detail")
		}
	case Idle:
		u("ms", &ev.Millis)
	case Signal:
		if err == nil {
			ev.Text, err = t.str("name")
		}
	case End:
		if err == nil {
			ev.Code, err = t.varint("code")
		}
		u("signal", &ev.Signal)
		u("flags", &ev.Flags)
		t.ended = err == nil
	case Declare, Write:
		iid()
		u("ctx", &ev.Ctx)
		name("name", &ev.Name)
		u("value", &ev.Value)
	case CreateObj:
		iid()
		u("obj", &ev.Obj)
		var k uint64
		u("kind", &k)
		ev.ObjectKind = ObjectKind(k)
	case CreateFun:
		iid()
		u("obj", &ev.Obj)
		u("ctx", &ev.Ctx)
		u("proto", &ev.Proto)
	case PutField:
		iid()
		u("base", &ev.Obj)
		if err == nil {
			err = t.key(ev, false)
		}
		u("value", &ev.Value)
	case FunctionEnter:
		iid()
		u("ctx", &ev.Ctx)
		u("parent", &ev.Parent)
		u("fn", &ev.Obj)
	case FunctionExit, ScriptExit:
		iid()
		u("ctx", &ev.Ctx)
		u("how", &ev.How)
	case Return:
		iid()
		u("ctx", &ev.Ctx)
		u("value", &ev.Value)
	case Call:
		iid()
		u("fn", &ev.Obj)
	case Suspend, Resume:
		iid()
		u("ctx", &ev.Ctx)
	case TopLevelFlush:
		iid()
	case UpdateIID:
		u("obj", &ev.Obj)
		iid()
	case ScriptEnter:
		iid()
		u("script", &ev.Script)
		u("ctx", &ev.Ctx)
		if err == nil {
			ev.File, err = t.scriptFile(ev.Script)
		}
	case CollSet:
		iid()
		u("coll", &ev.Obj)
		if err == nil {
			err = t.key(ev, true)
		}
		u("value", &ev.Value)
	case CollDelete:
		iid()
		u("coll", &ev.Obj)
		if err == nil {
			err = t.key(ev, true)
		}
	case CollClear:
		iid()
		u("coll", &ev.Obj)
	}
	return err
}

// scriptFile is the file of a script number a SCRIPT record defined.
func (t *Reader) scriptFile(id uint64) (string, error) {
	for i := len(t.scripts) - 1; i >= 0; i-- {
		if t.scripts[i].id == id {
			return t.scripts[i].file, nil
		}
	}
	return "", t.errorf(t.rec, "SCRIPT_ENTER record: script %d is not defined by a SCRIPT record", id)
}

// readScript decodes a SCRIPT record into ev and keeps its positions.
func (t *Reader) readScript(ev *Event) error {
	var err error
	if ev.Script, err = t.uvarint("script"); err != nil {
		return err
	}
	if ev.File, err = t.sid("file"); err != nil {
		return err
	}
	k, err := t.uvarint("kind")
	if err != nil {
		return err
	}
	ev.ScriptKind = ScriptKind(k)
	if ev.Base, err = t.uvarint("base"); err != nil {
		return err
	}
	start := t.off
	if ev.N, err = t.uvarint("n"); err != nil {
		return err
	}
	if n := len(t.scripts); n > 0 && ev.Base < t.scripts[n-1].base+uint64(len(t.scripts[n-1].lines)) {
		return t.errorf(start, "SCRIPT record at byte %d: iids %d.. overlap the previous script's (which end at %d)", t.rec, ev.Base+1, t.scripts[n-1].base+uint64(len(t.scripts[n-1].lines)))
	}
	if ev.N > 1<<28 || ev.Base+ev.N < ev.Base {
		return t.errorf(start, "SCRIPT record at byte %d: %d iids from %d", t.rec, ev.N, ev.Base)
	}
	s := script{id: ev.Script, base: ev.Base, file: ev.File}
	line := int64(1)
	for i := uint64(0); i < ev.N; i++ {
		d, err := t.varint("line")
		if err != nil {
			return err
		}
		line += d
		c, err := t.uvarint("column")
		if err != nil {
			return err
		}
		if line < 1 || line > 1<<31 || c < 1 || c > 1<<31 {
			return t.errorf(t.off, "SCRIPT record at byte %d: iid %d at line %d column %d (both are 1-based)", t.rec, ev.Base+i+1, line, c)
		}
		s.lines = append(s.lines, uint32(line))
		s.cols = append(s.cols, uint32(c))
	}
	t.scripts = append(t.scripts, s)
	return nil
}
