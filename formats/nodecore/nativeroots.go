package nodecore

import (
	"encoding/binary"
	"sort"
)

// NativeRoots are the heap's references from memory outside V8's pages,
// grouped as a heap snapshot groups its roots where the reader can tell
// what holds them. Each list holds indexes into the Objects, each once,
// in address order.
type NativeRoots struct {
	// GlobalStrong and GlobalWeak are the targets of V8's global handles
	// (v8::Global, v8::Persistent: Node's bindings, its BaseObjects'
	// wrappers), found by their blocks' layout; weak ones do not retain.
	GlobalStrong, GlobalWeak []int32
	// Microtasks are the microtasks queued and not yet run (V8's
	// MicrotaskQueue ring buffer, read through the native contexts).
	Microtasks []int32
	// Other is every other object that live native memory points to:
	// handle scopes, eternal handles, V8's string table, Node's C++ data,
	// the live part of the threads' stacks (a conservative scan).
	Other []int32
}

// MicrotaskQueue layout (src/execution/microtask-queue.h, V8 10 to 13): a
// C++ object with a vtable, then size_, capacity_, start_, ring_buffer_;
// the queued microtasks are ring_buffer_[(start_ + i) % capacity_] for i
// in [0, size_). A native context points to its queue from the raw word
// after its slots (NativeContext::kMicrotaskQueueOffset).
const (
	mtqSize       = 8
	mtqCapacity   = 16
	mtqStart      = 24
	mtqRingBuffer = 32
	mtqMaxEntries = 1 << 24
)

// microtaskQueue is one MicrotaskQueue found: its live entries (tagged
// words) and its ring buffer's memory, which the conservative scan leaves
// out (entries of microtasks already run stay there until overwritten).
type microtaskQueue struct {
	addr    uint64
	entries []uint64
	buffer  liveRange
}

// microtaskQueues reads the microtask queues the native contexts (object
// indexes) point to, each once; a word that does not lead to a queue of
// the layout above is ignored.
func (h *Heap) microtaskQueues(o *Objects, natives []int) []microtaskQueue {
	var out []microtaskQueue
	seen := map[uint64]bool{}
	for _, i := range natives {
		a := o.Addr[i]
		lw, err := h.p.ReadWord(a + 8)
		if err != nil || !h.IsSmi(lw) {
			continue
		}
		n := h.SmiValue(lw)
		if n <= 0 || uint64(16+8*n+8) > uint64(o.Size[i]) && o.Size[i] != 0 {
			continue
		}
		q, err := h.p.ReadWord(a + 16 + 8*uint64(n))
		if err != nil || q == 0 || q%8 != 0 || seen[q] {
			continue
		}
		if mq, ok := h.readMicrotaskQueue(q); ok {
			seen[q] = true
			out = append(out, mq)
		}
	}
	return out
}

// readMicrotaskQueue reads and checks the MicrotaskQueue at q.
func (h *Heap) readMicrotaskQueue(q uint64) (microtaskQueue, bool) {
	b, err := h.p.ReadBytes(q, 40)
	if err != nil {
		return microtaskQueue{}, false
	}
	le := binary.LittleEndian
	vtable := le.Uint64(b)
	size, capacity, start := le.Uint64(b[mtqSize:]), le.Uint64(b[mtqCapacity:]), le.Uint64(b[mtqStart:])
	ring := le.Uint64(b[mtqRingBuffer:])
	if !h.p.Mapped(vtable, 8) || capacity > mtqMaxEntries || size > capacity || (capacity > 0 && start >= capacity) {
		return microtaskQueue{}, false
	}
	mq := microtaskQueue{addr: q}
	if capacity == 0 {
		return mq, ring == 0
	}
	buf, err := h.p.ReadBytes(ring, int(8*capacity))
	if err != nil || ring%8 != 0 {
		return microtaskQueue{}, false
	}
	mq.buffer = liveRange{ring, ring + 8*capacity}
	for i := uint64(0); i < size; i++ {
		w := le.Uint64(buf[8*((start+i)%capacity):])
		if !h.IsHeapObject(w) {
			return microtaskQueue{}, false
		}
		mq.entries = append(mq.entries, w)
	}
	return mq, true
}

// Global handles (src/handles/global-handles.cc, V8 10 to 13) live in
// NodeBlocks of 256 nodes of 32 bytes: the object (tagged), a class id
// (2 bytes), the node's index in its block (1 byte), flags (1 byte: the
// state in the low 3 bits), then two words; after the nodes, five
// pointers and the count of nodes in use. The index bytes 0..255 at a
// stride of 32 are the blocks' signature.
const (
	ghNodeSize    = 32
	ghBlockNodes  = 256
	ghIndexByte   = 10
	ghFlagsByte   = 11
	ghStateMask   = 7
	ghStateFree   = 0
	ghStateNormal = 1 // strong
	ghBlockSize   = ghNodeSize*ghBlockNodes + 48
)

// globalHandleBlock reports whether a NodeBlock starts at byte off of
// data: the index bytes, and the count of nodes in use after the nodes
// equal to the nodes whose state is not free.
func globalHandleBlock(data []byte, off int) bool {
	if off+ghBlockSize > len(data) || data[off+ghIndexByte] != 0 || data[off+ghNodeSize+ghIndexByte] != 1 {
		return false
	}
	used := 0
	for i := range ghBlockNodes {
		n := data[off+ghNodeSize*i:]
		if n[ghIndexByte] != byte(i) {
			return false
		}
		if n[ghFlagsByte]&ghStateMask != ghStateFree {
			used++
		}
	}
	return binary.LittleEndian.Uint32(data[off+ghNodeSize*ghBlockNodes+40:]) == uint32(used)
}

// NativeRoots finds the references into the heap from memory outside
// V8's pages (docs/nodecore.md, "Roots"): the global handles and the
// microtask queues by their layouts, and a conservative scan of the rest
// of live native memory (in-use malloc chunks, static data, the live part
// of the threads' stacks). natives are the object indexes of the native
// contexts.
func (h *Heap) NativeRoots(pages []Page, o *Objects, natives []int) NativeRoots {
	var roots NativeRoots
	if o.Len() == 0 {
		return roots
	}
	mark := func(list *[]int32, w uint64, set []bool) {
		if !h.IsHeapObject(w) {
			return
		}
		if i := o.Index(h.Untag(w)); i >= 0 && !set[i] {
			set[i] = true
			*list = append(*list, int32(i))
		}
	}
	var skip []liveRange
	inMicrotasks := make([]bool, o.Len())
	for _, q := range h.microtaskQueues(o, natives) {
		for _, w := range q.entries {
			mark(&roots.Microtasks, w, inMicrotasks)
		}
		if q.buffer.hi > q.buffer.lo {
			skip = append(skip, q.buffer)
		}
	}
	sort.Slice(skip, func(i, j int) bool { return skip[i].lo < skip[j].lo })
	skipped := func(a uint64) (uint64, bool) {
		i := sort.Search(len(skip), func(i int) bool { return skip[i].hi > a })
		if i < len(skip) && a >= skip[i].lo {
			return skip[i].hi, true
		}
		return 0, false
	}

	lo, hi := o.Addr[0], o.Addr[o.Len()-1]
	strong, weak, other := make([]bool, o.Len()), make([]bool, o.Len()), make([]bool, o.Len())
	live := h.liveNative(pages)
	for _, s := range h.p.Segments() {
		i := sort.Search(len(live), func(i int) bool { return live[i].hi > s.Addr })
		if i == len(live) || live[i].lo >= s.End() {
			continue
		}
		data, err := h.p.ReadBytes(s.Addr, int(s.FileSize))
		if err != nil {
			continue
		}
		for ; i < len(live) && live[i].lo < s.End(); i++ {
			r := live[i]
			for off := int(r.lo - s.Addr); off+8 <= int(r.hi-s.Addr); off += 8 {
				a := s.Addr + uint64(off)
				if end, ok := skipped(a); ok {
					off = int(end-s.Addr) - 8
					continue
				}
				if globalHandleBlock(data, off) {
					for i := range ghBlockNodes {
						n := data[off+ghNodeSize*i:]
						switch n[ghFlagsByte] & ghStateMask {
						case ghStateFree:
						case ghStateNormal:
							mark(&roots.GlobalStrong, binary.LittleEndian.Uint64(n), strong)
						default:
							mark(&roots.GlobalWeak, binary.LittleEndian.Uint64(n), weak)
						}
					}
					off += ghBlockSize - 8
					continue
				}
				if w := binary.LittleEndian.Uint64(data[off:]); w&h.hoTagMask == h.hoTag && w-h.hoTag >= lo && w-h.hoTag <= hi {
					mark(&roots.Other, w, other)
				}
			}
		}
		h.p.Release(s.Addr, int(s.FileSize))
	}
	for _, l := range [][]int32{roots.GlobalStrong, roots.GlobalWeak, roots.Microtasks, roots.Other} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return roots
}
