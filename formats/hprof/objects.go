// Object records: INSTANCE DUMP, OBJECT ARRAY DUMP and PRIMITIVE ARRAY
// DUMP, each a node with its references as edges.

package hprof

// instanceDump reads an INSTANCE DUMP.
func (rd *reader) instanceDump(start, end int64) error {
	in := rd.in
	n := rd.idSize
	if !in.fill(2*n + 8) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	oid, cid, nb := rd.id(b), rd.id(b[n+4:]), u4(b[2*n+4:])
	in.r += 2*n + 8
	if err := rd.payload(start, subInstanceDump, uint64(nb), end); err != nil {
		return err
	}
	switch rd.pass {
	case 1:
		s := rd.slot(cid)
		rd.classes[s].count++
		rd.instRefs += 1 + uint64(nb)/uint64(n)
		i, err := rd.object(start, ntInstance, uint32(s), oid, uint64(s))
		if err != nil {
			return err
		}
		if s == rd.stringSlot && rd.stringLayout1() && nb == rd.strLayout.dataBytes {
			if !in.fill(int(nb)) {
				return in.truncated("heap dump")
			}
			rd.registerString(i, in.buf[in.r:in.r+int(nb)])
		}
	case 2:
		s, ok := rd.classByID[cid]
		if !ok || !rd.classes[s].dumped {
			return in.errorf(start, "heap dump", "instance 0x%x of class 0x%x, which has no CLASS DUMP", oid, cid)
		}
		c := &rd.classes[s]
		if uint64(nb) != c.dataLen {
			return in.errorf(start, "heap dump", "instance 0x%x has %d bytes of field data, its class %s's fields take %d", oid, nb, c.name, c.dataLen)
		}
		if !in.fill(int(nb)) {
			return in.truncated("heap dump")
		}
		data := in.buf[in.r : in.r+int(nb)]
		i := rd.node
		rd.beginNode()
		if c.node >= 0 {
			rd.edge(etInternal, rd.nClass, c.node)
		}
		// The own fields of each class along the chain that has any; a
		// superclass's fields follow its subclasses' (layouts).
		for a := c.withRefs; a >= 0; {
			k := &rd.classes[a]
			base := c.dataLen - k.dataLen
			for _, f := range k.own {
				if id := rd.id(data[base+uint64(f.off):]); id != 0 {
					t := etField
					if f.weak {
						t = etWeak
					}
					rd.edgeTo(t, f.name, id)
				}
			}
			if k.superSlot < 0 {
				break
			}
			a = rd.classes[k.superSlot].withRefs
		}
		rd.threadFields(i, s, data)
		if rd.g.Nodes.Type[i] == ntString && !rd.isRegistered(i) {
			rd.registerString(i, data)
		}
	}
	if !in.skip(int64(nb)) {
		return in.truncated("heap dump")
	}
	return nil
}

// objArrayDump reads an OBJECT ARRAY DUMP.
func (rd *reader) objArrayDump(start, end int64) error {
	in := rd.in
	n := rd.idSize
	if !in.fill(2*n + 8) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	oid, length, cid := rd.id(b), u4(b[n+4:]), rd.id(b[n+8:])
	in.r += 2*n + 8
	size := uint64(length) * uint64(n)
	if err := rd.payload(start, subObjArrayDump, size, end); err != nil {
		return err
	}
	switch rd.pass {
	case 1:
		s := rd.slot(cid)
		rd.objArrElems += uint64(length)
		if _, err := rd.object(start, ntObjArray, uint32(s), oid, uint64(length)); err != nil {
			return err
		}
	case 2:
		rd.beginNode()
		if s, ok := rd.classByID[cid]; ok && rd.classes[s].node >= 0 {
			rd.edge(etInternal, rd.nClass, rd.classes[s].node)
		}
		const chunk = 4096
		for k := uint32(0); k < length; {
			m := min(length-k, chunk)
			if !in.fill(int(m) * n) {
				return in.truncated("heap dump")
			}
			data := in.buf[in.r:]
			for j := range m {
				if id := rd.id(data[int(j)*n:]); id != 0 {
					rd.edgeTo(etElement, k+j, id)
				}
			}
			in.r += int(m) * n
			k += m
		}
		return nil
	}
	if !in.skip(int64(size)) {
		return in.truncated("heap dump")
	}
	return nil
}

// primArrayDump reads a PRIMITIVE ARRAY DUMP (or Android's variant without
// data when hasData is false).
func (rd *reader) primArrayDump(start, end int64, hasData bool) error {
	in := rd.in
	n := rd.idSize
	if !in.fill(n + 9) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	oid, length, t := rd.id(b), u4(b[n+4:]), b[n+8]
	in.r += n + 9
	if t == tObject || rd.valueSize(t) == 0 {
		return in.errorf(start+int64(n)+9, "heap dump", "primitive array of invalid element type %d", t)
	}
	var size uint64
	if hasData {
		size = uint64(length) * uint64(rd.valueSize(t))
	}
	if err := rd.payload(start, subPrimArrayDump, size, end); err != nil {
		return err
	}
	switch rd.pass {
	case 1:
		rd.primArrays++
		if _, err := rd.object(start, ntPrimArray, rd.names.Intern([]byte(primNames[t])), oid, uint64(length)<<8|uint64(t)); err != nil {
			return err
		}
	case 2:
		rd.beginNode()
		if c := rd.primClass[t]; c >= 0 {
			rd.edge(etInternal, rd.nClass, c)
		}
	}
	if rd.pass > 1 && rd.wanted != nil && (t == tByte || t == tChar) && size > 0 {
		if k := rd.wanted.Get(oid); k >= 0 {
			if size > 1<<31 {
				return in.errorf(start, "heap dump", "string value array of %d bytes", size)
			}
			if !in.fill(int(size)) {
				return in.truncated("heap dump")
			}
			rd.decodeStrings(k, t, in.buf[in.r:in.r+int(size)])
		}
	}
	if !in.skip(int64(size)) {
		return in.truncated("heap dump")
	}
	return nil
}
