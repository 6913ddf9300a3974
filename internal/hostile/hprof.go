package hostile

import (
	"encoding/binary"
	"fmt"
)

// HPROF writes HPROF dumps by hand, record by record, for crafted inputs
// and for the reader's tests.
type HPROF struct {
	B      []byte // the dump so far
	IDSize int    // 4 or 8
}

// HPROF record and sub-record tags and basic types, as the format defines
// them (the subset the crafted dumps use).
const (
	TagUTF8            = 0x01
	TagLoadClass       = 0x02
	TagStackFrame      = 0x04
	TagStackTrace      = 0x05
	TagHeapDumpSegment = 0x1c
	TagHeapDumpEnd     = 0x2c

	SubClassDump       = 0x20
	SubInstanceDump    = 0x21
	SubObjArrayDump    = 0x22
	SubPrimArrayDump   = 0x23
	SubPrimArrayNoData = 0xc3
	SubHeapDumpInfo    = 0xfe

	RootUnknown        = 0xff
	RootJNIGlobal      = 0x01
	RootJavaFrame      = 0x03
	RootStickyClass    = 0x05
	RootThreadObject   = 0x08
	RootInternedString = 0x89

	TObject = 2
	TByte   = 8
	TInt    = 10
	TLong   = 11
)

// NewHPROF starts a "JAVA PROFILE 1.0.2" dump with identifiers of idSize
// bytes.
func NewHPROF(idSize int) *HPROF {
	w := &HPROF{IDSize: idSize}
	w.Raw([]byte("JAVA PROFILE 1.0.2\x00")...).U4(uint32(idSize)).U4(0).U4(1000)
	return w
}

// U1 appends a byte.
func (w *HPROF) U1(v byte) *HPROF { w.B = append(w.B, v); return w }

// U2 appends a big-endian uint16.
func (w *HPROF) U2(v uint16) *HPROF { w.B = binary.BigEndian.AppendUint16(w.B, v); return w }

// U4 appends a big-endian uint32.
func (w *HPROF) U4(v uint32) *HPROF { w.B = binary.BigEndian.AppendUint32(w.B, v); return w }

// Raw appends bytes as they are.
func (w *HPROF) Raw(p ...byte) *HPROF { w.B = append(w.B, p...); return w }

// ID appends an identifier of the dump's size.
func (w *HPROF) ID(v uint64) *HPROF {
	if w.IDSize == 4 {
		return w.U4(uint32(v))
	}
	w.B = binary.BigEndian.AppendUint64(w.B, v)
	return w
}

// Record appends a top-level record whose body body writes.
func (w *HPROF) Record(tag byte, body func(*HPROF)) *HPROF {
	x := &HPROF{IDSize: w.IDSize}
	body(x)
	w.U1(tag).U4(0).U4(uint32(len(x.B)))
	w.B = append(w.B, x.B...)
	return w
}

// ClassDump appends a CLASS DUMP sub-record with statics (name string id,
// type, value: object statics take an id, others 4 bytes) and instance
// fields (name string id, type).
func (w *HPROF) ClassDump(id, super uint64, size uint32, statics [][3]uint64, fields [][2]uint64) {
	w.U1(SubClassDump).ID(id).U4(0).ID(super).ID(0).ID(0).ID(0).ID(0).ID(0).U4(size).U2(0)
	w.U2(uint16(len(statics)))
	for _, s := range statics {
		w.ID(s[0]).U1(byte(s[1]))
		if s[1] == TObject {
			w.ID(s[2])
		} else {
			w.U4(uint32(s[2]))
		}
	}
	w.U2(uint16(len(fields)))
	for _, f := range fields {
		w.ID(f[0]).U1(byte(f[1]))
	}
}

// name appends a UTF8 record (string id sid) and a LOAD CLASS record
// naming class cid.
func (w *HPROF) name(serial uint32, cid, sid uint64, name string) {
	w.Record(TagUTF8, func(b *HPROF) { b.ID(sid).Raw([]byte(name)...) })
	w.Record(TagLoadClass, func(b *HPROF) { b.U4(serial).ID(cid).U4(0).ID(sid) })
}

// ClassID is the object id of class i in the crafted dumps; fieldName
// numbers their field names.
func ClassID(i int) uint64   { return 0x100000 + uint64(i)*0x10 }
func fieldName(i int) uint64 { return 0x10 + uint64(i) }

// superclassDump is a dump of classes classes, class i extending class
// i+1 (the last extending the first when cyclic, nothing otherwise), each
// with fields reference fields, and one instance of the first class: in
// the chain, with field data that the layout reads as field j of class i
// referring to class i's object. Issue 12.4: before layouts
// were computed once per class, the cyclic dump of 1,000 classes of 100
// fields (970 KB) needed 3 GB, and the chain of 5,000 classes of 2
// fields 263 MB.
func superclassDump(classes, fields int, cyclic bool) []byte {
	w := NewHPROF(8)
	for j := range fields {
		w.Record(TagUTF8, func(b *HPROF) { b.ID(fieldName(j)).Raw([]byte(fmt.Sprintf("f%d", j))...) })
	}
	for i := range classes {
		w.name(uint32(i+1), ClassID(i), 0x1000000+uint64(i), fmt.Sprintf("C%d", i))
	}
	fs := make([][2]uint64, fields)
	for j := range fs {
		fs[j] = [2]uint64{fieldName(j), TObject}
	}
	w.Record(TagHeapDumpSegment, func(b *HPROF) {
		for i := range classes {
			super := uint64(0)
			switch {
			case i+1 < classes:
				super = ClassID(i + 1)
			case cyclic:
				super = ClassID(0)
			}
			b.ClassDump(ClassID(i), super, 0, nil, fs)
		}
		if cyclic {
			// No length fits; one reference will do.
			b.U1(SubInstanceDump).ID(0x7000000).U4(0).ID(ClassID(0)).U4(8).ID(ClassID(0))
		} else {
			// Field j of class i refers to class i's object.
			b.U1(SubInstanceDump).ID(0x7000000).U4(0).ID(ClassID(0)).U4(uint32(classes * fields * 8))
			for i := range classes {
				for range fields {
					b.ID(ClassID(i))
				}
			}
		}
		b.U1(RootStickyClass).ID(ClassID(0))
	})
	w.Record(TagHeapDumpEnd, func(*HPROF) {})
	return w.B
}

// SuperclassCycle is a dump whose classes classes extend each other in a
// cycle, each with fields reference fields (issue 12.4: 1,000 and 100 make
// the 970 KB file that needed 3 GB).
func SuperclassCycle(classes, fields int) []byte { return superclassDump(classes, fields, true) }

// SuperclassChain is a dump of an acyclic chain of classes classes, each
// with fields reference fields (issue 12.4: 5,000 and 2 needed 263 MB).
func SuperclassChain(classes, fields int) []byte { return superclassDump(classes, fields, false) }

// WrappingFieldOffset is the dump of issue 12.5: a class that is its own
// superclass, with 65,535 fields (a reference, then longs), and 8,191
// empty object arrays of as many other classes. The layout walked a
// chain at most as long as the number of classes, so this class's fields
// were laid out 8,193 times, past 2^32 bytes: the data length wrapped to
// 458,744 bytes, which the instance has, while its reference fields kept
// offsets up to 4 GB, and reading the instance panicked (slice bounds out
// of range). 1.3 MB.
func WrappingFieldOffset() []byte {
	const fields, slots = 65535, 8191
	w := NewHPROF(8)
	w.Record(TagUTF8, func(b *HPROF) { b.ID(fieldName(0)).Raw('r') })
	w.Record(TagUTF8, func(b *HPROF) { b.ID(fieldName(1)).Raw('l') })
	w.name(1, ClassID(0), 0x1000000, "Wrap")
	fs := make([][2]uint64, fields)
	fs[0] = [2]uint64{fieldName(0), TObject}
	for j := 1; j < fields; j++ {
		fs[j] = [2]uint64{fieldName(1), TLong}
	}
	w.Record(TagHeapDumpSegment, func(b *HPROF) {
		b.ClassDump(ClassID(0), ClassID(0), 0, nil, fs)
		for i := 1; i <= slots; i++ {
			b.U1(SubObjArrayDump).ID(0x8000000 + uint64(i)).U4(0).U4(0).ID(ClassID(i))
		}
		// 8,193 layouts of 65,535 × 8 bytes, modulo 2^32.
		const wrapped = (slots + 2) * fields * 8 % (1 << 32)
		data := make([]byte, wrapped)
		b.U1(SubInstanceDump).ID(0x7000000).U4(0).ID(ClassID(0)).U4(uint32(len(data))).Raw(data...)
	})
	w.Record(TagHeapDumpEnd, func(*HPROF) {})
	return w.B
}

// HPROFEscapes is a dump whose class name carries terminal escapes
// (ESC ] 0 ; title BEL sets the window title, ESC [ 2 J clears the screen,
// U+009B is the one-byte CSI) and whose instance of it has the wrong field
// data length, so the reader's error message quotes the name (issue 12.7).
func HPROFEscapes() []byte {
	w := NewHPROF(8)
	w.Record(TagUTF8, func(b *HPROF) { b.ID(fieldName(0)).Raw('f') })
	w.name(1, ClassID(0), 0x1000000, Escapes)
	w.Record(TagHeapDumpSegment, func(b *HPROF) {
		b.ClassDump(ClassID(0), 0, 0, nil, [][2]uint64{{fieldName(0), TObject}})
		b.U1(SubInstanceDump).ID(0x7000000).U4(0).ID(ClassID(0)).U4(3).Raw(0, 0, 0)
	})
	w.Record(TagHeapDumpEnd, func(*HPROF) {})
	return w.B
}
