package hostile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"

	"github.com/heapx/heapx/formats/nodecore"
)

// Crafted Node.js cores: a real gcore of node, changed in place (cores are
// 0.5 to 1.5 GB, so a case is a list of patches applied to the file and
// taken back after, not a copy), or cut short. The ELF cases lie about
// the file (headers, segments, notes); the heap cases keep the binary
// matching and make the V8 heap lie (lengths of billions, cycles,
// pointers out of range, pages whose headers lie).

// CorePatch writes New at byte Off of a core.
type CorePatch struct {
	Off int64
	New []byte
}

// CoreCase is one crafted core: Patches applied to the real one, or the
// real one cut at Truncate bytes. Want is what the error must say, ""
// when the core must still be read (a lie the reader steps over).
type CoreCase struct {
	Name     string
	Patches  []CorePatch
	Truncate int64
	Want     string
}

// ApplyCore applies c's patches to the core at path and returns the
// patches that take them back.
func ApplyCore(path string, c CoreCase) ([]CorePatch, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var undo []CorePatch
	for _, p := range c.Patches {
		old := make([]byte, len(p.New))
		if _, err := f.ReadAt(old, p.Off); err != nil {
			return nil, err
		}
		undo = append(undo, CorePatch{Off: p.Off, New: old})
		if _, err := f.WriteAt(p.New, p.Off); err != nil {
			return nil, err
		}
	}
	// Undone in reverse, so that overlapping patches come back right.
	for i, j := 0, len(undo)-1; i < j; i, j = i+1, j-1 {
		undo[i], undo[j] = undo[j], undo[i]
	}
	return undo, f.Sync()
}

// WriteCut writes the first n bytes of the core at path to dst.
func WriteCut(path, dst string, n int64) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, n); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// elfLoad is a program header of a core: where it is in the file and what
// it says.
type elfLoad struct {
	hdr                   int64 // byte offset of the program header
	typ                   uint32
	off, vaddr, file, mem uint64
}

func elfLoads(f *os.File) ([]elfLoad, error) {
	var eh [64]byte
	if _, err := f.ReadAt(eh[:], 0); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	phoff, phent, phnum := int64(le.Uint64(eh[32:])), int64(le.Uint16(eh[54:])), int(le.Uint16(eh[56:]))
	ph := make([]byte, phent*int64(phnum))
	if _, err := f.ReadAt(ph, phoff); err != nil {
		return nil, err
	}
	var out []elfLoad
	for i := range phnum {
		p := ph[int64(i)*phent:]
		out = append(out, elfLoad{hdr: phoff + int64(i)*phent, typ: le.Uint32(p), off: le.Uint64(p[8:]), vaddr: le.Uint64(p[16:]),
			file: le.Uint64(p[32:]), mem: le.Uint64(p[40:])})
	}
	return out, nil
}

// CoreCases crafts the cases of the core at path (a gcore of Node, read
// with binary: "" takes the one the core names).
func CoreCases(path, bin string) ([]CoreCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	loads, err := elfLoads(f)
	if err != nil {
		return nil, err
	}
	var note, first, last elfLoad
	for _, l := range loads {
		switch {
		case l.typ == 4: // PT_NOTE
			note = l
		case l.typ != 1: // PT_LOAD
		case first.typ == 0:
			first = l
			fallthrough
		case l.vaddr > last.vaddr && l.vaddr < 1<<47: // the stack, not [vsyscall]
			last = l
		}
	}
	if note.typ == 0 || first.typ == 0 {
		return nil, fmt.Errorf("%s: no notes or no segments", path)
	}
	cases := []CoreCase{
		{Name: "core-cut-64", Truncate: 64, Want: "truncated core"},
		{Name: "core-cut-half", Truncate: size / 2, Want: "truncated core"},
		{Name: "core-cut-last-byte", Truncate: size - 1, Want: "truncated core"},
		{Name: "core-phnum-65535", Patches: []CorePatch{{56, []byte{0xff, 0xff}}}, Want: "bad ELF header"},
		{Name: "core-filesz-64t", Patches: []CorePatch{{first.hdr + 32, u64(1 << 46)}, {first.hdr + 40, u64(1 << 46)}}, Want: "truncated core"},
		{Name: "core-memsz-overlap", Patches: []CorePatch{{first.hdr + 40, u64(1 << 46)}}, Want: "overlap"},
		{Name: "core-memsz-stack-2^63", Patches: []CorePatch{{last.hdr + 40, u64(1 << 63)}}},
		{Name: "core-memsz-wraps", Patches: []CorePatch{{last.hdr + 40, u64(-last.vaddr + 4096)}}},
		{Name: "core-note-namesz", Patches: []CorePatch{{int64(note.off), u32(0xffffffff)}}, Want: "pass the end of the notes"},
	}
	if c, err := ntFileCount(f, note); err == nil {
		cases = append(cases, c)
	}
	hc, err := heapCases(path, bin)
	if err != nil {
		return nil, err
	}
	cases = append(cases, hc...)
	return append(cases, CoreFlips(size, 8, 1)...), nil
}

// ntFileCount is a case whose NT_FILE note declares 2^40 mappings.
func ntFileCount(f *os.File, note elfLoad) (CoreCase, error) {
	b := make([]byte, note.file)
	if _, err := f.ReadAt(b, int64(note.off)); err != nil {
		return CoreCase{}, err
	}
	le := binary.LittleEndian
	for pos := 0; pos+12 <= len(b); {
		namesz, descsz, typ := int(le.Uint32(b[pos:])), int(le.Uint32(b[pos+4:])), le.Uint32(b[pos+8:])
		desc := pos + 12 + (namesz+3)&^3
		if typ == 0x46494c45 {
			return CoreCase{Name: "core-ntfile-2^40", Patches: []CorePatch{{int64(note.off) + int64(desc), u64(1 << 40)}}, Want: "do not fit"}, nil
		}
		pos = desc + (descsz+3)&^3
	}
	return CoreCase{}, fmt.Errorf("no NT_FILE note")
}

// CoreFlips are n cases of one random byte each, anywhere in a core of
// size bytes: most land in memory no reader looks at; the reader must
// read the core or refuse it, never fail otherwise.
func CoreFlips(size int64, n int, seed int64) []CoreCase {
	rng := rand.New(rand.NewSource(seed))
	var out []CoreCase
	for i := range n {
		off := rng.Int63n(size)
		out = append(out, CoreCase{Name: fmt.Sprintf("core-flip-%d", i), Patches: []CorePatch{{off, []byte{byte(rng.Intn(255) + 1)}}}, Want: "?"})
	}
	return out
}

// heapCases make the V8 heap of a core lie, with the binary matching.
func heapCases(path, bin string) ([]CoreCase, error) {
	p, err := nodecore.Open(path, bin)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	h := p.Heap
	pages := h.Pages()
	objs, err := h.Scan(pages)
	if err != nil {
		return nil, err
	}
	// fileOff is the byte of the core holding process address a.
	fileOff := func(a uint64) (int64, bool) {
		s := p.Segment(a)
		if s == nil || a-s.Addr >= s.FileSize {
			return 0, false
		}
		return int64(s.Offset + a - s.Addr), true
	}
	smi := func(v int64) []byte { return u64(uint64(v) << 32) }
	of := func(typ string) []int {
		var out []int
		for i := range objs.Len() {
			if h.TypeName(objs.Type[i]) == typ {
				out = append(out, i)
			}
		}
		return out
	}
	patch := func(a uint64, b []byte) []CorePatch {
		if off, ok := fileOff(a); ok {
			return []CorePatch{{off, b}}
		}
		return nil
	}
	var cases []CoreCase
	// The largest FixedArray says it holds 2^31-1 elements.
	arrays := of("FIXED_ARRAY_TYPE")
	sort.Slice(arrays, func(i, j int) bool { return objs.Size[arrays[i]] > objs.Size[arrays[j]] })
	var fa []CorePatch
	for _, i := range arrays[:min(len(arrays), 100)] {
		fa = append(fa, patch(objs.Addr[i]+8, smi(1<<31-1))...)
	}
	cases = append(cases, CoreCase{Name: "core-array-lengths-2^31", Patches: fa})
	// Strings say they are 2^31-1 characters long.
	lenOff, _ := p.Meta.Field("String", "length")
	var sl []CorePatch
	for i := range objs.Len() {
		if h.StringRepresentation(objs.Type[i]) == "seq" && len(sl) < 1000 {
			sl = append(sl, patch(objs.Addr[i]+uint64(lenOff), u32(1<<31-1))...)
		}
	}
	cases = append(cases, CoreCase{Name: "core-string-lengths-2^31", Patches: sl})
	// Cons strings are their own first part.
	firstOff, _ := p.Meta.Field("ConsString", "first")
	var cc []CorePatch
	for i := range objs.Len() {
		if h.StringRepresentation(objs.Type[i]) == "cons" {
			cc = append(cc, patch(objs.Addr[i]+uint64(firstOff), u64(h.Tag(objs.Addr[i])))...)
		}
	}
	cases = append(cases, CoreCase{Name: "core-cons-cycles", Patches: cc})
	// Maps are their own constructor (a back-pointer cycle) and their own
	// prototype.
	ctorOff, _ := p.Meta.Field("Map", "constructor_or_back_pointer")
	protoOff, _ := p.Meta.Field("Map", "prototype")
	var mc []CorePatch
	for _, i := range of("MAP_TYPE") {
		a := objs.Addr[i]
		mc = append(mc, patch(a+uint64(ctorOff), u64(h.Tag(a)))...)
		mc = append(mc, patch(a+uint64(protoOff), u64(h.Tag(a)))...)
	}
	cases = append(cases, CoreCase{Name: "core-map-cycles", Patches: mc})
	// Every tagged word of the 1,000 largest objects points outside the
	// core.
	bySize := make([]int, objs.Len())
	for i := range bySize {
		bySize[i] = i
	}
	sort.Slice(bySize, func(i, j int) bool { return objs.Size[bySize[i]] > objs.Size[bySize[j]] })
	var wild []CorePatch
	for _, i := range bySize[:min(1000, len(bySize))] {
		for w := uint64(8); w < uint64(objs.Size[i]) && w < 4096; w += 8 {
			wild = append(wild, patch(objs.Addr[i]+w, u64(0x7ff0_dead_0001))...)
		}
	}
	cases = append(cases, CoreCase{Name: "core-pointers-out-of-range", Patches: wild})
	// Objects of the first pages are their own maps.
	var self []CorePatch
	for i := range objs.Len() {
		if objs.Addr[i] < pages[min(4, len(pages)-1)].AreaEnd {
			self = append(self, patch(objs.Addr[i], u64(h.Tag(objs.Addr[i])))...)
		}
	}
	cases = append(cases, CoreCase{Name: "core-objects-own-maps", Patches: self})
	// Page headers whose area runs 64 GB past their start, and headers
	// zeroed: no heap pages at all.
	// (area_end is word 4 of V8 11's header, 5 of V8 12's; V8 13 keeps
	// it out of line.)
	var area, zero []CorePatch
	for _, pg := range pages {
		if p.V8[0] <= 12 {
			area = append(area, patch(pg.Addr+uint64(8*(p.V8[0]-7)), u64(pg.Addr+1<<36-1))...)
		}
		zero = append(zero, patch(pg.Addr, make([]byte, 48))...)
	}
	if area != nil {
		cases = append(cases, CoreCase{Name: "core-page-areas-64g", Patches: area, Want: "no V8 heap pages"})
	}
	cases = append(cases, CoreCase{Name: "core-page-headers-zeroed", Patches: zero, Want: "no V8 heap pages"})
	return cases, nil
}
