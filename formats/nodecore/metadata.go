package nodecore

import (
	"fmt"
	"sort"
	"strings"
)

// Metadata is V8's postmortem metadata (the v8dbg_* globals V8's
// tools/gen-postmortem-metadata.py links into node) and Node's own
// nodedbg_* globals, by name, with values as the process held them.
//
// Names are kept as the binary spells them minus the "v8dbg_" prefix
// ("SmiTag", "class_Map__instance_type__uint16_t",
// "type_JSObject__JS_OBJECT_TYPE"); Node's keep theirs
// ("nodedbg_offset_ExternalString__data__uintptr_t").
type Metadata struct {
	values map[string]int64
	// fields indexes class_<Class>__<field>__<type> by "<Class>__<field>":
	// V8 12's Tagged<T> migration renamed the type suffixes
	// (…__Object became …__Tagged_Object_), never the offsets.
	fields map[string]int64
	// types maps instance-type values to V8's names (JS_OBJECT_TYPE).
	types map[int64]string
	// Runtime names the Node and V8 the metadata came from, for messages
	// ("Node 20 (V8 11.3.244)").
	Runtime string
}

// newMetadata indexes raw symbol values (full symbol names).
func newMetadata(raw map[string]int64) *Metadata {
	m := &Metadata{values: map[string]int64{}, fields: map[string]int64{}, types: map[int64]string{}}
	for name, v := range raw {
		name = strings.TrimPrefix(name, "v8dbg_")
		m.values[name] = v
		if rest, ok := strings.CutPrefix(name, "class_"); ok {
			parts := strings.SplitN(rest, "__", 3)
			if len(parts) >= 2 {
				key := parts[0] + "__" + parts[1]
				// Two suffixes for one field (Map__prototype__Object and
				// __HeapObject) carry one offset; keep the smaller name's
				// for determinism.
				if old, ok := m.fields[key]; !ok || v < old {
					m.fields[key] = v
				}
			}
		}
		if rest, ok := strings.CutPrefix(name, "type_"); ok {
			if _, t, ok := strings.Cut(rest, "__"); ok {
				if old, ok := m.types[v]; !ok || t < old {
					m.types[v] = t
				}
			}
		}
	}
	return m
}

// Len is the number of symbols.
func (m *Metadata) Len() int { return len(m.values) }

// Names returns every symbol name, sorted.
func (m *Metadata) Names() []string {
	out := make([]string, 0, len(m.values))
	for n := range m.values {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Value returns the named constant ("SmiTag", "nodedbg_…"); a
// "v8dbg_" prefix is accepted and ignored.
func (m *Metadata) Value(name string) (int64, bool) {
	v, ok := m.values[strings.TrimPrefix(name, "v8dbg_")]
	return v, ok
}

// Field returns the byte offset of field in class (class_<class>__<field>
// whatever its type suffix).
func (m *Metadata) Field(class, field string) (int64, bool) {
	v, ok := m.fields[class+"__"+field]
	return v, ok
}

// Type returns the instance-type value V8 names name ("JS_OBJECT_TYPE").
func (m *Metadata) Type(name string) (int64, bool) {
	for v, n := range m.types {
		if n == name {
			return v, true
		}
	}
	return 0, false
}

// TypeName returns V8's name of an instance type ("JS_OBJECT_TYPE"), or ""
// when the metadata does not list it.
func (m *Metadata) TypeName(t uint16) string { return m.types[int64(t)] }

// Need starts a batch of required lookups: each miss is recorded, and Err
// reports them all at once, naming the runtime, so a reader says
// everything that is missing for this Node instead of the first name.
func (m *Metadata) Need() *Needs { return &Needs{m: m} }

// Needs collects the misses of required lookups (Metadata.Need).
type Needs struct {
	m       *Metadata
	missing []string
}

// Value returns the first of names present (alternatives across V8
// versions), recording a miss and returning 0 if none is.
func (n *Needs) Value(names ...string) int64 {
	for _, name := range names {
		if v, ok := n.m.Value(name); ok {
			return v
		}
	}
	n.missing = append(n.missing, strings.Join(names, " or "))
	return 0
}

// Field returns the offset of the first (class, field) present among
// class/field pairs given as "Class.field" strings, recording a miss if
// none is.
func (n *Needs) Field(pairs ...string) int64 {
	for _, p := range pairs {
		c, f, _ := strings.Cut(p, ".")
		if v, ok := n.m.Field(c, f); ok {
			return v
		}
	}
	n.missing = append(n.missing, "class_"+strings.ReplaceAll(strings.Join(pairs, " or "), ".", "__"))
	return 0
}

// Type returns the value of the instance type name, recording a miss.
func (n *Needs) Type(names ...string) uint16 {
	for _, name := range names {
		if v, ok := n.m.Type(name); ok {
			return uint16(v)
		}
	}
	n.missing = append(n.missing, "type "+strings.Join(names, " or "))
	return 0
}

// Err reports the misses, nil when there were none.
func (n *Needs) Err() error {
	if len(n.missing) == 0 {
		return nil
	}
	return fmt.Errorf("the postmortem metadata of %s lacks %s", n.m.Runtime, strings.Join(n.missing, ", "))
}
