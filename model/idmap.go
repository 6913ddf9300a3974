package model

// IDMap maps node identifiers to node indexes. V8 numbers its heap objects
// with small odd identifiers (1, 3, 5, ... up to about twice the objects
// it has ever tracked), so those go into a direct table indexed by id/2:
// one int32 per possible id, a quarter of a hash slot at half load, and a
// lookup is one array access. Every other identifier (V8's even ones for
// embedder nodes, addresses in HPROF and SpiderMonkey dumps) goes into an
// open-addressing hash table with linear probing over one flat slice,
// instead of a Go map, so 10^7 nodes cost one 16-byte slot per entry at
// half load and no per-entry allocation.
type IDMap struct {
	// direct[id>>1] is the index + 1 of odd id (0: absent), for
	// id>>1 < directCap; allocated at the first such id. Untouched parts
	// of it are never faulted in.
	direct    []int32
	directCap uint64

	slots []idSlot // allocated at the first entry
	shift uint     // 64 - log2(len(slots))
	n     int      // entries in slots
	hint  int      // the expected entries
}

type idSlot struct {
	id  uint64
	idx int32 // node index + 1; 0 marks an empty slot
}

// directSpan is how many odd identifiers per expected node the direct
// table covers: V8's stay below twice the objects a process ever tracked,
// which for a snapshot taken late in a run is a few times those alive.
// directMax bounds the table (1 GB) whatever a file says to expect.
const (
	directSpan = 8
	directMax  = 1 << 28
)

// NewIDMap returns a map sized for about n entries; it grows as needed.
// Readers of formats that refer to nodes by identifier (the exchange
// format) use it to resolve references.
func NewIDMap(n int) *IDMap {
	n = max(n, 1024)
	return &IDMap{directCap: uint64(min(n*directSpan, directMax)), hint: n}
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
	if k := id >> 1; id&1 == 1 && k < m.directCap {
		if m.direct == nil {
			m.direct = Alloc[int32](int(m.directCap))
		}
		if m.direct[k] != 0 {
			return false
		}
		m.direct[k] = idx + 1
		return true
	}
	if m.slots == nil {
		// Sized for all entries unless the direct table takes them.
		n := m.hint
		if m.direct != nil {
			n = 1024
		}
		m.alloc(n)
	}
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
	if k := id >> 1; id&1 == 1 && k < m.directCap {
		if k < uint64(len(m.direct)) {
			return m.direct[k] - 1
		}
		return -1
	}
	if m.slots == nil {
		return -1
	}
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
