package nodecore

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"

	"github.com/heapx/heapx/model"
)

// The frame walker. Official Node builds keep frame pointers (C++ is built
// with -fno-omit-frame-pointer and V8's own frames always link rbp), so
// each thread's stack is the chain of saved frame pointers from its
// NT_PRSTATUS rbp: at fp sit the caller's fp and, at fp+8, the return
// address into the caller. V8's frames say what they are in the slot at
// fp+off_fp_context_or_frame_type: a frame-type marker (the type shifted
// left by one, Smi-tagged) for entry, exit, internal and stub frames, the
// function's Context for a JavaScript frame, whose JSFunction is then at
// fp+off_fp_function, its argument count at fp-24 and its receiver and
// arguments from fp+off_fp_args up. The marker values change every Node
// major (InternalFrame is 19 on Node 18, 22 on Node 20, 23 on Node 24), so
// they come from the metadata's frametype_* constants.

// maxFrames bounds a walk, against a corrupt chain that stays in bounds.
const maxFrames = 10000

// maxClosureVars bounds the closure variables a frame lists, and
// maxArgsShown its arguments (all of them are roots).
const (
	maxClosureVars = 64
	maxArgsShown   = 256
)

// argcOffset is where V8's JavaScript frames keep the argument count
// (receiver included) since V8 8.9 (StandardFrameConstants::kArgCOffset);
// the metadata has no constant for it.
const argcOffset = -24

// frameLayout is what the walker needs of the metadata.
type frameLayout struct {
	offMarker, offFunction, offArgs int64
	// markers maps a frame type's marker word to its name.
	markers map[uint64]string
}

func newFrameLayout(p *Process) (*frameLayout, error) {
	n := p.Meta.Need()
	l := &frameLayout{markers: map[uint64]string{}}
	l.offMarker = n.Value("off_fp_context_or_frame_type", "off_fp_context")
	l.offFunction = n.Value("off_fp_function")
	l.offArgs = n.Value("off_fp_args")
	if err := n.Err(); err != nil {
		return nil, err
	}
	for _, name := range p.Meta.Names() {
		if t, ok := strings.CutPrefix(name, "frametype_"); ok {
			v, _ := p.Meta.Value(name)
			l.markers[uint64(v)<<1] = t
		}
	}
	if len(l.markers) == 0 {
		return nil, fmt.Errorf("the postmortem metadata of %s lacks frametype_* constants", p.Meta.Runtime)
	}
	return l, nil
}

// rawFrame is one frame of a walk, before it is described.
type rawFrame struct {
	fp, pc uint64
	kind   model.FrameKind
	typ    string // V8's frame type name, "" for native frames
	// JavaScript frames: the tagged function and context, and the
	// receiver followed by the arguments.
	fn, ctx uint64
	args    []uint64
	// argsAt is the address of the receiver slot.
	argsAt uint64
	// low is the lowest address of the frame's own slots (the inner
	// frame's caller stack pointer, or the thread's rsp).
	low uint64
}

// walker walks the threads of one process.
type walker struct {
	p   *Process
	l   *frameLayout
	fns *Functions
}

func newWalker(p *Process) (*walker, error) {
	l, err := newFrameLayout(p)
	if err != nil {
		return nil, err
	}
	fns, err := NewFunctions(p)
	if err != nil {
		return nil, err
	}
	return &walker{p: p, l: l, fns: fns}, nil
}

// walk follows t's frame-pointer chain. stop says why it ended early, ""
// when it reached a zero frame pointer (the outermost frame).
func (w *walker) walk(t *Thread) (frames []rawFrame, stop string) {
	rsp, fp, pc := t.RSP(), t.RBP(), t.RIP()
	seg := w.p.Segment(rsp)
	if seg == nil {
		return []rawFrame{{pc: pc, fp: fp, low: rsp}}, fmt.Sprintf("the stack pointer 0x%x is not in the core's memory", rsp)
	}
	// The stack ends where the segment's bytes in the core do: past them
	// are zeros (no frame), over whatever length the header claims.
	lo, hi := rsp, seg.Addr+seg.FileSize
	inStack := func(a uint64) bool { return a >= lo && a+16 <= hi && a%8 == 0 }
	if !inStack(fp) {
		// The thread stopped in code that uses rbp as a general register
		// (glibc is built without frame pointers): find the first frame
		// of the chain above rsp.
		frames = append(frames, rawFrame{pc: pc, low: rsp})
		if fp = w.findChain(lo, hi); fp == 0 {
			return frames, fmt.Sprintf("rbp 0x%x is not in the thread's stack [0x%x, 0x%x) and no frame chain was found above rsp", t.RBP(), lo, hi)
		}
		pc = 0
	}
	low := rsp
	for len(frames) < maxFrames {
		next, err1 := w.p.ReadWord(fp)
		ret, err2 := w.p.ReadWord(fp + 8)
		// The caller's frame holds this frame's arguments: they end
		// below its frame pointer (or the stack's end, for the last).
		argsEnd := hi
		if err1 == nil && next > fp && next < hi {
			argsEnd = next
		}
		f := w.classify(fp, pc, argsEnd)
		f.low = low
		frames = append(frames, f)
		if err1 != nil || err2 != nil {
			return frames, fmt.Sprintf("frame %d's frame pointer 0x%x cannot be read", len(frames)-1, fp)
		}
		if next == 0 {
			return frames, ""
		}
		if !inStack(next) || next <= fp {
			return frames, fmt.Sprintf("the frame pointer 0x%x saved at 0x%x is outside the thread's stack [0x%x, 0x%x) or not above it", next, fp, lo, hi)
		}
		low = fp + 16
		fp, pc = next, ret
	}
	return frames, fmt.Sprintf("more than %d frames", maxFrames)
}

// findChain scans the stack from lo for the first address that starts a
// chain of three frame pointers, each above the last and inside the
// stack, the last ending the chain or continuing it.
func (w *walker) findChain(lo, hi uint64) uint64 {
	const scan = 1 << 16 // bytes above rsp searched
	ok := func(a uint64) bool { return a > lo && a+16 <= hi && a%8 == 0 }
	for a := lo; a+16 <= hi && a < lo+scan; a += 8 {
		cur, good := a, 0
		for good < 3 {
			next, err := w.p.ReadWord(cur)
			if err != nil || (next != 0 && (!ok(next) || next <= cur)) {
				break
			}
			good++
			if next == 0 {
				if good >= 2 {
					good = 3
				}
				break
			}
			cur = next
		}
		if good >= 3 {
			return a
		}
	}
	return 0
}

// classify says what the frame at fp is by its marker slot; a JavaScript
// frame's receiver and arguments lie in [fp+off_fp_args, argsEnd).
func (w *walker) classify(fp, pc, argsEnd uint64) rawFrame {
	f := rawFrame{fp: fp, pc: pc, kind: model.FrameNative}
	h := w.p.Heap
	m, err := w.p.ReadWord(fp + uint64(w.l.offMarker))
	if err != nil {
		return f
	}
	if name, ok := w.l.markers[m]; ok {
		f.kind, f.typ = model.FrameRuntime, name
		return f
	}
	if !h.IsHeapObject(m) || !w.fns.isContext(m) {
		return f
	}
	fn, err := w.p.ReadWord(fp + uint64(w.l.offFunction))
	if err != nil || !w.fns.IsFunction(fn) {
		return f
	}
	// V8 tells an interpreted frame from a baseline or optimized one by
	// the code its pc is in, not by the frame: an on-stack-replaced loop
	// runs optimized code in the interpreter's frame, bytecode slot and
	// all, and since V8 12 the interpreter's builtins run from a copy
	// outside the binary. The frame is named by V8's common class.
	f.kind, f.fn, f.ctx, f.typ = model.FrameJS, fn, m, "JavaScriptFrame"
	// The argument count, receiver included; a frame whose count does
	// not read as one gets its receiver only.
	f.argsAt = fp + uint64(w.l.offArgs)
	argc := uint64(1)
	if c, err := w.p.ReadWord(uint64(int64(fp) + argcOffset)); err == nil && c >= 1 && c <= 1<<16 &&
		f.argsAt+8*c <= argsEnd {
		argc = c
	}
	for i := uint64(0); i < argc; i++ {
		v, err := w.p.ReadWord(f.argsAt + 8*i)
		if err != nil {
			break
		}
		f.args = append(f.args, v)
	}
	return f
}

// symbols are the node binary's function symbols, for naming native
// frames; loaded once, when a native frame is first described.
type symbols struct {
	once  sync.Once
	addr  []uint64
	size  []uint64
	names []string
}

func (s *symbols) load(p *Process) {
	s.once.Do(func() {
		ef, err := elf.Open(p.Binary)
		if err != nil {
			return
		}
		defer ef.Close()
		type sym struct {
			addr, size uint64
			name       string
		}
		var all []sym
		for _, get := range []func() ([]elf.Symbol, error){ef.Symbols, ef.DynamicSymbols} {
			syms, err := get()
			if err != nil {
				continue
			}
			for _, x := range syms {
				if elf.ST_TYPE(x.Info) == elf.STT_FUNC && x.Value != 0 {
					all = append(all, sym{x.Value + p.Bias, x.Size, x.Name})
				}
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].addr < all[j].addr })
		for _, x := range all {
			if n := len(s.addr); n > 0 && s.addr[n-1] == x.addr {
				continue
			}
			s.addr = append(s.addr, x.addr)
			s.size = append(s.size, x.size)
			s.names = append(s.names, x.name)
		}
	})
}

// lookup names the function holding pc as the binary spells it
// (mangled), "" if none does.
func (s *symbols) lookup(pc uint64) string {
	i := sort.Search(len(s.addr), func(i int) bool { return s.addr[i] > pc }) - 1
	if i < 0 || pc >= s.addr[i]+max(s.size[i], 1) {
		return ""
	}
	return s.names[i]
}

// readable demangles a C++ symbol, template arguments left out
// (node::Start(int, char**), not _ZN4node5StartEiPPc); other names are
// returned as they are.
func readable(name string) string {
	return demangle.Filter(name, demangle.NoTemplateParams)
}

// Stacks walks every thread of the process and describes its frames:
// JavaScript frames with their function, script, line, receiver,
// arguments and closure variables; V8's own frames by type; native frames
// by the node binary's symbol, or the mapped file and offset.
func (p *Process) Stacks() ([]model.Stack, error) {
	w, err := newWalker(p)
	if err != nil {
		return nil, fmt.Errorf("walking the stacks of %s: %w", p.Path, err)
	}
	var syms symbols
	out := make([]model.Stack, 0, len(p.Threads))
	for i := range p.Threads {
		t := &p.Threads[i]
		raw, stop := w.walk(t)
		s := model.Stack{Thread: uint64(uint32(t.TID)), Stop: stop}
		if i == 0 {
			// The first NT_PRSTATUS is the thread that dumped or
			// faulted; for gcore and a process's own abort, the main
			// thread, whose id is the process id.
			s.Name = "main"
		}
		for _, f := range raw {
			s.Frames = append(s.Frames, w.describe(&f, &syms))
		}
		out = append(out, s)
	}
	return out, nil
}

// describe turns a walked frame into the model's.
func (w *walker) describe(f *rawFrame, syms *symbols) model.Frame {
	h := w.p.Heap
	if f.kind == model.FrameRuntime {
		// A C++ frame whose slot below fp happens to hold a marker's
		// value: V8's typed frames run V8's generated code (the
		// embedded Builtins_* or JIT code), never a C++ function.
		syms.load(w.p)
		if s := syms.lookup(f.pc); s != "" && !strings.HasPrefix(s, "Builtins_") {
			f.kind = model.FrameNative
		}
	}
	mf := model.Frame{Kind: f.kind, PC: f.pc, FP: f.fp}
	switch f.kind {
	case model.FrameRuntime:
		mf.Type = "v8:" + f.typ
		return mf
	case model.FrameNative:
		mf.Function = w.nativeName(f.pc, syms)
		return mf
	}
	mf.Type = "v8:" + f.typ
	fn, err := w.fns.Function(f.fn)
	if err != nil {
		return mf
	}
	mf.Function, mf.Script, mf.Line, mf.Column = fn.Name, fn.Script, fn.Line, fn.Column
	if mf.Function == "" {
		mf.Function = "(anonymous)"
	}
	mf.FunctionNode = fn.Addr
	value := func(role model.ValueRole, name string, v uint64) model.FrameValue {
		fv := model.FrameValue{Role: role, Name: name, Text: w.fns.Describe(v)}
		switch {
		case h.IsSmi(v):
			fv.Smi, fv.IsSmi = h.SmiValue(v), true
		case h.IsHeapObject(v):
			fv.Node = h.Untag(v)
		}
		return fv
	}
	for i, a := range f.args {
		if i > maxArgsShown {
			break
		}
		if i == 0 {
			mf.Values = append(mf.Values, value(model.RoleReceiver, "this", a))
			continue
		}
		mf.Values = append(mf.Values, value(model.RoleArgument, strconv.Itoa(i-1), a))
	}
	for _, v := range w.fns.ContextVariables(w.fns.field(fn.Addr, w.fns.fnContext), maxClosureVars) {
		mf.Values = append(mf.Values, value(model.RoleClosure, v.Name, v.Value))
	}
	return mf
}

// nativeName names native code at pc: the node binary's symbol, else the
// mapped file and offset ("libc.so.6+0x8f2a1"), else "".
func (w *walker) nativeName(pc uint64, syms *symbols) string {
	if pc == 0 {
		return ""
	}
	syms.load(w.p)
	if s := syms.lookup(pc); s != "" {
		return readable(s)
	}
	for _, m := range w.p.Files {
		if pc >= m.Start && pc < m.End {
			return fmt.Sprintf("%s+0x%x", filepath.Base(m.Path), pc-m.Start+m.FileOffset)
		}
	}
	return ""
}

func init() {
	StackRoots = stackRoots
}

// stackRoots returns the heap references the threads' JavaScript frames
// hold: each frame's function, context, receiver and arguments, and every
// word of its own slots (an interpreted frame's registers, an optimized
// frame's spill slots; the safepoint tables that say which of those are
// tagged are not in the metadata, so every word is offered, and only those
// pointing to heap objects become edges). A slot is reported once.
func stackRoots(p *Process) ([]StackRoot, error) {
	w, err := newWalker(p)
	if err != nil {
		return nil, err
	}
	var out []StackRoot
	for i := range p.Threads {
		t := &p.Threads[i]
		frames, _ := w.walk(t)
		seen := map[uint64]bool{}
		add := func(slot, v uint64, frame int, name string) {
			if seen[slot] || !p.Heap.IsHeapObject(v) {
				return
			}
			seen[slot] = true
			out = append(out, StackRoot{Value: v, Thread: t.TID, Frame: frame, Name: name})
		}
		for k := range frames {
			f := &frames[k]
			if f.kind != model.FrameJS {
				continue
			}
			name := "(anonymous)"
			if fn, err := w.fns.Function(f.fn); err == nil && fn.Name != "" {
				name = fn.Name
			}
			add(f.fp+uint64(w.l.offFunction), f.fn, k, name+": function")
			add(f.fp+uint64(w.l.offMarker), f.ctx, k, name+": context")
			for j, a := range f.args {
				label := name + ": receiver"
				if j > 0 {
					label = name + ": argument " + strconv.Itoa(j-1)
				}
				add(f.argsAt+8*uint64(j), a, k, label)
			}
			for a := f.low; a+8 <= f.fp; a += 8 {
				if v, err := p.ReadWord(a); err == nil {
					add(a, v, k, fmt.Sprintf("%s: slot fp-%d", name, f.fp-a))
				}
			}
		}
	}
	return out, nil
}
