// Classes: CLASS DUMP records, their instance layouts (superclass chains)
// and Java's class names.

package hprof

import (
	"fmt"
	"strings"
)

// classDump reads a CLASS DUMP. Pass 1 keeps everything; pass 2 emits the
// class's edges from what pass 1 kept.
func (rd *reader) classDump(start, end int64) error {
	in := rd.in
	n := rd.idSize
	if rd.pass > 1 {
		c := &rd.classes[rd.slot(rd.peekID())]
		if rd.pass == 2 {
			rd.classEdges(c)
		}
		if !in.skip(c.dumpLen) {
			return in.truncated("heap dump")
		}
		return nil
	}
	hdr := 7*n + 10
	if !in.fill(hdr) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	cid := rd.id(b)
	s := rd.slot(cid)
	c := &rd.classes[s]
	if c.dumped {
		return in.errorf(start, "heap dump", "class 0x%x dumped twice", cid)
	}
	c.dumped = true
	rd.dumped++
	c.dumpAt = start
	c.super = rd.id(b[n+4:])
	c.loader = rd.id(b[2*n+4:])
	c.rawSize = u4(b[7*n+4:])
	cp := int(u2(b[7*n+8:]))
	in.r += hdr
	for range cp {
		if !in.fill(3) {
			return in.truncated("heap dump")
		}
		sz := rd.valueSize(in.buf[in.r+2])
		if sz == 0 {
			return in.errorf(in.pos()+2, "heap dump", "constant pool entry of invalid type %d", in.buf[in.r+2])
		}
		if !in.fill(3 + sz) {
			return in.truncated("heap dump")
		}
		in.r += 3 + sz
	}
	if !in.fill(2) {
		return in.truncated("heap dump")
	}
	ns := int(u2(in.buf[in.r:]))
	in.r += 2
	for range ns {
		if !in.fill(n + 1) {
			return in.truncated("heap dump")
		}
		name, t := rd.id(in.buf[in.r:]), in.buf[in.r+n]
		sz := rd.valueSize(t)
		if sz == 0 {
			return in.errorf(in.pos()+int64(n), "heap dump", "static field of invalid type %d", t)
		}
		if !in.fill(n + 1 + sz) {
			return in.truncated("heap dump")
		}
		v := in.buf[in.r+n+1:]
		switch t {
		case tObject:
			if id := rd.id(v); id != 0 {
				c.statics = append(c.statics, static{name, id})
			}
		case tLong:
			c.longs = append(c.longs, static{name, u8(v)})
		}
		in.r += n + 1 + sz
		if in.pos() > end {
			return rd.pastEnd(start, subClassDump, end)
		}
	}
	if !in.fill(2) {
		return in.truncated("heap dump")
	}
	nf := int(u2(in.buf[in.r:]))
	in.r += 2
	c.fields = make([]field, 0, nf)
	for range nf {
		if !in.fill(n + 1) {
			return in.truncated("heap dump")
		}
		f := field{rd.id(in.buf[in.r:]), in.buf[in.r+n]}
		if rd.valueSize(f.typ) == 0 {
			return in.errorf(in.pos()+int64(n), "heap dump", "instance field of invalid type %d", f.typ)
		}
		c.fields = append(c.fields, f)
		in.r += n + 1
		if in.pos() > end {
			return rd.pastEnd(start, subClassDump, end)
		}
	}
	c.dumpLen = in.pos() - start - 1
	i, err := rd.object(start, ntClass, uint32(s), cid, 0)
	c.node = i
	return err
}

// peekID decodes the identifier at the current position (the caller has
// made sure it is there or fails on the next fill).
func (rd *reader) peekID() uint64 {
	if !rd.in.fill(rd.idSize) {
		return 0
	}
	return rd.id(rd.in.buf[rd.in.r:])
}

// classEdges emits a class object's edges in pass 2.
func (rd *reader) classEdges(c *class) {
	rd.beginNode()
	if c.super != 0 {
		rd.edgeTo(etInternal, rd.nSuper, c.super)
	}
	if c.loader != 0 {
		rd.edgeTo(etInternal, rd.nLoader, c.loader)
	}
	for _, s := range c.statics {
		rd.edgeTo(etStatic, rd.internUTF8(s.name), s.value)
	}
}

// slotNamed returns the slot of the dumped class with Java name name, or -1.
func (rd *reader) slotNamed(name string) int32 {
	for s := range rd.classes {
		if rd.classes[s].dumped && rd.classes[s].name == name {
			return int32(s)
		}
	}
	return -1
}

// layouts lays out every dumped class's instance data along its
// superclass chain: the class's own fields come first, then its
// superclass's, and so on (HotSpot's order). Each class is laid out once,
// after its superclass, from the superclass's totals, so the work and the
// memory are linear in the fields however deep the chains; a chain that
// comes back to itself is an error, since no instance could have a
// layout. The field "referent" declared by java.lang.ref.Reference (slot
// reference) is weak.
func (rd *reader) layouts(reference int32) error {
	var walk []int32
	for s := range rd.classes {
		if !rd.classes[s].dumped || rd.classes[s].state == 2 {
			continue
		}
		// Walk up to a laid-out class or the top, then lay out on the
		// way back.
		walk = walk[:0]
		for cur := int32(s); cur >= 0; {
			k := &rd.classes[cur]
			if k.state == 1 {
				return rd.superCycle(walk, cur)
			}
			k.state = 1
			walk = append(walk, cur)
			k.superSlot = -1
			if sup, ok := rd.classByID[k.super]; k.super != 0 && ok && rd.classes[sup].dumped {
				k.superSlot = sup
			}
			cur = k.superSlot
			if cur >= 0 && rd.classes[cur].state == 2 {
				break
			}
		}
		for i := len(walk) - 1; i >= 0; i-- {
			rd.layoutClass(walk[i], reference)
		}
	}
	return nil
}

// layoutClass lays out class s, whose superclass is laid out.
func (rd *reader) layoutClass(s, reference int32) {
	c := &rd.classes[s]
	var own uint64
	for _, f := range c.fields {
		if f.typ == tObject {
			name := rd.utf8[f.name]
			c.own = append(c.own, ref{off: uint32(own), name: rd.names.Intern([]byte(name)), weak: s == reference && name == "referent"})
			c.fieldSum[1]++
		} else {
			c.fieldSum[0] += uint64(rd.valueSize(f.typ))
		}
		own += uint64(rd.valueSize(f.typ))
	}
	c.dataLen, c.refCount, c.withRefs = own, uint64(len(c.own)), -1
	if len(c.own) > 0 {
		c.withRefs = s
	}
	if c.superSlot >= 0 {
		sup := &rd.classes[c.superSlot]
		c.dataLen += sup.dataLen
		c.refCount += sup.refCount
		c.fieldSum[0] += sup.fieldSum[0]
		c.fieldSum[1] += sup.fieldSum[1]
		if c.withRefs < 0 {
			c.withRefs = sup.withRefs
		}
	}
	c.state = 2
}

// superCycle is the error for a superclass chain that comes back to class
// back, which walk (the chain so far) holds.
func (rd *reader) superCycle(walk []int32, back int32) error {
	i := 0
	for walk[i] != back {
		i++
	}
	cycle := walk[i:]
	var b []byte
	const shown = 4
	for j, s := range cycle {
		if j == shown {
			b = fmt.Appendf(b, " extends ... (%d classes)", len(cycle))
			break
		}
		if j > 0 {
			b = append(b, " extends "...)
		}
		b = append(b, rd.classes[s].name...)
	}
	if len(cycle) <= shown {
		b = append(append(b, " extends "...), rd.classes[back].name...)
	}
	return rd.in.errorf(rd.classes[back].dumpAt, "heap dump", "superclass cycle: %s", b)
}

// hiddenBase strips the address from the name of a hidden class (a
// lambda's "LeakDemo$$Lambda$14/0x0000000800c03000", JDK 21's
// "LeakDemo$$Lambda/0x...", a LambdaForm's "...LambdaForm$MH+0x..."; the
// heap dumper writes the "/" as "+"), in the JVM's spelling, arrays of
// them included. The address is where the JVM put the class in this run:
// without it, the same lambda has the same name in every run, so a diff
// across runs matches it, and the instances of a program's many
// LambdaForm classes count as one class, as the program sees them.
func hiddenBase(name string) (string, bool) {
	end := len(name)
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, ";") {
		end--
	}
	i := strings.LastIndex(name[:end], "0x")
	// At least 8 hex digits (a 32-bit address), after "+" or "/".
	if i < 1 || end-i-2 < 8 || name[i-1] != '+' && name[i-1] != '/' {
		return name, false
	}
	for _, c := range name[i+2 : end] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return name, false
		}
	}
	return name[:i-1] + name[end:], true
}

// javaName turns a JVM class name ("java/lang/String", "[I",
// "[[Ljava/lang/Object;") into Java's spelling ("java.lang.String",
// "int[]", "java.lang.Object[][]"). Android's names are already spelled so.
func javaName(s string) string {
	dims := 0
	for dims < len(s) && s[dims] == '[' {
		dims++
	}
	base := s[dims:]
	if dims > 0 {
		switch {
		case len(base) == 1:
			if t := primLetter(base[0]); t != "" {
				base = t
			}
		case len(base) > 2 && base[0] == 'L' && base[len(base)-1] == ';':
			base = base[1 : len(base)-1]
		}
	}
	out := make([]byte, 0, len(base)+2*dims)
	for i := 0; i < len(base); i++ {
		if base[i] == '/' {
			out = append(out, '.')
		} else {
			out = append(out, base[i])
		}
	}
	for range dims {
		out = append(out, "[]"...)
	}
	return string(out)
}

func primLetter(c byte) string {
	switch c {
	case 'Z':
		return "boolean"
	case 'C':
		return "char"
	case 'F':
		return "float"
	case 'D':
		return "double"
	case 'B':
		return "byte"
	case 'S':
		return "short"
	case 'I':
		return "int"
	case 'J':
		return "long"
	}
	return ""
}
