package nodecore

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Functions decodes what a stack frame or a closure shows of JavaScript
// functions: a JSFunction's name, script and the line it starts on, the
// variables its context chain captures, and a short text of any tagged
// value. Its offsets come from the metadata; what the metadata does not
// describe (the variable part of a ScopeInfo past its local names) is found
// by the checks documented at each use. Safe for concurrent use.
type Functions struct {
	h *Heap

	fnShared, fnContext                      int64
	sfiName, sfiScript, sfiData, sfiTokenOff int64
	scriptSource, scriptName, scriptLineEnds int64
	uncompiledStart                          int64
	sfiType, scopeInfoType, scriptType       uint16
	heapNumberType, oddballType              uint16
	fixedArrayType                           uint16
	firstContext, lastContext                uint16
	ctxScopeInfo, ctxPrev, ctxMinSlots       int64
	siNLocals, siFirstVars                   int64
	oddballKind                              int64
	oddballNames                             map[int64]string
}

// NewFunctions reads the layout of functions, scripts, scope infos and
// contexts from p's metadata, or says what the metadata lacks.
func NewFunctions(p *Process) (*Functions, error) {
	h := p.Heap
	n := p.Meta.Need()
	f := &Functions{h: h}
	f.fnShared = n.Field("JSFunction.shared")
	f.fnContext = n.Field("JSFunction.context")
	f.sfiName = n.Field("SharedFunctionInfo.name_or_scope_info")
	// V8 12 renamed script_or_debug_info to raw_script.
	f.sfiScript = n.Field("SharedFunctionInfo.script_or_debug_info", "SharedFunctionInfo.raw_script", "SharedFunctionInfo.script")
	f.sfiTokenOff = n.Field("SharedFunctionInfo.raw_function_token_offset")
	f.scriptSource = n.Field("Script.source")
	f.scriptName = n.Field("Script.name")
	f.scriptLineEnds = n.Field("Script.line_ends")
	f.uncompiledStart = n.Field("UncompiledData.start_position")
	f.sfiType = n.Type("SHARED_FUNCTION_INFO_TYPE")
	f.scopeInfoType = n.Type("SCOPE_INFO_TYPE")
	f.scriptType = n.Type("SCRIPT_TYPE")
	f.heapNumberType = n.Type("HEAP_NUMBER_TYPE")
	f.oddballType = n.Type("ODDBALL_TYPE")
	f.fixedArrayType = n.Type("FIXED_ARRAY_TYPE")
	f.firstContext = uint16(n.Value("FirstContextType"))
	f.lastContext = uint16(n.Value("LastContextType"))
	f.ctxScopeInfo = n.Value("context_idx_scope_info")
	f.ctxPrev = n.Value("context_idx_prev")
	f.ctxMinSlots = n.Value("context_min_slots")
	f.siNLocals = n.Value("scopeinfo_idx_ncontextlocals")
	f.siFirstVars = n.Value("scopeinfo_idx_first_vars")
	f.oddballKind = n.Field("Oddball.kind_offset", "Oddball.kind")
	if err := n.Err(); err != nil {
		return nil, err
	}
	// SharedFunctionInfo's data field is optional: only uncompiled
	// functions' positions need it (V8 12 moved it out of the metadata).
	f.sfiData, _ = p.Meta.Field("SharedFunctionInfo", "function_data")
	f.oddballNames = map[int64]string{}
	for _, k := range []struct{ name, text string }{
		{"OddballUndefined", "undefined"}, {"OddballNull", "null"}, {"OddballTrue", "true"}, {"OddballFalse", "false"},
		{"OddballTheHole", "<the hole>"}, {"OddballUninitialized", "<uninitialized>"}, {"OddballArgumentsMarker", "<arguments marker>"},
		{"OddballException", "<exception>"}, {"OddballOther", "<other>"},
	} {
		if v, ok := p.Meta.Value(k.name); ok {
			f.oddballNames[v] = k.text
		}
	}
	return f, nil
}

// typeOf is the instance type of the object a tagged word points to, ok
// false when it is no heap object or its map is not a valid map.
func (f *Functions) typeOf(w uint64) (uint16, bool) {
	h := f.h
	if !h.IsHeapObject(w) {
		return 0, false
	}
	m, err := h.MapOf(h.Untag(w))
	if err != nil || !h.IsMap(m) {
		return 0, false
	}
	t, err := h.MapInstanceType(m)
	return t, err == nil
}

// field reads the tagged field at off of the object at address obj.
func (f *Functions) field(obj uint64, off int64) uint64 {
	w, _ := f.h.Word(obj, off)
	return w
}

// isContext reports whether a tagged word points to a Context.
func (f *Functions) isContext(w uint64) bool {
	t, ok := f.typeOf(w)
	return ok && t >= f.firstContext && t <= f.lastContext
}

// IsFunction reports whether a tagged word points to a JSFunction: a
// valid heap object whose shared field holds a SharedFunctionInfo and
// whose context field a Context. (JSFunction has several instance types
// since V8 10, for classes and builtin constructors; the fields decide.)
func (f *Functions) IsFunction(w uint64) bool {
	if _, ok := f.typeOf(w); !ok {
		return false
	}
	obj := f.h.Untag(w)
	t, ok := f.typeOf(f.field(obj, f.fnShared))
	return ok && t == f.sfiType && f.isContext(f.field(obj, f.fnContext))
}

// Function is what a frame or closure shows of a JSFunction.
type Function struct {
	// Addr is the JSFunction's address, Shared its SharedFunctionInfo's.
	Addr, Shared uint64
	// Name is the function's name, "" for an anonymous one.
	Name string
	// Script is its script's name (a path, node:internal/…), "" for
	// builtins and functions without one; ScriptAddr the Script.
	Script     string
	ScriptAddr uint64
	// Line and Column are where the function starts (1-based; 0 when not
	// known): the position V8 keeps, its parameters' opening parenthesis
	// for most functions.
	Line, Column uint32
	// Start is that position as a character offset in the source, -1
	// when not known.
	Start int
}

// Function decodes the JSFunction a tagged word points to.
func (f *Functions) Function(w uint64) (Function, error) {
	if !f.IsFunction(w) {
		return Function{}, fmt.Errorf("0x%x is not a JSFunction", w)
	}
	h := f.h
	fn := Function{Addr: h.Untag(w), Start: -1}
	sfiW := f.field(fn.Addr, f.fnShared)
	fn.Shared = h.Untag(sfiW)
	var scopeInfo uint64
	fn.Name, scopeInfo = f.sharedName(fn.Shared)
	scriptW := f.field(fn.Shared, f.sfiScript)
	if t, ok := f.typeOf(scriptW); ok && t == f.scriptType {
		fn.ScriptAddr = h.Untag(scriptW)
		if nw := f.field(fn.ScriptAddr, f.scriptName); f.isString(nw) {
			fn.Script = f.str(nw, 1000)
		}
	}
	if fn.ScriptAddr != 0 {
		fn.Start = f.startPosition(fn.Shared, scopeInfo, fn.ScriptAddr)
		if fn.Start >= 0 {
			fn.Line, fn.Column = f.lineColumn(fn.ScriptAddr, fn.Start)
		}
	}
	return fn, nil
}

// sharedName is the function name of the SharedFunctionInfo at address
// sfi, and the address of its ScopeInfo (0 when name_or_scope_info holds
// the name itself, or neither).
func (f *Functions) sharedName(sfi uint64) (name string, scopeInfo uint64) {
	w := f.field(sfi, f.sfiName)
	if t, ok := f.typeOf(w); ok {
		switch {
		case f.h.IsString(t):
			return f.str(w, 200), 0
		case t == f.scopeInfoType:
			si := f.h.Untag(w)
			return f.scopeInfoName(si), si
		}
	}
	return "", 0
}

func (f *Functions) isString(w uint64) bool {
	t, ok := f.typeOf(w)
	return ok && f.h.IsString(t)
}

// str decodes the string a tagged word points to, at most max units, ""
// when it is not one.
func (f *Functions) str(w uint64, max int) string {
	s, _, err := f.h.String(f.h.Untag(w), max)
	if err != nil {
		return ""
	}
	return s
}

// siWord is word k of a ScopeInfo's fields (k = 0 is its flags, as the
// metadata's scopeinfo_idx_* count).
func (f *Functions) siWord(si uint64, k int64) (uint64, bool) {
	w, err := f.h.Word(si, 8+8*k)
	return w, err == nil
}

// maxInlinedLocals is V8's ScopeInfo::kMaxInlinedLocalNamesSize: a scope
// with more context locals keeps their names in a hash table, one slot.
const maxInlinedLocals = 75

// scopeInfoLocals returns the number of context locals of a ScopeInfo and
// the word index past their names and infos (where the optional fields
// start).
func (f *Functions) scopeInfoLocals(si uint64) (n, past int64, ok bool) {
	w, ok := f.siWord(si, f.siNLocals)
	if !ok || !f.h.IsSmi(w) {
		return 0, 0, false
	}
	n = f.h.SmiValue(w)
	if n < 0 || n > 1<<16 {
		return 0, 0, false
	}
	names := n
	if n > maxInlinedLocals {
		names = 1
	}
	return n, f.siFirstVars + names + n, true
}

// scopeInfoName finds a function's name in its ScopeInfo. The metadata
// describes the ScopeInfo only up to its local names and infos; the
// function name is one of the optional fields after them, whose presence
// depends on flag bits the metadata does not give. As llnode does, the
// first non-empty string among the next few fields is taken: the name,
// or for a function without one (Module.prototype._compile = function
// …) the name V8 inferred, which is what DevTools shows.
func (f *Functions) scopeInfoName(si uint64) string {
	_, past, ok := f.scopeInfoLocals(si)
	if !ok {
		return ""
	}
	for k := past; k < past+5; k++ {
		w, ok := f.siWord(si, k)
		if !ok {
			return ""
		}
		if f.isString(w) {
			if s := f.str(w, 200); s != "" {
				return s
			}
		}
	}
	return ""
}

// startPosition is the function's start as a character offset in its
// script's source, -1 when not found. An uncompiled function keeps it in
// its UncompiledData; a compiled one in its ScopeInfo's position info,
// one of the optional fields the metadata does not place: the first pair
// of small integers start < end within the source where the source has
// the function's parameter list '(' at start (or, for functions whose
// start V8 puts elsewhere, whose token offset lands on a word) is taken.
func (f *Functions) startPosition(sfi, si, script uint64) int {
	h := f.h
	srcW := f.field(script, f.scriptSource)
	if !f.isString(srcW) {
		return -1
	}
	srcLen, err := h.StringLength(h.Untag(srcW))
	if err != nil || srcLen <= 0 {
		return -1
	}
	if f.sfiData != 0 {
		if dw := f.field(sfi, f.sfiData); h.IsHeapObject(dw) {
			if t, ok := f.typeOf(dw); ok && strings.HasPrefix(h.TypeName(t), "UNCOMPILED_DATA") {
				b, err := h.p.ReadBytes(h.Untag(dw)+uint64(f.uncompiledStart), 4)
				if err == nil {
					if s := int(int32(binary.LittleEndian.Uint32(b))); s >= 0 && s < srcLen {
						return s
					}
				}
			}
		}
	}
	if si == 0 {
		return -1
	}
	// From the fields after the header (V8 13 moved the position into
	// it) to a little past the locals.
	_, past, ok := f.scopeInfoLocals(si)
	if !ok {
		return -1
	}
	first := f.siNLocals + 1
	fallback := -1
	for k := first; k < past+8; k++ {
		if k >= f.siFirstVars && k < past {
			continue // local names and infos
		}
		a, ok1 := f.siWord(si, k)
		b, ok2 := f.siWord(si, k+1)
		if !ok1 || !ok2 || !h.IsSmi(a) || !h.IsSmi(b) {
			continue
		}
		start, end := h.SmiValue(a), h.SmiValue(b)
		if start < 0 || start >= end || end > int64(srcLen) {
			continue
		}
		if f.charAt(srcW, int(start)) == '(' {
			return int(start)
		}
		if fallback < 0 {
			fallback = int(start)
		}
	}
	return fallback
}

// charAt is the UTF-16 unit at index i of the string w points to, -1 on
// failure.
func (f *Functions) charAt(w uint64, i int) int {
	s, err := f.substring(w, i, 1)
	if err != nil || len(s) == 0 {
		return -1
	}
	return int(s[0])
}

// substring decodes units [from, from+n) of a string.
func (f *Functions) substring(w uint64, from, n int) (string, error) {
	var sb strings.Builder
	if err := f.h.appendString(&sb, f.h.Untag(w), from, n, 0); err != nil {
		return "", err
	}
	return sb.String(), nil
}

// lineColumn turns a source offset into a 1-based line and column, with
// the script's line_ends when V8 computed them (a heap snapshot or an
// error's stack trace does), else by counting the source's newlines.
func (f *Functions) lineColumn(script uint64, pos int) (line, col uint32) {
	h := f.h
	if le := f.field(script, f.scriptLineEnds); h.IsHeapObject(le) {
		if t, ok := f.typeOf(le); ok && t == f.fixedArrayType {
			arr := h.Untag(le)
			if nw, err := h.Word(arr, 8); err == nil && h.IsSmi(nw) {
				n := int(h.SmiValue(nw))
				// The first line end at or after pos: binary search.
				lo, hi := 0, n
				for lo < hi {
					mid := (lo + hi) / 2
					e, err := h.Word(arr, int64(16+8*mid))
					if err != nil || !h.IsSmi(e) {
						lo = -1
						break
					}
					if int(h.SmiValue(e)) < pos {
						lo = mid + 1
					} else {
						hi = mid
					}
				}
				if lo >= 0 && lo <= n {
					start := 0
					if lo > 0 {
						if e, err := h.Word(arr, int64(16+8*(lo-1))); err == nil {
							start = int(h.SmiValue(e)) + 1
						}
					}
					return uint32(lo + 1), uint32(pos - start + 1)
				}
			}
		}
	}
	src := f.field(script, f.scriptSource)
	if !f.isString(src) {
		return 0, 0
	}
	s, err := f.substring(src, 0, pos)
	if err != nil {
		return 0, 0
	}
	line = uint32(strings.Count(s, "\n") + 1)
	col = uint32(pos - (strings.LastIndexByte(s, '\n') + 1) + 1)
	return line, col
}

// Variable is one variable a context holds.
type Variable struct {
	Name string
	// Value is the tagged word the context slot holds.
	Value uint64
	// Slot is the slot's address.
	Slot uint64
}

// ContextVariables returns the variables of the context a tagged word
// points to and of its outer contexts, innermost first, up to limit of
// them; a name an inner context already gave is left out (it shadows the
// outer one). The native context ends the chain.
func (f *Functions) ContextVariables(ctxW uint64, limit int) []Variable {
	h := f.h
	var out []Variable
	seen := map[string]bool{}
	for depth := 0; depth < 64 && f.isContext(ctxW) && len(out) < limit; depth++ {
		ctx := h.Untag(ctxW)
		siW := f.field(ctx, 16+8*f.ctxScopeInfo)
		if t, ok := f.typeOf(siW); ok && t == f.scopeInfoType {
			si := h.Untag(siW)
			if n, _, ok := f.scopeInfoLocals(si); ok && n <= maxInlinedLocals {
				for i := int64(0); i < n && len(out) < limit; i++ {
					nw, ok := f.siWord(si, f.siFirstVars+i)
					if !ok || !f.isString(nw) {
						break
					}
					name := f.str(nw, 200)
					slot := ctx + uint64(16+8*(f.ctxMinSlots+i))
					v, err := h.p.ReadWord(slot)
					if err != nil || seen[name] {
						continue
					}
					seen[name] = true
					out = append(out, Variable{Name: name, Value: v, Slot: slot})
				}
			}
		}
		ctxW = f.field(ctx, 16+8*f.ctxPrev)
	}
	return out
}

// Describe is a short text of a tagged value as heapx shows it: 7, 3.5,
// "text" (quoted, cut at 80 characters), undefined, <function name>,
// <Class @0x…>.
func (f *Functions) Describe(w uint64) string {
	h := f.h
	if h.IsSmi(w) {
		return strconv.FormatInt(h.SmiValue(w), 10)
	}
	t, ok := f.typeOf(w)
	if !ok {
		return fmt.Sprintf("<0x%x>", w)
	}
	obj := h.Untag(w)
	switch {
	case h.IsString(t):
		s, cut, err := h.String(obj, 80)
		if err != nil {
			return fmt.Sprintf("<string @0x%x>", obj)
		}
		q := strconv.Quote(s)
		if cut {
			q += "…"
		}
		return q
	case t == f.heapNumberType:
		v, err := h.Number(obj)
		if err != nil {
			return fmt.Sprintf("<heap number @0x%x>", obj)
		}
		return formatNumber(v)
	case t == f.oddballType:
		b, err := h.p.ReadBytes(obj+uint64(f.oddballKind), 8)
		if err == nil {
			if s, ok := f.oddballNames[int64(binary.LittleEndian.Uint64(b))>>h.smiShift]; ok {
				return s
			}
			if s, ok := f.oddballNames[int64(int32(binary.LittleEndian.Uint32(b)))]; ok {
				return s
			}
		}
		return fmt.Sprintf("<oddball @0x%x>", obj)
	}
	if f.IsFunction(w) {
		fn, err := f.Function(w)
		if err == nil {
			name := fn.Name
			if name == "" {
				name = "(anonymous)"
			}
			return fmt.Sprintf("<function %s @0x%x>", name, obj)
		}
	}
	return fmt.Sprintf("<%s @0x%x>", f.className(obj, t), obj)
}

// className is the constructor's name of a JS object (following the map's
// back pointers to its constructor), else V8's type name.
func (f *Functions) className(obj uint64, t uint16) string {
	h := f.h
	m, err := h.MapOf(obj)
	if err != nil {
		return h.TypeName(t)
	}
	c := f.field(m, h.OffConstructor)
	for i := 0; i < 64 && h.IsHeapObject(c); i++ {
		if h.IsMap(h.Untag(c)) {
			c = f.field(h.Untag(c), h.OffConstructor)
			continue
		}
		if f.IsFunction(c) {
			if fn, err := f.Function(c); err == nil && fn.Name != "" {
				return fn.Name
			}
		}
		break
	}
	return h.TypeName(t)
}

// formatNumber writes a double as JavaScript prints it, near enough: 3.5,
// 7, 1e+21, NaN, Infinity.
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
