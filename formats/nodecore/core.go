// Package nodecore reads a Node.js process's heap from an ELF core dump
// (x86-64 Linux, gcore or a kernel core) with the process's own `node`
// executable, into heapx's graph model, so every analysis, the exchange
// format and DevTools (via convert) work on a postmortem core as on a heap
// snapshot.
//
// The layers, lowest first:
//
//   - Core (core.go): the ELF core, memory-mapped and never read whole,
//     its PT_LOAD segments as an address space (ReadWord, ReadBytes), its
//     threads (NT_PRSTATUS registers) and mapped files (NT_FILE).
//   - Binary and Process (binary.go): the node executable's v8dbg_* and
//     nodedbg_* symbols, matched against the core (a mismatch is refused),
//     with the load bias of a PIE build.
//   - Metadata (metadata.go): V8's postmortem constants by name, with
//     class field lookups that ignore V8's changing type suffixes.
//   - Heap (heap.go): tagged values, maps, instance types and strings.
//   - the heap walk and graph builder (objects.go, refs.go, read.go).
//
// Everything V8-specific comes from the binary's metadata; what V8 does not
// describe there (page headers, some layouts) is derived and documented in
// docs/nodecore.md.
package nodecore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"
	"syscall"
)

// Segment is one PT_LOAD of a core: memory [Addr, Addr+MemSize) of the
// process, of which the first FileSize bytes are in the core at Offset and
// the rest reads as zeros (gdb and the kernel leave untouched pages out).
type Segment struct {
	Addr, MemSize    uint64
	Offset, FileSize uint64
	Writable         bool
	Executable       bool
}

// End is the first address past the segment.
func (s *Segment) End() uint64 { return s.Addr + s.MemSize }

// Thread is one thread of the process, from its NT_PRSTATUS note.
type Thread struct {
	// TID is the kernel's thread id (pr_pid).
	TID int32
	// Regs are the x86-64 general registers in the kernel's user_regs_struct
	// order (RegRBP, RegRIP, RegRSP... index them).
	Regs [27]uint64
}

// Indexes into Thread.Regs (the kernel's struct user_regs_struct).
const (
	RegRBP = 4
	RegRIP = 16
	RegRSP = 19
)

// RIP, RSP and RBP are the thread's instruction, stack and frame pointers
// when it stopped.
func (t *Thread) RIP() uint64 { return t.Regs[RegRIP] }

// RSP is the thread's stack pointer.
func (t *Thread) RSP() uint64 { return t.Regs[RegRSP] }

// RBP is the thread's frame pointer (official Node builds keep frame
// pointers, so a frame walk follows it).
func (t *Thread) RBP() uint64 { return t.Regs[RegRBP] }

// MappedFile is one file mapping from the NT_FILE note: [Start, End) of
// the address space maps the file from byte FileOffset.
type MappedFile struct {
	Start, End, FileOffset uint64
	Path                   string
}

// Core is an opened ELF core file. Its bytes are memory-mapped read-only:
// reading a 1 GB core touches only the pages used. A Core is safe for
// concurrent reads; Close unmaps it.
type Core struct {
	// Path is the core's file name, for messages.
	Path    string
	data    []byte
	segs    []Segment // sorted by Addr, non-overlapping
	Threads []Thread
	Files   []MappedFile
	mapped  bool         // data is a mapping Close must unmap
	last    atomic.Int64 // segment index of the last lookup, a hint
}

// ErrUnmapped is wrapped by every read of an address no segment covers.
var ErrUnmapped = errors.New("address not in the core")

// UnmappedError is a read outside the core's memory.
type UnmappedError struct {
	Addr uint64
	Len  int
}

func (e *UnmappedError) Error() string {
	return fmt.Sprintf("address 0x%x (%d bytes) is not in the core's memory", e.Addr, e.Len)
}

// Unwrap makes errors.Is(err, ErrUnmapped) true.
func (e *UnmappedError) Unwrap() error { return ErrUnmapped }

// OpenCore maps the core at path and parses its program headers and notes.
// A file that is not an ELF core, or one of another architecture, or one
// cut short (a segment or note past the end of the file) is refused with an
// error naming the file and what was wrong.
func OpenCore(path string) (*Core, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < 64 {
		return nil, fmt.Errorf("%s: %d bytes is too short for an ELF core", path, st.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mapping the core: %w", path, err)
	}
	c, err := parseCore(path, data)
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	c.mapped = true
	return c, nil
}

// parseCore reads the headers and notes of a core held in data (a mapping
// or, in tests and fuzzing, a plain slice).
func parseCore(path string, data []byte) (*Core, error) {
	c := &Core{Path: path, data: data}
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return nil, fmt.Errorf("%s: not an ELF file (no \\x7fELF magic at byte 0)", path)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		if end, what := headersEnd(data); end > uint64(len(data)) {
			return nil, fmt.Errorf("%s: truncated core: its %s end at byte %d, the file has %d", path, what, end, len(data))
		}
		return nil, fmt.Errorf("%s: bad ELF header: %w", path, err)
	}
	if ef.Type != elf.ET_CORE {
		return nil, fmt.Errorf("%s: an ELF %s, not a core dump (ET_CORE)", path, ef.Type)
	}
	if ef.Class != elf.ELFCLASS64 || ef.Machine != elf.EM_X86_64 || ef.Data != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("%s: a core of %s %s; heapx reads x86-64 Linux cores only", path, ef.Class, ef.Machine)
	}
	size := uint64(len(data))
	for i, p := range ef.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if p.Filesz > p.Memsz {
				return nil, fmt.Errorf("%s: program header %d: file size %d exceeds memory size %d", path, i, p.Filesz, p.Memsz)
			}
			if p.Filesz > 0 && (p.Off > size || p.Filesz > size-p.Off) {
				return nil, fmt.Errorf("%s: truncated core: segment at 0x%x needs bytes %d..%d, the file has %d", path, p.Vaddr, p.Off, p.Off+p.Filesz, size)
			}
			if p.Memsz == 0 {
				continue
			}
			c.segs = append(c.segs, Segment{Addr: p.Vaddr, MemSize: p.Memsz, Offset: p.Off, FileSize: p.Filesz,
				Writable: p.Flags&elf.PF_W != 0, Executable: p.Flags&elf.PF_X != 0})
		case elf.PT_NOTE:
			if p.Off > size || p.Filesz > size-p.Off {
				return nil, fmt.Errorf("%s: truncated core: notes at byte %d (%d bytes) pass the end of the file (%d bytes)", path, p.Off, p.Filesz, size)
			}
			if err := c.parseNotes(data[p.Off:p.Off+p.Filesz], p.Off); err != nil {
				return nil, err
			}
		}
	}
	if len(c.segs) == 0 {
		return nil, fmt.Errorf("%s: the core has no memory segments (PT_LOAD)", path)
	}
	sort.Slice(c.segs, func(i, j int) bool { return c.segs[i].Addr < c.segs[j].Addr })
	for i := 1; i < len(c.segs); i++ {
		if c.segs[i].Addr < c.segs[i-1].End() {
			return nil, fmt.Errorf("%s: segments at 0x%x and 0x%x overlap", path, c.segs[i-1].Addr, c.segs[i].Addr)
		}
	}
	return c, nil
}

// headersEnd returns where a 64-bit little-endian ELF file's program or
// section header table ends, whichever is later, to tell a file cut short
// from a malformed one.
func headersEnd(data []byte) (uint64, string) {
	if len(data) < 64 {
		return 64, "ELF header"
	}
	le := binary.LittleEndian
	ph := le.Uint64(data[32:]) + uint64(le.Uint16(data[56:]))*uint64(le.Uint16(data[54:]))
	sh := le.Uint64(data[40:]) + uint64(le.Uint16(data[60:]))*uint64(le.Uint16(data[58:]))
	if sh > ph {
		return sh, "section headers"
	}
	return ph, "program headers"
}

// Note types the reader uses (elf.h).
const (
	ntPRStatus = 1
	ntFile     = 0x46494c45
)

// parseNotes reads the NT_PRSTATUS and NT_FILE notes of one PT_NOTE; off is
// the notes' byte offset in the core, for messages.
func (c *Core) parseNotes(b []byte, off uint64) error {
	le := binary.LittleEndian
	pos := 0
	for pos+12 <= len(b) {
		namesz, descsz, typ := le.Uint32(b[pos:]), le.Uint32(b[pos+4:]), le.Uint32(b[pos+8:])
		start := pos
		pos += 12
		nameEnd := uint64(pos) + (uint64(namesz)+3)&^3
		descEnd := nameEnd + (uint64(descsz)+3)&^3
		if descEnd > uint64(len(b)) {
			return fmt.Errorf("%s: note at byte %d: %d name and %d data bytes pass the end of the notes", c.Path, off+uint64(start), namesz, descsz)
		}
		desc := b[nameEnd : nameEnd+uint64(descsz)]
		pos = int(descEnd)
		switch typ {
		case ntPRStatus:
			// struct elf_prstatus on x86-64: pr_pid at 32, pr_reg (27
			// words) at 112.
			if len(desc) < 112+27*8 {
				return fmt.Errorf("%s: NT_PRSTATUS note at byte %d has %d bytes, want %d", c.Path, off+uint64(start), len(desc), 112+27*8)
			}
			var t Thread
			t.TID = int32(le.Uint32(desc[32:]))
			for i := range t.Regs {
				t.Regs[i] = le.Uint64(desc[112+8*i:])
			}
			c.Threads = append(c.Threads, t)
		case ntFile:
			files, err := parseFileNote(desc)
			if err != nil {
				return fmt.Errorf("%s: NT_FILE note at byte %d: %w", c.Path, off+uint64(start), err)
			}
			c.Files = append(c.Files, files...)
		}
	}
	return nil
}

// parseFileNote decodes NT_FILE: count, page size, count (start, end,
// page offset) triples, then count NUL-terminated paths.
func parseFileNote(d []byte) ([]MappedFile, error) {
	le := binary.LittleEndian
	if len(d) < 16 {
		return nil, fmt.Errorf("%d bytes, too short for its header", len(d))
	}
	n, page := le.Uint64(d), le.Uint64(d[8:])
	if n > uint64(len(d)-16)/24 {
		return nil, fmt.Errorf("%d mappings do not fit in %d bytes", n, len(d))
	}
	names := d[16+24*n:]
	files := make([]MappedFile, n)
	for i := range files {
		r := d[16+24*i:]
		files[i] = MappedFile{Start: le.Uint64(r), End: le.Uint64(r[8:]), FileOffset: le.Uint64(r[16:]) * page}
		end := bytes.IndexByte(names, 0)
		if end < 0 {
			return nil, fmt.Errorf("path %d of %d is not NUL-terminated", i+1, n)
		}
		files[i].Path, names = string(names[:end]), names[end+1:]
	}
	return files, nil
}

// Segments returns the core's memory segments sorted by address.
func (c *Core) Segments() []Segment { return c.segs }

// Segment returns the segment holding addr, or nil.
func (c *Core) Segment(addr uint64) *Segment {
	if h := int(c.last.Load()); h < len(c.segs) && addr >= c.segs[h].Addr && addr < c.segs[h].End() {
		return &c.segs[h]
	}
	i := sort.Search(len(c.segs), func(i int) bool { return c.segs[i].End() > addr })
	if i == len(c.segs) || addr < c.segs[i].Addr {
		return nil
	}
	c.last.Store(int64(i))
	return &c.segs[i]
}

// Mapped reports whether [addr, addr+n) lies in one segment.
func (c *Core) Mapped(addr uint64, n int) bool {
	s := c.Segment(addr)
	return s != nil && addr+uint64(n) <= s.End() && addr+uint64(n) >= addr
}

// ReadBytes returns the n bytes of process memory at addr. The slice
// aliases the mapping (do not modify it); bytes past a segment's file
// size read as zeros. A range not inside one segment is an
// *UnmappedError.
func (c *Core) ReadBytes(addr uint64, n int) ([]byte, error) {
	s := c.Segment(addr)
	if s == nil || n < 0 || addr+uint64(n) > s.End() || addr+uint64(n) < addr {
		return nil, &UnmappedError{Addr: addr, Len: n}
	}
	rel := addr - s.Addr
	if rel+uint64(n) <= s.FileSize {
		return c.data[s.Offset+rel : s.Offset+rel+uint64(n) : s.Offset+rel+uint64(n)], nil
	}
	out := make([]byte, n)
	if rel < s.FileSize {
		copy(out, c.data[s.Offset+rel:s.Offset+s.FileSize])
	}
	return out, nil
}

// ReadWord returns the little-endian 64-bit word at addr.
func (c *Core) ReadWord(addr uint64) (uint64, error) {
	s := c.Segment(addr)
	if s == nil || addr+8 > s.End() {
		return 0, &UnmappedError{Addr: addr, Len: 8}
	}
	rel := addr - s.Addr
	if rel+8 <= s.FileSize {
		return binary.LittleEndian.Uint64(c.data[s.Offset+rel:]), nil
	}
	b, err := c.ReadBytes(addr, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// Release tells the kernel the process memory at [addr, addr+n) will not
// be read again soon: its pages of the mapped core leave the resident set
// (they stay in the page cache). A scan of a whole core calls it as it
// goes, so reading a 1 GB core does not keep 1 GB resident.
func (c *Core) Release(addr uint64, n int) {
	s := c.Segment(addr)
	if !c.mapped || s == nil || n <= 0 {
		return
	}
	end := min(addr+uint64(n), s.Addr+s.FileSize)
	if end <= addr {
		return
	}
	lo := (s.Offset + addr - s.Addr + 4095) &^ 4095
	hi := (s.Offset + end - s.Addr) &^ 4095
	if hi > lo {
		syscall.Madvise(c.data[lo:hi], syscall.MADV_DONTNEED)
	}
}

// Close unmaps the core.
func (c *Core) Close() error {
	if c.data == nil || !c.mapped {
		c.data = nil
		return nil
	}
	err := syscall.Munmap(c.data)
	c.data = nil
	return err
}
