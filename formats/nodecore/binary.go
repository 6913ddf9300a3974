package nodecore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Process is a core together with the node executable it came from: the
// address space, the metadata and the tagged-value helpers (Heap) that
// everything above is built on.
type Process struct {
	*Core
	// Binary is the path of the node executable (or libnode) read.
	Binary string
	// Bias is added to the binary's symbol values to get run-time
	// addresses: 0 for the official non-PIE builds, the load address of a
	// PIE executable or distro libnode.
	Bias uint64
	// Meta holds every v8dbg_*/nodedbg_* constant.
	Meta *Metadata
	// V8 is V8's version (major, minor, build, patch).
	V8 [4]int
	// NodeMajor is the Node major the V8 major shipped in (0 if unknown).
	NodeMajor int
	// Heap decodes tagged values with the metadata's layout.
	Heap *Heap

	// image is the binary's file, mapped; segs its loaded segments, read
	// where the core lacks them (gcore and the kernel leave out read-only
	// file-backed pages, such as the .rodata holding Node's built-in
	// module sources that external strings point to).
	image []byte
	segs  []imageSegment
}

// imageSegment is a PT_LOAD of the binary at its run-time address.
type imageSegment struct {
	addr, size, off uint64
}

// ReadBytes is Core.ReadBytes, falling back to the binary's file for
// addresses of its loaded segments that the core does not hold.
func (p *Process) ReadBytes(addr uint64, n int) ([]byte, error) {
	b, err := p.Core.ReadBytes(addr, n)
	if err == nil {
		return b, nil
	}
	for _, s := range p.segs {
		if addr >= s.addr && n >= 0 && addr+uint64(n) <= s.addr+s.size && addr+uint64(n) >= addr {
			o := s.off + addr - s.addr
			return p.image[o : o+uint64(n) : o+uint64(n)], nil
		}
	}
	return nil, err
}

// ReadWord is Core.ReadWord with ReadBytes's fallback.
func (p *Process) ReadWord(addr uint64) (uint64, error) {
	if w, err := p.Core.ReadWord(addr); err == nil {
		return w, nil
	}
	b, err := p.ReadBytes(addr, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// Mapped is Core.Mapped with ReadBytes's fallback, reading nothing (a
// range past a segment's file bytes would be allocated as zeros to be
// read, and a length from the heap can be anything).
func (p *Process) Mapped(addr uint64, n int) bool {
	if p.Core.Mapped(addr, n) {
		return true
	}
	for _, s := range p.segs {
		if addr >= s.addr && n >= 0 && addr+uint64(n) <= s.addr+s.size && addr+uint64(n) >= addr {
			return true
		}
	}
	return false
}

// Close unmaps the core and the binary.
func (p *Process) Close() error {
	if p.image != nil {
		syscall.Munmap(p.image)
		p.image = nil
	}
	return p.Core.Close()
}

// nodeMajors maps V8 majors to the Node release lines that shipped them.
var nodeMajors = map[int]int{10: 18, 11: 20, 12: 22, 13: 24}

// Open opens the core at corePath with the node executable at binaryPath.
// An empty binaryPath takes the executable the core's NT_FILE note names,
// when that file exists here. A binary that is not the one the process
// ran is refused: their first page or metadata values differ.
func Open(corePath, binaryPath string) (*Process, error) {
	c, err := OpenCore(corePath)
	if err != nil {
		return nil, err
	}
	p := &Process{Core: c}
	if err := p.attach(binaryPath); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// mapImage maps the binary and records its loaded segments' file bytes.
func (p *Process) mapImage(bf *os.File, ef *elf.File) error {
	st, err := bf.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return fmt.Errorf("%s: empty file", p.Binary)
	}
	img, err := syscall.Mmap(int(bf.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("%s: mapping the binary: %w", p.Binary, err)
	}
	p.image = img
	for _, pr := range ef.Progs {
		if pr.Type == elf.PT_LOAD && pr.Filesz > 0 && pr.Off+pr.Filesz <= uint64(len(img)) {
			p.segs = append(p.segs, imageSegment{addr: pr.Vaddr + p.Bias, size: pr.Filesz, off: pr.Off})
		}
	}
	return nil
}

// nodeMapping returns the NT_FILE mapping at file offset 0 of the node
// executable or libnode, nil if the core maps neither.
func (c *Core) nodeMapping() *MappedFile {
	for i := range c.Files {
		f := &c.Files[i]
		base := filepath.Base(f.Path)
		if f.FileOffset == 0 && (base == "node" || base == "nodejs" || strings.HasPrefix(base, "libnode.so")) {
			return f
		}
	}
	return nil
}

// attach reads the binary at binaryPath (or the core's) into p.
func (p *Process) attach(binaryPath string) error {
	c := p.Core
	m := c.nodeMapping()
	if binaryPath == "" {
		if m == nil {
			return fmt.Errorf("%s: not a Node.js core: it maps no node executable or libnode (pass --binary PATH if node was renamed)", c.Path)
		}
		if _, err := os.Stat(m.Path); err != nil {
			return fmt.Errorf("%s: the core's node executable %s is not here (%v): pass --binary PATH of the same node build", c.Path, m.Path, err)
		}
		binaryPath = m.Path
	}
	bf, err := os.Open(binaryPath)
	if err != nil {
		return fmt.Errorf("node binary: %w", err)
	}
	defer bf.Close()
	ef, err := elf.NewFile(bf)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", binaryPath, err)
	}
	if ef.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s: a %s binary; the core is x86-64", binaryPath, ef.Machine)
	}
	p.Binary = binaryPath
	if ef.Type == elf.ET_DYN {
		// PIE node or libnode: the mapping of file offset 0 is the
		// image's lowest PT_LOAD.
		if m == nil {
			return fmt.Errorf("%s: %s is position-independent but the core does not say where it was loaded (no NT_FILE mapping of node or libnode)", c.Path, binaryPath)
		}
		low := ^uint64(0)
		for _, pr := range ef.Progs {
			if pr.Type == elf.PT_LOAD && pr.Vaddr&^0xfff < low {
				low = pr.Vaddr &^ 0xfff
			}
		}
		p.Bias = m.Start - low
	}
	if err := p.mapImage(bf, ef); err != nil {
		return err
	}
	raw, sizes, err := p.readSymbols(ef)
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return fmt.Errorf("%s: no v8dbg_* postmortem metadata in .symtab or .dynsym: not a node binary, or one built without it", binaryPath)
	}
	if err := p.checkMatch(bf, ef, m, raw, sizes); err != nil {
		return err
	}
	ver := func(name string) int { return int(int32(raw[name])) }
	p.V8 = [4]int{ver("_ZN2v88internal7Version6major_E"), ver("_ZN2v88internal7Version6minor_E"),
		ver("_ZN2v88internal7Version6build_E"), ver("_ZN2v88internal7Version6patch_E")}
	p.NodeMajor = nodeMajors[p.V8[0]]
	p.Meta = newMetadata(filterMeta(raw))
	p.Meta.Runtime = p.RuntimeName()
	h, err := newHeap(p)
	if err != nil {
		return fmt.Errorf("%s with %s: %w", c.Path, binaryPath, err)
	}
	p.Heap = h
	return nil
}

// RuntimeName names the Node and V8 ("Node 20 (V8 11.3.244.8)").
func (p *Process) RuntimeName() string {
	v := fmt.Sprintf("V8 %d.%d.%d.%d", p.V8[0], p.V8[1], p.V8[2], p.V8[3])
	if p.NodeMajor == 0 {
		return "Node with " + v
	}
	return fmt.Sprintf("Node %d (%s)", p.NodeMajor, v)
}

// versionSymbols are V8's version globals, read like the metadata.
var versionSymbols = []string{"_ZN2v88internal7Version6major_E", "_ZN2v88internal7Version6minor_E",
	"_ZN2v88internal7Version6build_E", "_ZN2v88internal7Version6patch_E"}

func filterMeta(raw map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(raw))
	for k, v := range raw {
		if strings.HasPrefix(k, "v8dbg_") || strings.HasPrefix(k, "nodedbg_") {
			out[k] = v
		}
	}
	return out
}

// symValue is where a metadata symbol's value came from.
type symValue struct {
	fromFile int64 // the value in the binary's file (0 for .bss)
	inFile   bool  // the binary's file holds a value (not .bss)
}

// readSymbols reads every metadata and version symbol of .symtab and
// .dynsym, its value taken from the core's memory (llnode does the same:
// .bss constants are set at startup) or, where the core lacks the page,
// from the binary's file.
func (p *Process) readSymbols(ef *elf.File) (map[string]int64, map[string]symValue, error) {
	var syms []elf.Symbol
	if s, err := ef.Symbols(); err == nil {
		syms = append(syms, s...)
	}
	if s, err := ef.DynamicSymbols(); err == nil {
		syms = append(syms, s...)
	}
	want := func(n string) bool {
		if strings.HasPrefix(n, "v8dbg_") || strings.HasPrefix(n, "nodedbg_") {
			return true
		}
		for _, v := range versionSymbols {
			if n == v {
				return true
			}
		}
		return false
	}
	raw := map[string]int64{}
	file := map[string]symValue{}
	for _, s := range syms {
		if !want(s.Name) {
			continue
		}
		if _, done := raw[s.Name]; done {
			continue
		}
		size := int(s.Size)
		if size != 1 && size != 2 && size != 4 && size != 8 {
			size = 4
		}
		var fv symValue
		if int(s.Section) < len(ef.Sections) && s.Section > 0 {
			sec := ef.Sections[s.Section]
			if sec.Type != elf.SHT_NOBITS && s.Value >= sec.Addr && s.Value+uint64(size) <= sec.Addr+sec.Size {
				b := make([]byte, size)
				if _, err := sec.ReadAt(b, int64(s.Value-sec.Addr)); err == nil {
					fv = symValue{fromFile: signed(b), inFile: true}
				}
			}
		}
		file[s.Name] = fv
		if b, err := p.ReadBytes(s.Value+p.Bias, size); err == nil {
			raw[s.Name] = signed(b)
		} else {
			raw[s.Name] = fv.fromFile
		}
	}
	return raw, file, nil
}

// signed decodes a little-endian signed integer of 1, 2, 4 or 8 bytes.
func signed(b []byte) int64 {
	switch len(b) {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// errMismatch is wrapped by the refusal of a binary that is not the
// core's.
var errMismatch = errors.New("the node binary does not match the core")

// checkMatch refuses a binary that is not the one the process ran: the
// core's copy of the image's first page (ELF and program headers, build
// id), when gcore or the kernel kept it, must equal the file's, and every
// metadata constant the file holds must equal the core's copy.
func (p *Process) checkMatch(bf *os.File, ef *elf.File, m *MappedFile, raw map[string]int64, file map[string]symValue) error {
	if m != nil && p.Mapped(m.Start, 4096) {
		core, _ := p.ReadBytes(m.Start, 4096)
		head := make([]byte, 4096)
		n, _ := bf.ReadAt(head, 0)
		if !bytes.Equal(core[:n], head[:n]) {
			return fmt.Errorf("%s: %w %s: the first page of %s in the core differs from the file's (another node version or build?)", p.Path, errMismatch, p.Binary, m.Path)
		}
	}
	differ := 0
	first := ""
	for name, fv := range file {
		if fv.inFile && raw[name] != fv.fromFile {
			if differ == 0 {
				first = fmt.Sprintf("%s is %d in the binary, %d in the core", name, fv.fromFile, raw[name])
			}
			differ++
		}
	}
	if differ > 0 {
		return fmt.Errorf("%s: %w %s: %d metadata values differ (%s)", p.Path, errMismatch, p.Binary, differ, first)
	}
	return nil
}
