package nodecore_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/nodecore"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/internal/hostile"
)

// TestCraftedCores reads the crafted cores of hostile.CoreCases (which
// bench/hostile.sh runs heapx on too), each applied to the shared core of
// core-state.js in place and taken back after: headers, segments and notes
// that lie are refused in one line naming the core; a heap that lies
// (lengths of 2^31, cons strings and maps that are their own parts,
// pointers out of range, objects that are their own maps, page headers
// claiming 64 GB) is read as far as it makes sense, or refused when no
// heap page is left; never a panic, and no read allocates much more than
// the real core's does. Cuts of more than 16 MB are bench/hostile.sh's
// (a copy of the core each).
func TestCraftedCores(t *testing.T) {
	c := coretest.Shared(t, coretest.Majors(t)[0])
	var err error
	base := hostile.Allocated(func() { _, err = nodecore.ReadFile(c.Core, nodecore.ReadOptions{Binary: c.Binary}) })
	if err != nil {
		t.Fatal(err)
	}
	cases, err := hostile.CoreCases(c.Core, c.Binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range cases {
		if k.Truncate > 16<<20 {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			path := c.Core
			if k.Truncate > 0 {
				path = t.TempDir() + "/cut.core"
				if err := hostile.WriteCut(c.Core, path, k.Truncate); err != nil {
					t.Fatal(err)
				}
			} else {
				undo, err := hostile.ApplyCore(c.Core, k)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if _, err := hostile.ApplyCore(c.Core, hostile.CoreCase{Patches: undo}); err != nil {
						t.Fatalf("taking the case back: %v (the shared core is damaged)", err)
					}
				}()
			}
			var err error
			alloc := hostile.Allocated(func() { _, err = nodecore.ReadFile(path, nodecore.ReadOptions{Binary: c.Binary}) })
			switch {
			case k.Want == "" && err != nil:
				t.Errorf("not read: %v", err)
			case k.Want != "" && k.Want != "?" && (err == nil || !strings.Contains(err.Error(), k.Want)):
				t.Errorf("error %v, want one saying %q", err, k.Want)
			case err != nil && (!strings.HasPrefix(err.Error(), path+": ") || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "internal error")):
				t.Errorf("error %q: want one line starting with the core's name", err)
			}
			if alloc > base+base/2+64<<20 {
				t.Errorf("allocated %d MB; the real core's read %d MB", alloc>>20, base>>20)
			}
		})
	}
}

// FuzzCoreHeap writes bytes over an object of the shared core's heap (in
// place, taken back after) and reads the core: never a panic. The seeds
// are the first bytes of real objects of each kind the reader decodes
// differently (arrays, strings of each representation, JavaScript
// objects, maps, contexts, functions, code), so mutations start from
// what V8 wrote. Each fuzzing worker makes its own core.
func FuzzCoreHeap(f *testing.F) {
	c := coretest.Shared(f, coretest.Majors(f)[0])
	p, err := nodecore.Open(c.Core, c.Binary)
	if err != nil {
		f.Fatal(err)
	}
	objs, err := p.Heap.Scan(p.Heap.Pages())
	if err != nil {
		f.Fatal(err)
	}
	// ends[i] is where object i's bytes are in the core file, and where
	// its segment's bytes end there.
	offs, ends := make([]int64, objs.Len()), make([]int64, objs.Len())
	for i := range objs.Len() {
		if s := p.Segment(objs.Addr[i]); s != nil {
			offs[i], ends[i] = int64(s.Offset+objs.Addr[i]-s.Addr), int64(s.Offset+s.FileSize)
		}
	}
	seen := map[string]bool{}
	for i := range objs.Len() {
		typ := p.Heap.TypeName(objs.Type[i])
		if seen[typ] || objs.Size[i] < 16 {
			continue
		}
		switch typ {
		case "FIXED_ARRAY_TYPE", "ONE_BYTE_STRING_TYPE", "CONS_ONE_BYTE_STRING_TYPE", "SLICED_ONE_BYTE_STRING_TYPE",
			"THIN_ONE_BYTE_STRING_TYPE", "EXTERNAL_ONE_BYTE_STRING_TYPE", "JS_OBJECT_TYPE", "JS_ARRAY_TYPE", "MAP_TYPE",
			"FUNCTION_CONTEXT_TYPE", "JS_FUNCTION_TYPE", "SHARED_FUNCTION_INFO_TYPE", "SCOPE_INFO_TYPE", "DESCRIPTOR_ARRAY_TYPE",
			"NAME_DICTIONARY_TYPE", "BYTECODE_ARRAY_TYPE":
			b, err := p.ReadBytes(objs.Addr[i], int(min(objs.Size[i], 128)))
			if err == nil {
				seen[typ] = true
				f.Add(uint32(i), append([]byte(nil), b...))
			}
		}
	}
	p.Close()
	if len(seen) < 8 {
		f.Fatalf("only %d kinds of object found for seeds", len(seen))
	}
	f.Fuzz(func(t *testing.T, at uint32, b []byte) {
		i := int(at) % objs.Len()
		if n := ends[i] - offs[i]; int64(len(b)) > min(n, 4096) {
			b = b[:min(n, 4096)]
		}
		undo, err := hostile.ApplyCore(c.Core, hostile.CoreCase{Patches: []hostile.CorePatch{{Off: offs[i], New: b}}})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, err := hostile.ApplyCore(c.Core, hostile.CoreCase{Patches: undo}); err != nil {
				t.Fatal(err)
			}
		}()
		if _, err := nodecore.ReadFile(c.Core, nodecore.ReadOptions{Binary: c.Binary}); err != nil && !strings.HasPrefix(err.Error(), c.Core+": ") {
			t.Errorf("error %q does not name the core", err)
		}
	})
}
