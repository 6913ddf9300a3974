package nodecore

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/coretest"
)

// The frame walker's fuzz target. Its input is a thread's registers and
// the memory of its stack, as a core holds them:
//
//	[0:8]   base: the address the memory is mapped at (the thread's rsp)
//	[8:16]  rbp
//	[16:24] rip
//	[24:]   the memory
//
// The metadata is Node 20's (testdata/node20-v8dbg-symbols.tsv, the
// symbol list of ../shared/notes/node-core-dumps-symbols, values as the
// official binary's file holds them). The seed is the top 8 KB of the main
// thread's stack in a core of core-state.js (testdata/stack-node20.seed,
// written by HEAPX_WRITE_STACK_SEED=1 go test -run TestWriteStackSeed):
// real frame chains, markers and tagged values whose heap is absent.

// seedMemory is how much of the real stack the seed keeps.
const seedMemory = 8 << 10

// fuzzProcess is a Process of one thread whose stack is the input.
func fuzzProcess(t testing.TB, meta *Metadata, in []byte) *Process {
	base := binary.LittleEndian.Uint64(in)
	mem := in[24:]
	base &^= 7
	if base > 1<<47 || len(mem) == 0 {
		base = 0x7ffc00000000
	}
	c := &Core{Path: "fuzz.core", data: mem,
		segs: []Segment{{Addr: base, MemSize: uint64(len(mem)), FileSize: uint64(len(mem)), Writable: true}}}
	var th Thread
	th.TID = 1
	th.Regs[RegRSP] = base
	th.Regs[RegRBP] = binary.LittleEndian.Uint64(in[8:])
	th.Regs[RegRIP] = binary.LittleEndian.Uint64(in[16:])
	c.Threads = []Thread{th}
	p := &Process{Core: c, Meta: meta}
	h, err := newHeap(p)
	if err != nil {
		t.Fatal(err)
	}
	p.Heap = h
	return p
}

// node20Metadata reads the committed Node 20 symbol list.
func node20Metadata(t testing.TB) *Metadata {
	f, err := os.Open(filepath.Join("testdata", "node20-v8dbg-symbols.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw := map[string]int64{
		// Node sets its nodedbg_* at startup; the file holds 0.
		"nodedbg_offset_ExternalString__data__uintptr_t": 0,
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		raw[fields[0]] = v
	}
	m := newMetadata(raw)
	m.Runtime = "Node 20 (fuzz)"
	return m
}

func FuzzStackWalk(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "stack-node20.seed"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	// A chain of three frames ending in 0, in 64 bytes at the base.
	chain := make([]byte, 24+64)
	le := binary.LittleEndian
	le.PutUint64(chain, 0x7ffc00000000)
	le.PutUint64(chain[8:], 0x7ffc00000000)
	le.PutUint64(chain[24:], 0x7ffc00000010)
	le.PutUint64(chain[24+16:], 0x7ffc00000020)
	f.Add(chain)
	meta := node20Metadata(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 24 || len(in) > 1<<20 {
			return
		}
		p := fuzzProcess(t, meta, in)
		stacks, err := p.Stacks()
		if err != nil {
			t.Fatal(err)
		}
		if len(stacks) != 1 || len(stacks[0].Frames) == 0 || len(stacks[0].Frames) > maxFrames+1 {
			t.Fatalf("%d stacks, %d frames", len(stacks), len(stacks[0].Frames))
		}
		if _, err := StackRoots(p); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWriteStackSeed writes testdata/stack-node20.seed from a fresh core
// of core-state.js, when HEAPX_WRITE_STACK_SEED=1.
func TestWriteStackSeed(t *testing.T) {
	if os.Getenv("HEAPX_WRITE_STACK_SEED") != "1" {
		t.Skip("writes the fuzz seed only with HEAPX_WRITE_STACK_SEED=1")
	}
	c := coretest.Make(t, 20)
	p, err := Open(c.Core, c.Binary)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, th := range p.Threads {
		if int(th.TID) != c.PID {
			continue
		}
		mem, err := p.ReadBytes(th.RSP(), seedMemory)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 24, 24+len(mem))
		binary.LittleEndian.PutUint64(out, th.RSP())
		binary.LittleEndian.PutUint64(out[8:], th.RBP())
		binary.LittleEndian.PutUint64(out[16:], th.RIP())
		out = append(out, mem...)
		if err := os.WriteFile(filepath.Join("testdata", "stack-node20.seed"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("no main thread")
}
