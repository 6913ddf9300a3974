package model

import "unsafe"

// stringChunkSize is the arena chunk size. Chunks are never reallocated, so
// adding strings never copies earlier ones and a huge string table grows
// without doubling its footprint.
const stringChunkSize = 1 << 20

// Strings is an append-only table of strings stored in a chunked byte arena:
// one allocation per megabyte, not one per string. Strings returned by At
// alias the arena and stay valid for the table's lifetime.
type Strings struct {
	chunks [][]byte
	// loc packs chunk index (high 24 bits) and offset (low 40 bits); lens
	// holds each string's byte length.
	loc  []uint64
	lens []uint32
}

// Len reports the number of strings.
func (s *Strings) Len() int { return len(s.loc) }

// Grow reserves room for n more strings, so a reader that knows the count
// up front avoids reallocating the index.
func (s *Strings) Grow(n int) {
	if n <= 0 {
		return
	}
	if cap(s.loc)-len(s.loc) < n {
		loc := make([]uint64, len(s.loc), len(s.loc)+n)
		copy(loc, s.loc)
		s.loc = loc
		lens := make([]uint32, len(s.lens), len(s.lens)+n)
		copy(lens, s.lens)
		s.lens = lens
	}
}

// Add appends a copy of b and returns its StringID. Strings are not
// de-duplicated: the caller decides whether to intern.
func (s *Strings) Add(b []byte) StringID {
	id := StringID(len(s.loc))
	var c []byte
	if k := len(s.chunks); k > 0 && cap(s.chunks[k-1])-len(s.chunks[k-1]) >= len(b) {
		c = s.chunks[k-1]
	} else {
		size := stringChunkSize
		if len(b) > size/4 {
			// A big string gets a chunk of its own so it does not waste
			// the rest of a shared one.
			size = len(b)
		}
		c = make([]byte, 0, size)
		s.chunks = append(s.chunks, c)
	}
	k := len(s.chunks) - 1
	off := len(c)
	s.chunks[k] = append(c, b...)
	s.loc = append(s.loc, uint64(k)<<40|uint64(off))
	s.lens = append(s.lens, uint32(len(b)))
	return id
}

// AddString is Add for a string.
func (s *Strings) AddString(v string) StringID {
	return s.Add(unsafe.Slice(unsafe.StringData(v), len(v)))
}

// At returns string i without copying.
func (s *Strings) At(i StringID) string {
	l := s.loc[i]
	n := s.lens[i]
	if n == 0 {
		return ""
	}
	c := s.chunks[l>>40]
	off := l & (1<<40 - 1)
	return unsafe.String(&c[off], int(n))
}

// Bytes returns the total number of bytes held by the strings.
func (s *Strings) Bytes() uint64 {
	var t uint64
	for _, n := range s.lens {
		t += uint64(n)
	}
	return t
}

// Interner de-duplicates strings added to a Strings table, for readers whose
// input does not already intern its names.
type Interner struct {
	s   *Strings
	ids map[string]StringID
}

// NewInterner returns an Interner that adds to s. Strings already in s are
// not indexed.
func NewInterner(s *Strings) *Interner {
	return &Interner{s: s, ids: make(map[string]StringID)}
}

// Intern returns the StringID of b, adding it on first sight.
func (in *Interner) Intern(b []byte) StringID {
	if id, ok := in.ids[string(b)]; ok {
		return id
	}
	id := in.s.Add(b)
	in.ids[in.s.At(id)] = id
	return id
}
