package model

import "unsafe"

// stringChunkSize is the arena chunk size. Chunks are never reallocated, so
// adding strings never copies earlier ones and a huge string table grows
// without doubling its footprint.
const stringChunkSize = 1 << 20

// indexChunk is the number of strings per index chunk. The index is
// chunked like the arena, so a growing table never copies it and leaves no
// garbage behind (a doubling slice would, measurably, on big snapshots).
const indexChunk = 1 << 16

// Strings is an append-only table of strings stored in a chunked byte arena:
// one allocation per megabyte, not one per string. Strings returned by At
// alias the arena and stay valid for the table's lifetime.
type Strings struct {
	chunks [][]byte
	// loc packs, per string, the arena chunk (high 24 bits) and offset
	// (low 40 bits), split in indexChunk pieces. No lengths are kept: the
	// strings of a chunk lie back to back in the order they were added and
	// chunks are filled one after the other, so a string ends where the
	// next one starts, or at its chunk's end when the next one starts
	// another (4 bytes a string less: 30 MB on the 3.5 GB synthetic
	// snapshot's 7.8M strings).
	loc [][]uint64
	n   int
}

// Len reports the number of strings.
func (s *Strings) Len() int { return s.n }

// Add appends a copy of b and returns its StringID. Strings are not
// de-duplicated: the caller decides whether to intern.
func (s *Strings) Add(b []byte) StringID {
	id := StringID(s.n)
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
	s.index(uint64(k)<<40 | uint64(off))
	return id
}

// AddBlock appends len(lens) strings stored back to back in data and
// reports whether their lengths add up to len(data). The table keeps data
// as one chunk of its arena, without copying: a reader that has a whole
// string table in one buffer (a cache of one) adds it in one step.
func (s *Strings) AddBlock(data []byte, lens []uint32) bool {
	var total uint64
	for _, n := range lens {
		total += uint64(n)
	}
	if total != uint64(len(data)) {
		return false
	}
	k := uint64(len(s.chunks))
	s.chunks = append(s.chunks, data[:len(data):len(data)])
	var off uint64
	for _, n := range lens {
		s.index(k<<40 | off)
		off += uint64(n)
	}
	return true
}

// index adds the next string's location.
func (s *Strings) index(l uint64) {
	if s.n%indexChunk == 0 {
		s.loc = append(s.loc, make([]uint64, 0, indexChunk))
	}
	last := len(s.loc) - 1
	s.loc[last] = append(s.loc[last], l)
	s.n++
}

// AddString is Add for a string.
func (s *Strings) AddString(v string) StringID {
	return s.Add(unsafe.Slice(unsafe.StringData(v), len(v)))
}

// At returns string i without copying.
func (s *Strings) At(i StringID) string {
	l := s.loc[i/indexChunk][i%indexChunk]
	k, off := l>>40, l&(1<<40-1)
	c := s.chunks[k]
	end := uint64(len(c))
	if j := i + 1; int(j) < s.n {
		if m := s.loc[j/indexChunk][j%indexChunk]; m>>40 == k {
			end = m & (1<<40 - 1)
		}
	}
	if end == off {
		return ""
	}
	return unsafe.String(&c[off], int(end-off))
}

// Bytes returns the total number of bytes held by the strings.
func (s *Strings) Bytes() uint64 {
	var t uint64
	for _, c := range s.chunks {
		t += uint64(len(c))
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
