package model

import (
	"slices"
	"testing"
)

// TestUint64s fills columns both ways readers do (Append; MakeUint64s and
// Set) with values that fit 32 bits, then one that does not, and checks
// every value is kept, before and after the high words appear.
func TestUint64s(t *testing.T) {
	vals := []uint64{0, 1, 1<<32 - 1, 7, 1 << 32, 1<<64 - 1, 3, 0x0000_7f12_3456_7890}
	var a Uint64s
	for i, v := range vals {
		a.Append(v)
		if _, narrow := a.Low(); narrow != (i < 4) {
			t.Fatalf("after %d values narrow is %v", i+1, narrow)
		}
	}
	s := MakeUint64s(len(vals))
	for i := len(vals) - 1; i >= 0; i-- { // the wide values first
		s.Set(i, vals[i])
	}
	for _, c := range []*Uint64s{&a, &s} {
		if c.Len() != len(vals) || !slices.Equal(c.Slice(), vals) {
			t.Fatalf("column holds %v, want %v", c.Slice(), vals)
		}
		for i, v := range vals {
			if c.At(i) != v {
				t.Errorf("value %d: %d, want %d", i, c.At(i), v)
			}
		}
		var sum uint64
		for _, v := range vals {
			sum += v
		}
		if c.Sum() != sum {
			t.Errorf("sum %d, want %d", c.Sum(), sum)
		}
		part := make([]uint64, 3)
		if c.CopyTo(part, 3); !slices.Equal(part, vals[3:6]) {
			t.Errorf("CopyTo from 3: %v, want %v", part, vals[3:6])
		}
	}
	// A narrow column costs 4 bytes a value and keeps narrow values as
	// they are, after growing, resizing and truncating too.
	n := NewUint64s(5, 6, 7)
	if lo, narrow := n.Low(); !narrow || !slices.Equal(lo, []uint32{5, 6, 7}) {
		t.Errorf("narrow column: %v %v", lo, narrow)
	}
	n.Grow(10)
	n.Append(1 << 40) // within the grown capacity: the high words are sized to it
	r := n.Resize(6)
	n.Truncate(2)
	if !slices.Equal(n.Slice(), []uint64{5, 6}) || !slices.Equal(r.Slice(), []uint64{5, 6, 7, 1 << 40, 0, 0}) {
		t.Errorf("truncated %v, resized %v", n.Slice(), r.Slice())
	}
	if _, narrow := r.Low(); narrow {
		t.Error("a resized wide column lost its high words")
	}
}
