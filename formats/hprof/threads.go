// Threads: the graph's Stacks from HPROF's STACK TRACE and STACK FRAME
// records and the GC roots that name a thread: ROOT THREAD OBJECT (the
// java.lang.Thread and its stack trace), ROOT JAVA FRAME (an object a
// frame's local variables or operand stack hold, with the frame's depth)
// and ROOT JNI LOCAL (a JNI local reference, with its frame's depth).

package hprof

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heapx/heapx/model"
)

// threadRoot is a GC root record that names a thread.
type threadRoot struct {
	id     uint64
	node   int32 // resolved at the end of pass 1; -1 when the object is not in the dump
	tag    byte
	thread uint32 // the thread's serial number
	// num is the frame's depth (0: innermost; -1: none) for a Java frame
	// or JNI local, the stack trace's serial for a thread object.
	num int32
}

// threadState is what pass 2 decodes from a thread object's primitive
// fields, and from its Thread$FieldHolder's (JDK 19 and later keep the
// status there).
type threadState struct {
	tid       uint64
	hasTID    bool
	status    int32
	hasStatus bool
}

// threadLayout is where java.lang.Thread and Thread$FieldHolder keep the
// fields threadState reads, as byte offsets into their own fields (-1:
// the class has no such field).
type threadLayout struct {
	thread, holder          int32 // class slots, -1 when absent
	tid, status, holderStat int32
	objects                 []int32 // the thread objects' nodes, ascending
	next                    int     // pass 2: the next of objects to come
	states                  map[int32]threadState
}

// addThreadRoot keeps a GC root record that names a thread (pass 1); b is
// its body after the tag.
func (rd *reader) addThreadRoot(st byte, b []byte) {
	n := rd.idSize
	rd.threadRoots = append(rd.threadRoots, threadRoot{id: rd.id(b), node: -1, tag: st,
		thread: u4(b[n:]), num: int32(u4(b[n+4:]))})
}

// isThreadRoot says a root sub-record of tag st names a thread.
func isThreadRoot(st byte) bool {
	return st == rootThreadObject || st == rootJavaFrame || st == rootJNILocal
}

// resolveThreads finds the thread roots' nodes and the field layouts pass
// 2 decodes thread states with (end of pass 1, after layouts).
func (rd *reader) resolveThreads() {
	l := &rd.thr
	l.thread, l.holder = rd.slotNamed("java.lang.Thread"), rd.slotNamed("java.lang.Thread$FieldHolder")
	l.tid, l.status, l.holderStat = -1, -1, -1
	if l.thread >= 0 {
		l.tid = rd.ownField(l.thread, "tid", tLong)
		l.status = rd.ownField(l.thread, "threadStatus", tInt)
	}
	if l.holder >= 0 {
		l.holderStat = rd.ownField(l.holder, "threadStatus", tInt)
	}
	l.states = map[int32]threadState{}
	for i := range rd.threadRoots {
		r := &rd.threadRoots[i]
		r.node = rd.ids.Get(r.id)
		if r.tag == rootThreadObject && r.node >= 0 {
			l.objects = append(l.objects, r.node)
		}
	}
	slices.Sort(l.objects)
}

// ownField is the byte offset of class s's own field name of type t among
// its own fields, -1 when it has none.
func (rd *reader) ownField(s int32, name string, t byte) int32 {
	off := 0
	for _, f := range rd.classes[s].fields {
		if f.typ == t && rd.utf8[f.name] == name {
			return int32(off)
		}
		off += rd.valueSize(f.typ)
	}
	return -1
}

// threadFields decodes, in pass 2, the state of instance i of class slot
// s with field data data, when it is a thread object or a
// Thread$FieldHolder. Nodes come in ascending order, so one comparison
// per instance tells a thread object.
func (rd *reader) threadFields(i, s int32, data []byte) {
	l := &rd.thr
	for l.next < len(l.objects) && l.objects[l.next] < i {
		l.next++
	}
	switch {
	case s == l.holder && l.holderStat >= 0:
		st := l.states[i]
		st.status, st.hasStatus = int32(u4(data[l.holderStat:])), true
		l.states[i] = st
	case l.next < len(l.objects) && l.objects[l.next] == i && l.thread >= 0 && rd.extends(s, l.thread):
		base := rd.classes[s].dataLen - rd.classes[l.thread].dataLen
		st := l.states[i]
		if l.tid >= 0 {
			st.tid, st.hasTID = u8(data[base+uint64(l.tid):]), true
		}
		if l.status >= 0 {
			st.status, st.hasStatus = int32(u4(data[base+uint64(l.status):])), true
		}
		l.states[i] = st
	}
}

// extends says class slot s is class slot sup or one of its subclasses.
func (rd *reader) extends(s, sup int32) bool {
	for depth := 0; s >= 0 && depth <= len(rd.classes); depth++ {
		if s == sup {
			return true
		}
		s = rd.classes[s].superSlot
	}
	return false
}

// stacks makes the graph's Stacks, one per thread: the threads with a
// thread object in the order of their records, then any stack trace of a
// thread without one. A frame's values are the objects the Java frame and
// JNI local roots of its depth name, each once; those of no frame (depth
// -1, or past the stack's frames) go to a last frame of kind runtime.
// Roots of a thread with neither an object nor a stack trace are counted
// (metadata hprof:orphan_thread_roots), not made a stack each: a crafted
// file could name millions of threads.
func (rd *reader) stacks() {
	g := rd.g
	traceBySerial := map[uint32]int{}
	traceByThread := map[uint32]int{}
	for i, t := range rd.traces {
		traceBySerial[t.serial] = i
		if _, ok := traceByThread[t.thread]; !ok && t.thread != 0 {
			traceByThread[t.thread] = i
		}
	}
	bySerial := map[uint32]int{} // thread serial -> index in g.Stacks
	usedTrace := map[int]bool{}
	add := func(thread uint32, trace int, obj *threadRoot) {
		s := model.Stack{Thread: uint64(thread)}
		if obj != nil {
			s.Object = obj.id
		}
		if obj != nil && obj.node >= 0 {
			s.Name = rd.threadName(obj.node)
			st := rd.thr.states[obj.node]
			if st.hasTID {
				s.Thread = st.tid
			}
			s.State = rd.threadStatus(obj.node, st)
		}
		if trace >= 0 {
			usedTrace[trace] = true
			for _, fid := range rd.traces[trace].frames {
				s.Frames = append(s.Frames, rd.javaFrame(fid))
			}
		}
		bySerial[thread] = len(g.Stacks)
		g.Stacks = append(g.Stacks, s)
	}
	for i := range rd.threadRoots {
		r := &rd.threadRoots[i]
		if r.tag != rootThreadObject {
			continue
		}
		if _, dup := bySerial[r.thread]; dup {
			continue
		}
		t, ok := traceBySerial[uint32(r.num)]
		if !ok {
			if t, ok = traceByThread[r.thread]; !ok {
				t = -1
			}
		}
		add(r.thread, t, r)
	}
	for i, t := range rd.traces {
		if _, seen := bySerial[t.thread]; !seen && !usedTrace[i] && t.thread != 0 {
			add(t.thread, i, nil)
		}
	}
	seen := map[valueKey]bool{}
	for i := range rd.threadRoots {
		r := &rd.threadRoots[i]
		if r.tag == rootThreadObject || r.node < 0 {
			continue
		}
		si, ok := bySerial[r.thread]
		if !ok {
			rd.orphanRoots++
			continue
		}
		rd.addFrameValue(&g.Stacks[si], r, si, seen)
	}
}

// valueKey is a frame value as addFrameValue keeps it once: its stack,
// frame, role and object.
type valueKey struct {
	stack, frame int
	role         model.ValueRole
	id           uint64
}

// addFrameValue adds the object of Java frame or JNI local root r to its
// frame of s (stack si), unless that frame has it already (seen).
func (rd *reader) addFrameValue(s *model.Stack, r *threadRoot, si int, seen map[valueKey]bool) {
	fi := int(r.num)
	if r.num < 0 || fi >= len(s.Frames) || s.Frames[fi].Kind != model.FrameJava {
		fi = len(s.Frames) - 1
		if fi < 0 || s.Frames[fi].Type != noFrame {
			s.Frames = append(s.Frames, model.Frame{Kind: model.FrameRuntime, Type: noFrame})
			fi++
		}
	}
	f := &s.Frames[fi]
	role := model.RoleLocal
	if r.tag == rootJNILocal {
		role = model.RoleJNILocal
	}
	key := valueKey{si, fi, role, r.id}
	if seen[key] {
		return
	}
	seen[key] = true
	f.Values = append(f.Values, model.FrameValue{Role: role, Node: r.id, Text: rd.valueText(r.node, r.id)})
}

// noFrame is the type of the frame that holds what a thread's roots name
// outside its Java frames (JNI locals of a thread in native code).
const noFrame = Namespace + ":outside Java frames"

// javaFrame turns STACK FRAME fid into a model frame.
func (rd *reader) javaFrame(fid uint64) model.Frame {
	f, ok := rd.frames[fid]
	if !ok {
		return model.Frame{Kind: model.FrameJava, Type: Namespace + ":missing frame", Function: fmt.Sprintf("(frame 0x%x)", fid)}
	}
	fr := model.Frame{Kind: model.FrameJava, Function: rd.frameClass(f) + "." + rd.utf8[f.method], Script: rd.utf8[f.source]}
	switch {
	case f.line > 0:
		fr.Line = uint32(f.line)
	case f.line == -1:
		fr.Type = Namespace + ":unknown location"
	case f.line == -2:
		fr.Type = Namespace + ":compiled method"
	case f.line == -3:
		fr.Type = Namespace + ":native method"
	}
	return fr
}

// frameClass is the Java name of a frame's class.
func (rd *reader) frameClass(f frame) string {
	cid, ok := rd.classSerial[f.classSerial]
	if !ok {
		return fmt.Sprintf("(class serial %d)", f.classSerial)
	}
	if s, ok := rd.classByID[cid]; ok {
		return rd.classes[s].name
	}
	raw := rd.utf8[rd.loadClass[cid]]
	if base, ok := hiddenBase(raw); ok {
		raw = base
	}
	return javaName(raw)
}

// threadName is the contents of the String a thread object's name field
// holds, "" when it has none.
func (rd *reader) threadName(n int32) string {
	g := rd.g
	for e := g.Nodes.FirstEdge[n]; e < g.Nodes.FirstEdge[n+1]; e++ {
		to := g.Edges.To[e]
		if g.Edges.Type[e] == etField && g.Strings.At(g.Edges.Name[e]) == "name" && g.Nodes.Type[to] == ntString {
			return g.NodeName(to)
		}
	}
	return ""
}

// threadStatus is the java.lang.Thread.State of a thread object, as
// jdk.internal.misc.VM.toThreadState reads the JVMTI status bits the
// field threadStatus holds (on the thread, or on its holder since JDK
// 19); "" when the dump has neither.
func (rd *reader) threadStatus(n int32, st threadState) string {
	if !st.hasStatus {
		g := rd.g
		for e := g.Nodes.FirstEdge[n]; e < g.Nodes.FirstEdge[n+1]; e++ {
			if g.Edges.Type[e] == etField && g.Strings.At(g.Edges.Name[e]) == "holder" {
				st = rd.thr.states[g.Edges.To[e]]
				break
			}
		}
		if !st.hasStatus {
			return ""
		}
	}
	const (
		alive        = 0x0001
		terminated   = 0x0002
		runnable     = 0x0004
		waitForever  = 0x0010
		waitTimeout  = 0x0020
		blockedEnter = 0x0400
	)
	switch s := st.status; {
	case s&runnable != 0:
		return "RUNNABLE"
	case s&blockedEnter != 0:
		return "BLOCKED"
	case s&waitForever != 0:
		return "WAITING"
	case s&waitTimeout != 0:
		return "TIMED_WAITING"
	case s&terminated != 0:
		return "TERMINATED"
	case s&alive == 0:
		return "NEW"
	}
	return "RUNNABLE"
}

// maxValueText bounds the characters of a String's contents a frame
// value's text shows.
const maxValueText = 60

// valueText is how a frame value shows object id (node n): a String by
// its contents, quoted; any other object as <class @0xid>.
func (rd *reader) valueText(n int32, id uint64) string {
	g := rd.g
	if g.Nodes.Type[n] == ntString {
		s := g.NodeName(n)
		if r := []rune(s); len(r) > maxValueText {
			s = string(r[:maxValueText]) + "…"
		}
		return strconv.Quote(s)
	}
	return "<" + strings.TrimSpace(g.NodeName(n)) + " @0x" + strconv.FormatUint(id, 16) + ">"
}
