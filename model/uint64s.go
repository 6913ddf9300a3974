package model

// Uint64s is a column of unsigned 64-bit values (node ids, self sizes)
// stored in 32 bits per value while every value fits: V8's ids and self
// sizes do (on a 1 GB snapshot of 14.3M nodes the largest id is 3.9e9 and
// the largest size 14.7 MB), which saves 4 bytes per node and column, 114 MB
// of the 1.5 GB that analysing that snapshot takes. The high words are a
// second column, allocated for the whole length on the first value that
// needs them (HPROF object ids and SpiderMonkey addresses), so every value
// stays one index away in either form. The zero value is an empty column.
//
// Readers fill a column with Append, or with MakeUint64s and Set; readers
// of values use At (Graph.NodeID, Graph.NodeSize for the node columns).
type Uint64s struct {
	lo []uint32
	hi []uint32 // nil while every value fits 32 bits
}

// MakeUint64s returns a column of n zeros (allocated with Alloc).
func MakeUint64s(n int) Uint64s { return Uint64s{lo: Alloc[uint32](n)} }

// Uint64sOver returns a column whose low words are lo, the caller's
// memory, which it no longer uses otherwise (a pass's dead scratch array):
// its values are lo's until Set; high words are allocated, for cap(lo)
// values, if one is ever needed.
func Uint64sOver(lo []uint32) Uint64s { return Uint64s{lo: lo} }

// NewUint64s returns a column holding vs.
func NewUint64s(vs ...uint64) Uint64s {
	c := MakeUint64s(len(vs))
	for i, v := range vs {
		c.Set(i, v)
	}
	return c
}

// Len reports the number of values.
func (c *Uint64s) Len() int { return len(c.lo) }

// At returns value i.
func (c *Uint64s) At(i int) uint64 {
	if c.hi == nil {
		return uint64(c.lo[i])
	}
	return uint64(c.lo[i]) | uint64(c.hi[i])<<32
}

// Set stores v as value i.
func (c *Uint64s) Set(i int, v uint64) {
	if v>>32 != 0 || c.hi != nil {
		c.setWide(i, v)
		return
	}
	c.lo[i] = uint32(v)
}

func (c *Uint64s) setWide(i int, v uint64) {
	c.widen()
	c.lo[i], c.hi[i] = uint32(v), uint32(v>>32)
}

// widen allocates the high words (zeros) unless they exist.
func (c *Uint64s) widen() {
	if c.hi == nil {
		c.hi = Alloc[uint32](cap(c.lo))[:len(c.lo)]
	}
}

// Append adds v at the end.
func (c *Uint64s) Append(v uint64) {
	if v>>32 != 0 {
		c.widen()
	}
	c.lo = append(c.lo, uint32(v))
	if c.hi != nil {
		c.hi = append(c.hi, uint32(v>>32))
	}
}

// Grow makes room for n more values without reallocating (Alloc'd), as
// slices.Grow does: a reader that knows its node count reserves it once.
func (c *Uint64s) Grow(n int) {
	if cap(c.lo)-len(c.lo) >= n {
		return
	}
	lo := Alloc[uint32](len(c.lo) + n)
	copy(lo, c.lo)
	c.lo = lo[:len(c.lo)]
	if c.hi != nil {
		hi := Alloc[uint32](len(c.hi) + n)
		copy(hi, c.hi)
		c.hi = hi[:len(c.hi)]
	}
}

// Resize returns the column's values in a new column of length n (Alloc'd;
// values past the old length are zero, those past n dropped). Readers that
// grow their columns by doubling use it.
func (c *Uint64s) Resize(n int) Uint64s {
	r := Uint64s{lo: Alloc[uint32](n)}
	copy(r.lo, c.lo)
	if c.hi != nil {
		r.hi = Alloc[uint32](n)
		copy(r.hi, c.hi)
	}
	return r
}

// Truncate keeps the first n values.
func (c *Uint64s) Truncate(n int) {
	c.lo = c.lo[:n]
	if c.hi != nil {
		c.hi = c.hi[:n]
	}
}

// Low returns the low 32-bit words of the values, and whether they are the
// whole values (the column has no high words): loops over a column that
// fits 32 bits can then read a plain slice.
func (c *Uint64s) Low() (lo []uint32, narrow bool) { return c.lo, c.hi == nil }

// Slice returns the values in a new []uint64 (8 bytes a value: for
// writers and tests, not for columns kept beside the graph).
func (c *Uint64s) Slice() []uint64 {
	s := Alloc[uint64](len(c.lo))
	c.CopyTo(s, 0)
	return s
}

// CopyTo writes values from, from+1, ... into dst, len(dst) of them.
func (c *Uint64s) CopyTo(dst []uint64, from int) {
	lo := c.lo[from : from+len(dst)]
	if c.hi == nil {
		for i, v := range lo {
			dst[i] = uint64(v)
		}
		return
	}
	hi := c.hi[from : from+len(dst)]
	for i, v := range lo {
		dst[i] = uint64(v) | uint64(hi[i])<<32
	}
}

// Sum returns the sum of the values.
func (c *Uint64s) Sum() uint64 {
	var t uint64
	for _, v := range c.lo {
		t += uint64(v)
	}
	for _, v := range c.hi {
		t += uint64(v) << 32
	}
	return t
}
