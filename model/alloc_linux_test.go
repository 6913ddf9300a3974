package model

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// hugeAdvised reports whether the mapping holding p has the kernel's "hg"
// flag (madvise MADV_HUGEPAGE), from /proc/self/smaps.
func hugeAdvised(t *testing.T, p uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		first, _, _ := strings.Cut(line, " ")
		// A mapping's header starts "lo-hi", its attributes "Name:".
		if lo, hi, ok := strings.Cut(first, "-"); ok && !strings.HasSuffix(first, ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(p) >= a && uint64(p) < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Contains(line, " hg")
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return false
}

// TestSetHugePages checks that Alloc advises huge pages for a large column
// only when SetHugePages asked for them: HEAPX_HUGEPAGES turns it on and
// off on hosts where the default does not pay.
func TestSetHugePages(t *testing.T) {
	defer SetHugePages(hugePages.Load())
	mid := func(s []uint64) uintptr { return uintptr(unsafe.Pointer(&s[len(s)/2])) }
	SetHugePages(false)
	off := Alloc[uint64](4 << 20) // 32 MB: whole huge pages in the middle
	if hugeAdvised(t, mid(off)) {
		t.Error("huge pages advised with SetHugePages(false)")
	}
	SetHugePages(true)
	on := Alloc[uint64](4 << 20)
	if !hugeAdvised(t, mid(on)) {
		t.Error("huge pages not advised with SetHugePages(true)")
	}
}
