package analysis

import "math/bits"

// Bits is a fixed-size bit set over node or edge indexes: one bit per
// element, so a flag over 10^8 edges costs 12.5 MB instead of 100 MB of
// bools.
type Bits []uint64

// NewBits returns a cleared set for indexes [0, n).
func NewBits(n int) Bits { return make(Bits, (n+63)>>6) }

// Has reports whether bit i is set.
func (b Bits) Has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// Set sets bit i.
func (b Bits) Set(i int) { b[i>>6] |= 1 << (uint(i) & 63) }

// Clear clears bit i.
func (b Bits) Clear(i int) { b[i>>6] &^= 1 << (uint(i) & 63) }

// Count returns the number of set bits.
func (b Bits) Count() int {
	c := 0
	for _, w := range b {
		c += bits.OnesCount64(w)
	}
	return c
}
