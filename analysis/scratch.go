package analysis

import (
	"sync"
	"unsafe"

	"github.com/heapx/heapx/model"
)

// scratch keeps big int32 buffers that one pass of Analyze no longer needs
// (the BFS queue of Distances, the predecessor array of the dominator pass)
// for a later pass (the Summary's dominator-tree children), because the Go
// heap would not reuse them before the next garbage collection, which a
// heap of this size rarely reaches: each reuse saves its size in peak RSS
// and its page faults. A nil *scratch allocates.
type scratch struct {
	mu   sync.Mutex
	bufs [][]int32
}

// get returns a buffer of length n, zeroed if zero is set.
func (s *scratch) get(n int, zero bool) []int32 {
	if s != nil {
		s.mu.Lock()
		best := -1
		for i, b := range s.bufs {
			if cap(b) >= n && (best < 0 || cap(b) < cap(s.bufs[best])) {
				best = i
			}
		}
		if best >= 0 {
			b := s.bufs[best][:n]
			s.bufs = append(s.bufs[:best], s.bufs[best+1:]...)
			s.mu.Unlock()
			if zero {
				clear(b)
			}
			return b
		}
		s.mu.Unlock()
	}
	return model.Alloc[int32](n)
}

// take is get for a buffer the caller keeps (Analysis.Spare), of
// undefined contents (nil s: a fresh one): a kept
// buffer of at least twice n is split, the caller getting its first n
// entries (with no room to append past them) and the rest staying for the
// next take, so the dominator pass's predecessor array (2N entries) holds
// two indexes of N. The passes use get, whose requests of 2N (the
// dominator-tree children of the Summary) a split array no longer serves.
func (s *scratch) take(n int) []int32 {
	if s == nil {
		return model.Alloc[int32](n)
	}
	s.mu.Lock()
	for i, b := range s.bufs {
		if n > 0 && cap(b) >= 2*n {
			s.bufs[i] = b[n:n]
			s.mu.Unlock()
			return b[:n:n]
		}
	}
	s.mu.Unlock()
	return s.get(n, false)[:n:n]
}

// asUint32 is b's memory as uint32s, for a column of edge indexes kept
// in a buffer the scratch gave.
func asUint32(b []int32) []uint32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b))
}

// drop forgets the kept buffers, so that the next collection frees them.
func (s *scratch) drop() {
	s.mu.Lock()
	s.bufs = nil
	s.mu.Unlock()
}

// put hands a buffer the caller no longer uses to later passes.
func (s *scratch) put(b []int32) {
	if s == nil || cap(b) == 0 {
		return
	}
	s.mu.Lock()
	s.bufs = append(s.bufs, b[:0])
	s.mu.Unlock()
}

// BorrowScratch returns a buffer of n int32 (zeroed if zero is set) from
// those a's passes left behind, for a later pass over a's graph, which
// gives it back with ReturnScratch when done: passes in other packages
// (suspects, shapes) then reuse the analysis's memory as its own do.
func (a *Analysis) BorrowScratch(n int, zero bool) []int32 { return a.sc.get(n, zero) }

// ReturnScratch hands a buffer from BorrowScratch back for later passes.
func (a *Analysis) ReturnScratch(b []int32) { a.sc.put(b) }
