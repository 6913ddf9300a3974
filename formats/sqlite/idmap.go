package sqlite

import (
	"sort"

	"github.com/heapx/heapx/model"
)

// idMap maps node identifiers to node indexes: an open-addressing hash
// table with linear probing over one flat slice, instead of a Go map, so a
// graph of 10^7 nodes costs one 16-byte slot per entry at half load and no
// per-entry allocation, and a lookup touches one cache line.
type idMap struct {
	slots []idSlot
	shift uint // 64 - log2(len(slots))
	n     int
}

type idSlot struct {
	id  uint64
	idx int32 // node index + 1; 0 marks an empty slot
}

// newIDMap returns a map sized for n entries; it never grows, so n must
// be the number of nodes.
func newIDMap(n int) *idMap {
	size, bits := 1, uint(0)
	for size < 2*max(n, 512) {
		size <<= 1
		bits++
	}
	// model.Alloc backs a big table with huge pages: lookups are random,
	// so with 4 KB pages nearly each one would also miss the TLB.
	return &idMap{slots: model.Alloc[idSlot](size), shift: 64 - bits}
}

// hash spreads identifiers (often consecutive odd numbers) over the table:
// Fibonacci hashing, the top bits of a multiplication by 2^64/phi.
func (m *idMap) hash(id uint64) uint64 { return (id * 0x9E3779B97F4A7C15) >> m.shift }

// insert adds id -> idx; it reports false if id is already present or the
// table is full.
func (m *idMap) insert(id uint64, idx int32) bool {
	if 2*(m.n+1) > len(m.slots) {
		return false
	}
	mask := uint64(len(m.slots) - 1)
	for h := m.hash(id); ; h = (h + 1) & mask {
		s := &m.slots[h]
		if s.idx == 0 {
			s.id, s.idx = id, idx+1
			m.n++
			return true
		}
		if s.id == id {
			return false
		}
	}
}

// get returns the index of id, or -1.
func (m *idMap) get(id uint64) int32 {
	mask := uint64(len(m.slots) - 1)
	for h := m.hash(id); ; h = (h + 1) & mask {
		s := &m.slots[h]
		if s.idx == 0 {
			return -1
		}
		if s.id == id {
			return s.idx - 1
		}
	}
}

// idIndex maps the ids of a table read in ascending id order (stringid, nodetypeid,
// edgetypeid) to their positions. heapx writes them 0, 1, 2, ..., which
// is recognized and costs nothing; other files get a binary search over
// the sorted ids.
type idIndex struct {
	dense bool    // ids are exactly 0..n-1
	ids   []int64 // sorted, when not dense
	n     int
}

func newIDIndex(ids []int64) idIndex {
	dense := true
	for i, id := range ids {
		if id != int64(i) {
			dense = false
			break
		}
	}
	if dense {
		return idIndex{dense: true, n: len(ids)}
	}
	// The reader selects them ORDER BY id, so position i holds the i-th
	// smallest and positions are the model's indexes.
	return idIndex{ids: append([]int64(nil), ids...), n: len(ids)}
}

// find returns the position of id, or -1.
func (x *idIndex) find(id int64) int {
	if x.dense {
		if id >= 0 && id < int64(x.n) {
			return int(id)
		}
		return -1
	}
	i := sort.Search(len(x.ids), func(i int) bool { return x.ids[i] >= id })
	if i < len(x.ids) && x.ids[i] == id {
		return i
	}
	return -1
}
