package nodecore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/internal/testfixtures"
)

// fakeCore builds a small ELF core: one PT_NOTE with an NT_PRSTATUS of
// thread tid (rip 0x1234) and an NT_FILE mapping files, then one PT_LOAD
// of 4 KB at 0x10000 whose first 2 KB are in the file (the rest reads as
// zeros).
func fakeCore(machine elf.Machine, tid int32, files []MappedFile) []byte {
	le := binary.LittleEndian
	note := func(typ uint32, desc []byte) []byte {
		var b bytes.Buffer
		name := []byte("CORE\x00\x00\x00\x00")
		binary.Write(&b, le, [3]uint32{5, uint32(len(desc)), typ})
		b.Write(name)
		b.Write(desc)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		return b.Bytes()
	}
	prs := make([]byte, 336)
	le.PutUint32(prs[32:], uint32(tid))
	le.PutUint64(prs[112+8*RegRIP:], 0x1234)
	var fn bytes.Buffer
	binary.Write(&fn, le, [2]uint64{uint64(len(files)), 4096})
	for _, f := range files {
		binary.Write(&fn, le, [3]uint64{f.Start, f.End, f.FileOffset / 4096})
	}
	for _, f := range files {
		fn.WriteString(f.Path + "\x00")
	}
	notes := append(note(ntPRStatus, prs), note(ntFile, fn.Bytes())...)
	const ehsize, phsize = 64, 56
	noteOff := uint64(ehsize + 2*phsize)
	loadOff := (noteOff + uint64(len(notes)) + 4095) &^ 4095
	out := make([]byte, loadOff+2048)
	copy(out, elf.ELFMAG)
	out[4], out[5], out[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	le.PutUint16(out[16:], uint16(elf.ET_CORE))
	le.PutUint16(out[18:], uint16(machine))
	le.PutUint32(out[20:], 1)
	le.PutUint64(out[32:], ehsize)
	le.PutUint16(out[52:], ehsize)
	le.PutUint16(out[54:], phsize)
	le.PutUint16(out[56:], 2)
	ph := func(i int, typ elf.ProgType, off, vaddr, filesz, memsz uint64) {
		p := out[ehsize+phsize*i:]
		le.PutUint32(p, uint32(typ))
		le.PutUint32(p[4:], uint32(elf.PF_R|elf.PF_W))
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], vaddr)
		le.PutUint64(p[32:], filesz)
		le.PutUint64(p[40:], memsz)
	}
	ph(0, elf.PT_NOTE, noteOff, 0, uint64(len(notes)), 0)
	ph(1, elf.PT_LOAD, loadOff, 0x10000, 2048, 4096)
	copy(out[noteOff:], notes)
	for i := loadOff; i < loadOff+2048; i++ {
		out[i] = byte(i)
	}
	return out
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCoreLayer reads a hand-made core: threads, mapped files, memory with
// a zero-filled tail, and a clear error for unmapped addresses.
func TestCoreLayer(t *testing.T) {
	files := []MappedFile{{Start: 0x400000, End: 0x500000, Path: "/opt/app/bin/node"}, {Start: 0x7f0000000000, End: 0x7f0000001000, FileOffset: 8192, Path: "/lib/libc.so.6"}}
	c, err := OpenCore(writeTemp(t, "core", fakeCore(elf.EM_X86_64, 4242, files)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Threads) != 1 || c.Threads[0].TID != 4242 || c.Threads[0].RIP() != 0x1234 {
		t.Errorf("threads %+v", c.Threads)
	}
	if len(c.Files) != 2 || c.Files[0] != files[0] || c.Files[1] != files[1] {
		t.Errorf("files %+v, want %+v", c.Files, files)
	}
	if m := c.nodeMapping(); m == nil || m.Path != "/opt/app/bin/node" {
		t.Errorf("node mapping %+v", m)
	}
	b, err := c.ReadBytes(0x10000+2040, 16)
	if err != nil || b[0] == 0 || !bytes.Equal(b[8:], make([]byte, 8)) {
		t.Errorf("bytes across the file size: %v, %v (want 8 file bytes, then zeros)", b, err)
	}
	if w, err := c.ReadWord(0x10000 + 4000); err != nil || w != 0 {
		t.Errorf("word past the file size: %x, %v", w, err)
	}
	_, err = c.ReadWord(0x10000 + 4096 - 4)
	var ue *UnmappedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnmapped) || !strings.Contains(err.Error(), "0x10ffc") {
		t.Errorf("a word across the segment's end: %v", err)
	}
}

// TestBadInput: every input that is not a readable Node.js core, or not
// with this binary, gets an error naming the file and the problem.
func TestBadInput(t *testing.T) {
	good := fakeCore(elf.EM_X86_64, 1, []MappedFile{{Start: 0x400000, End: 0x500000, Path: "/nonexistent/dir/node"}})
	cases := []struct {
		name, binary string
		data         []byte
		want         string
	}{
		{"arm64", "", fakeCore(elf.EM_AARCH64, 1, nil), "x86-64 Linux cores only"},
		{"no binary", "", good, "/nonexistent/dir/node is not here"},
		{"not node", "", fakeCore(elf.EM_X86_64, 1, []MappedFile{{Start: 0x400000, End: 0x500000, Path: "/bin/sleep"}}), "not a Node.js core"},
		{"binary not node", "/bin/sh", good, "no v8dbg_* postmortem metadata"},
		{"truncated", "", good[:len(good)-1000], "truncated core"},
		{"notes cut", "", good[:200], "truncated core"},
		{"empty", "", nil, "too short"},
		{"not elf", "", []byte(strings.Repeat("x", 100)), "not an ELF file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, "core", c.data)
			p, err := Open(path, c.binary)
			if err == nil {
				p.Close()
				t.Fatalf("no error, want one saying %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), c.binary) {
				t.Errorf("error %q, want one naming the file and saying %q", err, c.want)
			}
		})
	}
}

// TestWrongBinary refuses another Node's binary for a core, and reads a
// core of a process that is not Node (sleep) with a clear error.
func TestWrongBinary(t *testing.T) {
	majors := coretest.Majors(t)
	c := coretest.Shared(t, majors[0])
	other := 22
	if majors[0] == 22 {
		other = 20
	}
	p, err := Open(c.Core, coretest.Node(t, other))
	if err == nil {
		p.Close()
		t.Fatal("the core of Node", majors[0], "opened with Node", other)
	}
	if !errors.Is(err, errMismatch) || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("error %q, want a refusal of the binary", err)
	}
	// A truncated real core: its notes (at the end, as gcore writes them)
	// and most segments are gone.
	f, err := os.Open(c.Core)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cut := filepath.Join(t.TempDir(), "cut.core")
	out, err := os.Create(cut)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(out, f, 8<<20); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if p, err := Open(cut, c.Binary); err == nil || !strings.Contains(err.Error(), "truncated core") {
		if p != nil {
			p.Close()
		}
		t.Errorf("truncated real core: %v, want truncated core", err)
	}
}

// TestNotNodeCore gcores a process that is not Node.
func TestNotNodeCore(t *testing.T) {
	testfixtures.NeedTool(t, "gcore")
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(100 * time.Millisecond)
	core, err := coretest.Gcore(t, cmd.Process.Pid, t.TempDir())
	if err != nil {
		testfixtures.Missing(t, "gcore: %v", err)
	}
	_, err = Open(core, "")
	if err == nil || !strings.Contains(err.Error(), "not a Node.js core") {
		t.Errorf("core of sleep: %v, want not a Node.js core", err)
	}
}

// FuzzCore feeds the note and header parsing and, where the core parses,
// the metadata layer (with a fake metadata table) with mutated cores.
func FuzzCore(f *testing.F) {
	f.Add(fakeCore(elf.EM_X86_64, 7, []MappedFile{{Start: 0x400000, End: 0x500000, Path: "/usr/bin/node"}}))
	f.Add(fakeCore(elf.EM_AARCH64, 7, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseCore("fuzz", b)
		if err != nil {
			return
		}
		for _, s := range c.Segments() {
			c.ReadBytes(s.Addr, int(min(s.MemSize, 64)))
			c.ReadWord(s.End() - 4)
		}
		c.nodeMapping()
	})
}

// FuzzMetadata feeds the metadata index with arbitrary symbol names and
// values: lookups must never panic, and a missing name must be reported.
func FuzzMetadata(f *testing.F) {
	f.Add("v8dbg_class_Map__instance_type__uint16_t", int64(12), "v8dbg_type_JSObject__JS_OBJECT_TYPE", int64(1057))
	f.Add("v8dbg_class___", int64(-1), "v8dbg_type___", int64(1<<40))
	f.Add("nodedbg_offset_ExternalString__data__uintptr_t", int64(8), "v8dbg_parent_Map__HeapObject", int64(0))
	f.Fuzz(func(t *testing.T, n1 string, v1 int64, n2 string, v2 int64) {
		m := newMetadata(map[string]int64{n1: v1, n2: v2})
		m.Runtime = "fuzz"
		m.Field("Map", "instance_type")
		m.Type("JS_OBJECT_TYPE")
		m.TypeName(uint16(v1))
		nd := m.Need()
		nd.Value("SmiTag")
		nd.Field("Map.instance_type", "Map.instance_size")
		if nd.Err() == nil && !strings.Contains(n1+n2, "SmiTag") {
			t.Errorf("no error for missing SmiTag with %q, %q", n1, n2)
		}
	})
}
