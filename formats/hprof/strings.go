package hprof

import (
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/heapx/heapx/model"
)

// stringLayout1 finds where java.lang.String keeps value and coder once
// the String class and its superclasses are dumped; it reports whether
// they are.
func (rd *reader) stringLayout1() bool {
	l := &rd.strLayout
	if l.known {
		return true
	}
	if rd.stringSlot < 0 || l.impossible || rd.dumped == l.triedAt {
		// Only a new CLASS DUMP can complete the chain.
		return false
	}
	l.triedAt = rd.dumped
	value, coder := int32(-1), int32(-1)
	off := uint64(0)
	for s, depth := rd.stringSlot, 0; ; depth++ {
		c := &rd.classes[s]
		if !c.dumped {
			return false
		}
		if depth > len(rd.classes) || off > math.MaxUint32 {
			// A superclass cycle (an error once pass 1 ends) or
			// more field data than an instance can have: no String
			// can be decoded, and walking again for each one would
			// cost the chain's length every time.
			l.impossible = true
			return false
		}
		for _, f := range c.fields {
			switch name := rd.utf8[f.name]; {
			case name == "value" && f.typ == tObject && value < 0 && off < math.MaxInt32:
				value = int32(off)
			case name == "coder" && f.typ == tByte && coder < 0 && off < math.MaxInt32:
				coder = int32(off)
			}
			off += uint64(rd.valueSize(f.typ))
		}
		if c.super == 0 {
			break
		}
		sup, ok := rd.classByID[c.super]
		if !ok {
			return false
		}
		s = sup
	}
	if off > math.MaxUint32 {
		l.impossible = true
		return false
	}
	*l = stringLayout{known: true, value: value, coder: coder, dataBytes: uint32(off)}
	return true
}

// registerString notes that String node i, whose field data is data,
// gets its name from its value array once that array is read.
func (rd *reader) registerString(i int32, data []byte) {
	if !rd.stringLayout1() || uint32(len(data)) != rd.strLayout.dataBytes {
		return
	}
	for int(i)/64 >= len(rd.registered) {
		rd.registered = append(rd.registered, make([]uint64, max(len(rd.registered), 1024))...)
	}
	rd.registered[i/64] |= 1 << (i % 64)
	l := rd.strLayout
	if l.value < 0 {
		return
	}
	vid := rd.id(data[l.value:])
	if vid == 0 {
		return
	}
	var coder uint8
	if l.coder >= 0 {
		coder = data[l.coder]
	}
	if rd.pass == 2 {
		to := rd.ids.Get(vid)
		if to < 0 {
			return // dangling: counted with the String's edges
		}
		if to < i {
			rd.needPass3 = true // the array went by already
		}
	}
	k := int32(len(rd.strNode))
	rd.strNode = append(rd.strNode, i)
	rd.strCoder = append(rd.strCoder, coder)
	rd.strNext = append(rd.strNext, -1)
	if rd.wanted == nil {
		rd.wanted = model.NewIDMap(1024)
	}
	if h := rd.wanted.Get(vid); h >= 0 {
		// Strings sharing one array (G1 string deduplication).
		rd.strNext[k] = rd.strNext[h]
		rd.strNext[h] = k
	} else {
		rd.wanted.Insert(vid, k)
	}
}

func (rd *reader) isRegistered(i int32) bool {
	return int(i)/64 < len(rd.registered) && rd.registered[i/64]&(1<<(i%64)) != 0
}

// decodeStrings names the chain of Strings starting at k from the
// contents of their value array, a char[] or byte[] (t) payload.
func (rd *reader) decodeStrings(k int32, t byte, payload []byte) {
	var sid [2]uint32
	var have [2]bool
	for ; k >= 0; k = rd.strNext[k] {
		i := rd.strNode[k]
		if i < 0 {
			continue
		}
		c := rd.strCoder[k] & 1
		if !have[c] {
			rd.scratch = decodeJava(rd.scratch[:0], t, c, payload)
			sid[c] = rd.g.Strings.Add(rd.scratch)
			have[c] = true
		}
		rd.g.Nodes.Name[i] = sid[c]
		rd.strNode[k] = -1
		rd.decoded++
	}
}

// decodeJava appends to b, as UTF-8, a String's contents: a char[]
// (UTF-16, big-endian as HPROF writes every char), or a byte[] in Latin-1
// (coder 0) or UTF-16 in the VM's native, little-endian order (coder 1).
func decodeJava(b []byte, t byte, coder uint8, p []byte) []byte {
	if t == tByte && coder == 0 {
		for _, c := range p {
			if c < utf8.RuneSelf {
				b = append(b, c)
			} else {
				b = utf8.AppendRune(b, rune(c))
			}
		}
		return b
	}
	unit := func(i int) rune {
		if t == tChar {
			return rune(p[i])<<8 | rune(p[i+1])
		}
		return rune(p[i]) | rune(p[i+1])<<8
	}
	for i := 0; i+1 < len(p); i += 2 {
		r := unit(i)
		if utf16.IsSurrogate(r) && i+3 < len(p) {
			if d := utf16.DecodeRune(r, unit(i+2)); d != utf8.RuneError {
				r = d
				i += 2
			}
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}
