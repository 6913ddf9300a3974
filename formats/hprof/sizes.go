package hprof

import "github.com/heapx/heapx/model"

// sizes computes the shallow size of every node by VisualVM's rule (see
// the package doc); until now Size held what it needs: the class slot of
// instances, the length of object arrays, length<<8 | element type of
// primitive arrays.
func (rd *reader) sizes() {
	g := rd.g
	oop, header := uint64(rd.idSize), uint64(2*rd.idSize)
	exact := false // instance sizes as the CLASS DUMPs state them
	if s := rd.slotNamed("java.lang.Object"); s >= 0 && rd.classes[s].rawSize > 0 {
		exact = true
		header = uint64(rd.classes[s].rawSize)
		switch oop = header - uint64(rd.idSize); {
		case header < uint64(rd.idSize):
			oop = 4
		case oop != 4 && oop != 8:
			oop = 4
			if header-uint64(rd.idSize) >= 8 {
				oop = 8
			}
		}
	} else if rd.idSize == 8 {
		oop = rd.guessOop()
		header = 8 + oop
	}
	rd.oop, rd.header = oop, header
	align := func(x uint64) uint64 { return (x + 7) &^ 7 }
	for s := range rd.classes {
		c := &rd.classes[s]
		if exact {
			c.instSize = uint64(c.rawSize)
		} else {
			c.instSize = align(header + c.fieldSum[0] + c.fieldSum[1]*oop)
		}
	}
	var classSize uint64
	if s := rd.slotNamed("java.lang.Class"); s >= 0 {
		classSize = rd.classes[s].instSize
	}
	nd := &g.Nodes
	for i, t := range nd.Type {
		switch t {
		case ntInstance, ntString:
			nd.Size.Set(i, rd.classes[nd.Size.At(i)].instSize)
		case ntObjArray:
			nd.Size.Set(i, align(header+4+oop*nd.Size.At(i)))
		case ntPrimArray:
			v := nd.Size.At(i)
			nd.Size.Set(i, align(header+4+uint64(rd.valueSize(byte(v)))*(v>>8)))
		case ntClass:
			nd.Size.Set(i, classSize)
		}
	}
}

// guessOop tells a 64-bit VM's reference size as VisualVM does: from
// unsafe field offsets two classes keep as long statics, else from the
// java.vm.compressedOopsMode system property, which HotSpot sets only
// with compressed oops.
func (rd *reader) guessOop() uint64 {
	for _, p := range [][3]string{
		{"java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset"},
		{"java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset"},
	} {
		s := rd.slotNamed(p[0])
		if s < 0 {
			continue
		}
		var a, b uint64
		var n int
		for _, l := range rd.classes[s].longs {
			switch rd.utf8[l.name] {
			case p[1]:
				a, n = l.value, n+1
			case p[2]:
				b, n = l.value, n+1
			}
		}
		if d := b - a; n == 2 && (d == 4 || d == 8) {
			return d
		}
	}
	if rd.systemProperty("java.vm.compressedOopsMode") {
		return 4
	}
	return 8
}

// systemProperty reports whether the system properties (java.lang.System's
// static props, a Properties whose entries are in its map's table in JDK
// 9+, in its own Hashtable table before) hold key.
func (rd *reader) systemProperty(key string) bool {
	g := rd.g
	s := rd.slotNamed("java.lang.System")
	if s < 0 {
		return false
	}
	props := rd.follow(rd.classes[s].node, "props")
	if props < 0 {
		props = rd.follow(rd.classes[s].node, "systemProperties")
	}
	if props < 0 {
		return false
	}
	if m := rd.follow(props, "map"); m >= 0 {
		props = m
	}
	table := rd.follow(props, "table")
	if table < 0 {
		return false
	}
	start, end := g.EdgeRange(table)
	for e := start; e < end; e++ {
		if g.Edges.Type[e] != etElement {
			continue
		}
		for entry, steps := g.Edges.To[e], 0; entry >= 0 && steps < g.NumNodes(); steps++ {
			if k := rd.follow(entry, "key"); k >= 0 && g.Nodes.Type[k] == ntString && g.NodeName(k) == key {
				return true
			}
			entry = rd.follow(entry, "next")
		}
	}
	return false
}

// follow returns the target of n's named edge called name, or -1.
func (rd *reader) follow(n model.NodeIndex, name string) model.NodeIndex {
	g := rd.g
	if n < 0 {
		return -1
	}
	start, end := g.EdgeRange(n)
	for e := start; e < end; e++ {
		if !g.EdgeTypes[g.Edges.Type[e]].Indexed && g.Strings.At(g.Edges.Name[e]) == name {
			return g.Edges.To[e]
		}
	}
	return -1
}
