package model

// IDMap maps node identifiers to node indexes: an open-addressing hash
// table with linear probing over one flat slice, instead of a Go map, so a
// graph of 10^7 nodes costs one 16-byte slot per entry at half load and no
// per-entry allocation, and a lookup touches one cache line.
type IDMap struct {
	slots []idSlot
	shift uint // 64 - log2(len(slots))
	n     int
}

type idSlot struct {
	id  uint64
	idx int32 // node index + 1; 0 marks an empty slot
}

// NewIDMap returns a map sized for about n entries; it grows as needed.
// Readers of formats that refer to nodes by identifier (the exchange
// format) use it to resolve references.
func NewIDMap(n int) *IDMap {
	m := &IDMap{}
	m.alloc(max(n, 1024))
	return m
}

func (m *IDMap) alloc(n int) {
	size, bits := 1, uint(0)
	for size < 2*n {
		size <<= 1
		bits++
	}
	m.slots = Alloc[idSlot](size) // huge pages: fewer TLB misses on random probes
	m.shift = 64 - bits
}

// hash spreads identifiers (often consecutive odd numbers) over the table:
// Fibonacci hashing, the top bits of a multiplication by 2^64/phi.
func (m *IDMap) hash(id uint64) uint64 { return (id * 0x9E3779B97F4A7C15) >> m.shift }

// Insert adds id -> idx; it reports false if id is already present.
func (m *IDMap) Insert(id uint64, idx int32) bool {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
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

// Get returns the index of id, or -1.
func (m *IDMap) Get(id uint64) int32 {
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

func (m *IDMap) grow() {
	old := m.slots
	m.alloc(len(old)) // twice the entries old could hold
	m.n = 0
	for _, s := range old {
		if s.idx != 0 {
			m.Insert(s.id, s.idx-1)
		}
	}
}
