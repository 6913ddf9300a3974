package nodecore

import "strings"

// kind is the reader's coarse class of an instance type: how to size an
// object and walk its references.
type kind uint8

const (
	kindUnknown kind = iota
	kindString
	kindFiller
	kindFreeSpace
	kindFixedArray // map, length Smi, tagged elements
	kindFixedDoubleArray
	kindByteArray
	kindWeakArrayList
	kindPropertyArray
	kindDescriptorArray
	kindContext
	kindHashTable
	kindMap
	kindOddball
	kindHeapNumber
	kindSymbol
	kindBigInt
	kindSharedFunctionInfo
	kindScopeInfo
	kindScript
	kindCode
	kindFeedbackVector
	kindJSReceiver // any other JS object
	kindJSFunction
	kindJSBoundFunction
	kindJSArray
	kindJSCollection // JSMap, JSSet: a table
	kindJSWeakCollection
	kindJSGlobalObject
	kindJSGlobalProxy
	kindJSRegExp
	kindJSDate
	kindJSPrimitiveWrapper
	kindJSArrayBuffer
	kindJSTypedArray
	kindJSProxy
	kindJSPromise
	kindJSError
	kindJSGenerator
)

// kinds classifies every instance type by V8's name for it.
type kinds struct {
	kind [1 << 16]kind
	// fnFirst..fnLast are the unnamed types after JS_FUNCTION_TYPE that
	// may be JSFunction subtypes.
	fnFirst, fnLast uint16
}

// mapCallable is Map::bit_field's is_callable bit (bit 1 from V8 5 to 13).
const mapCallable = 1 << 1

// objKind is the kind of an object of type t with map m, telling the
// JSFunction subtypes the metadata does not name from other JSObjects.
func (h *Heap) objKind(k *kinds, t uint16, m uint64) kind {
	kd := k.kind[t]
	if kd == kindJSReceiver && t > k.fnFirst && t <= k.fnLast {
		if b, err := h.p.ReadBytes(m+uint64(h.OffBitField), 1); err == nil && b[0]&mapCallable != 0 {
			return kindJSFunction
		}
	}
	return kd
}

// kinds returns the classification, computed once.
func (h *Heap) kinds() *kinds {
	h.kindsOnce.Do(func() {
		k := &kinds{}
		for v, name := range h.p.Meta.types {
			if v < 0 || v >= 1<<16 {
				continue
			}
			k.kind[v] = kindOf(name)
		}
		first, _ := h.p.Meta.Value("FirstContextType")
		last, _ := h.p.Meta.Value("LastContextType")
		for t := first; t <= last && t > 0 && t < 1<<16; t++ {
			k.kind[t] = kindContext
		}
		// The metadata names only the types it has classes for: every
		// other type above 1024 (JS_OBJECT_TYPE's block) is a JSObject's.
		// V8's enum keeps JSFunction's subtypes (class, promise, array
		// and typed-array constructors) right after JS_FUNCTION_TYPE,
		// before other JSObject types: objKind tells them apart by their
		// maps' is_callable bit.
		for t := 1024; t < 1<<16; t++ {
			if _, named := h.p.Meta.types[int64(t)]; !named {
				k.kind[t] = kindJSReceiver
			}
		}
		if fn, ok := h.p.Meta.Type("JS_FUNCTION_TYPE"); ok {
			k.fnFirst = uint16(fn)
			for t := fn + 1; t < 1<<16; t++ {
				if _, named := h.p.Meta.types[t]; named {
					break
				}
				k.fnLast = uint16(t)
			}
		}
		for t := 0; t < int(h.FirstNonstringType); t++ {
			k.kind[t] = kindString
		}
		h.kindTable = k
	})
	return h.kindTable
}

// kindOf maps V8's instance-type names.
func kindOf(name string) kind {
	switch name {
	case "FREE_SPACE_TYPE":
		return kindFreeSpace
	case "FILLER_TYPE":
		return kindFiller
	case "FIXED_ARRAY_TYPE", "WEAK_FIXED_ARRAY_TYPE", "TRANSITION_ARRAY_TYPE", "EMBEDDER_DATA_ARRAY_TYPE",
		"TRUSTED_FIXED_ARRAY_TYPE", "TRUSTED_WEAK_FIXED_ARRAY_TYPE", "PROTECTED_FIXED_ARRAY_TYPE",
		"PROTECTED_WEAK_FIXED_ARRAY_TYPE", "CLOSURE_FEEDBACK_CELL_ARRAY_TYPE":
		return kindFixedArray
	case "FIXED_DOUBLE_ARRAY_TYPE":
		return kindFixedDoubleArray
	case "BYTE_ARRAY_TYPE", "TRUSTED_BYTE_ARRAY_TYPE":
		return kindByteArray
	case "WEAK_ARRAY_LIST_TYPE":
		return kindWeakArrayList
	case "PROPERTY_ARRAY_TYPE":
		return kindPropertyArray
	case "DESCRIPTOR_ARRAY_TYPE", "STRONG_DESCRIPTOR_ARRAY_TYPE":
		return kindDescriptorArray
	case "MAP_TYPE":
		return kindMap
	case "ODDBALL_TYPE", "HOLE_TYPE", "BOOLEAN_TYPE", "NULL_TYPE", "UNDEFINED_TYPE":
		return kindOddball
	case "HEAP_NUMBER_TYPE":
		return kindHeapNumber
	case "SYMBOL_TYPE":
		return kindSymbol
	case "BIGINT_TYPE":
		return kindBigInt
	case "SHARED_FUNCTION_INFO_TYPE":
		return kindSharedFunctionInfo
	case "SCOPE_INFO_TYPE":
		return kindScopeInfo
	case "SCRIPT_TYPE":
		return kindScript
	case "CODE_TYPE", "BYTECODE_ARRAY_TYPE", "INSTRUCTION_STREAM_TYPE", "CODE_DATA_CONTAINER_TYPE":
		return kindCode
	case "FEEDBACK_VECTOR_TYPE":
		return kindFeedbackVector
	case "JS_FUNCTION_TYPE", "JS_CLASS_CONSTRUCTOR_TYPE", "JS_PROMISE_CONSTRUCTOR_TYPE", "JS_REG_EXP_CONSTRUCTOR_TYPE",
		"JS_ARRAY_CONSTRUCTOR_TYPE":
		return kindJSFunction
	case "JS_BOUND_FUNCTION_TYPE":
		return kindJSBoundFunction
	case "JS_ARRAY_TYPE":
		return kindJSArray
	case "JS_MAP_TYPE", "JS_SET_TYPE":
		return kindJSCollection
	case "JS_WEAK_MAP_TYPE", "JS_WEAK_SET_TYPE":
		return kindJSWeakCollection
	case "JS_GLOBAL_OBJECT_TYPE":
		return kindJSGlobalObject
	case "JS_GLOBAL_PROXY_TYPE":
		return kindJSGlobalProxy
	case "JS_REG_EXP_TYPE":
		return kindJSRegExp
	case "JS_DATE_TYPE":
		return kindJSDate
	case "JS_PRIMITIVE_WRAPPER_TYPE":
		return kindJSPrimitiveWrapper
	case "JS_ARRAY_BUFFER_TYPE":
		return kindJSArrayBuffer
	case "JS_TYPED_ARRAY_TYPE", "JS_DATA_VIEW_TYPE":
		return kindJSTypedArray
	case "JS_PROXY_TYPE":
		return kindJSProxy
	case "JS_PROMISE_TYPE":
		return kindJSPromise
	case "JS_ERROR_TYPE":
		return kindJSError
	case "JS_GENERATOR_OBJECT_TYPE", "JS_ASYNC_FUNCTION_OBJECT_TYPE", "JS_ASYNC_GENERATOR_OBJECT_TYPE":
		return kindJSGenerator
	}
	switch {
	case strings.HasSuffix(name, "_FUNCTION_TYPE") && strings.HasPrefix(name, "JS_"):
		return kindJSFunction
	case strings.HasPrefix(name, "JS_") || name == "WASM_INSTANCE_OBJECT_TYPE":
		return kindJSReceiver
	case strings.Contains(name, "HASH_TABLE") || (strings.Contains(name, "DICTIONARY") &&
		!strings.HasPrefix(name, "SWISS") && !strings.HasPrefix(name, "SMALL_ORDERED") && !strings.Contains(name, "TEMPLATE")):
		return kindHashTable
	}
	return kindUnknown
}

// IsJSReceiver reports whether objects of type t are JavaScript objects
// (what DevTools lists as objects, closures, arrays...).
func (h *Heap) IsJSReceiver(t uint16) bool { return h.kinds().kind[t] >= kindJSReceiver }
