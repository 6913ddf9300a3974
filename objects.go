package heapx

import (
	"fmt"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// Object is one heap object with the columns of DevTools' object grids:
// ID (DevTools' @id), Type, Name, Class (the "Constructor"), Distance,
// Shallow and Retained size, and Node and Dominator, its own and its
// immediate dominator's index in Dump.Graph.
type Object struct {
	analysis.NodeRow
	label string
}

// Label is the object as DevTools' Object column shows it and the heapx
// command prints it: its name (its constructor when it has none) and its
// id, "LeakedItem @40123", with the id in hex where the runtime's ids are
// addresses (Java, Firefox: "@0x7f3a10"). A long name is cut to
// query.MaxNameWidth characters and what a terminal would act on is
// escaped, so a label stays on one line. V8's root, which has no name,
// is "(root) @1", as in heapx's path tables.
func (o Object) Label() string { return o.label }

// object is node n of a as an Object.
func object(a *analysis.Analysis, nm *analysis.Namer, n model.NodeIndex) Object {
	return Object{NodeRow: a.Row(nm, n), label: query.ObjectName(query.ShownNode(a, nm, n))}
}

// objectOf is the row r of g as an Object; r is not the root's.
func objectOf(g *model.Graph, r analysis.NodeRow) Object {
	return Object{NodeRow: r, label: query.ObjectName(query.NewNodeJSON(g, r))}
}

// Top returns the n objects with the largest retained sizes, largest
// first (the root excluded): what would be freed if that object alone
// became unreachable (heapx top).
func (d *Dump) Top(n int) ([]Object, error) {
	if n < 0 {
		return nil, fmt.Errorf("Top: n must be 0 or more, not %d", n)
	}
	a, err := d.Analysis()
	if err != nil {
		return nil, err
	}
	rows := a.Top(n)
	out := make([]Object, len(rows))
	for i, r := range rows {
		out[i] = objectOf(a.Graph, r)
	}
	return out, nil
}

// Object returns the object with runtime id id (the @id DevTools and heapx
// show; query.ParseID reads it as people write it, "@12345" or
// "0x7f3a10").
func (d *Dump) Object(id uint64) (Object, error) {
	a, err := d.Analysis()
	if err != nil {
		return Object{}, err
	}
	n, err := d.node(a, id)
	if err != nil {
		return Object{}, err
	}
	return object(a, analysis.NewNamer(a.Graph, a.DOM), n), nil
}

// node finds the node with runtime id id.
func (d *Dump) node(a *analysis.Analysis, id uint64) (model.NodeIndex, error) {
	n, ok := a.NodeByID(id)
	if !ok {
		return model.NoNode, fmt.Errorf("%s: no node with id %s", d.path, query.IDText(a.Graph, id))
	}
	return n, nil
}

// Path is one retainer path: a chain of references from the root of the
// graph to an object, which keeps the object alive.
type Path struct {
	// Root is the graph's root, where every path starts.
	Root Object
	// Steps are the references from Root to the object, in order.
	Steps []Step
	// System is true when the path starts at an internal root rather than
	// a user root (a global): DevTools shows its distance as "-".
	System bool
	// Distance is the path's DevTools-style length: its number of steps
	// from a user root, or 100000000 plus that from an internal root.
	Distance int64
}

// Step is one reference of a retainer path and the object it leads to.
type Step struct {
	// Edge is the reference as DevTools writes it: ".x" for a property,
	// "[3]" for an element, "->x" for a closure's variable, "{x}" for an
	// internal reference.
	Edge string
	// To is the object the reference leads to.
	To Object
}

// Paths returns up to k shortest retainer paths to the object with
// runtime id id, shortest first, paths from user roots before paths
// through internal roots; weak references are never followed (heapx
// paths). None means that nothing reachable keeps the object alive. Each
// step is an Object: a path down a linked list of a million items is a
// million steps.
func (d *Dump) Paths(id uint64, k int) ([]Path, error) {
	if k < 1 {
		return nil, fmt.Errorf("Paths: k must be 1 or more, not %d", k)
	}
	a, err := d.Analysis()
	if err != nil {
		return nil, err
	}
	target, err := d.node(a, id)
	if err != nil {
		return nil, err
	}
	nm := analysis.NewNamer(a.Graph, a.DOM)
	root := object(a, nm, a.Graph.Root)
	var out []Path
	for _, p := range a.Paths(target, analysis.PathOptions{K: k}) {
		q := Path{Root: root, Steps: make([]Step, len(p.Steps)), System: p.System, Distance: p.Cost}
		for i, s := range p.Steps {
			q.Steps[i] = Step{Edge: analysis.EdgeString(a.Graph, s.Edge), To: object(a, nm, s.To)}
		}
		out = append(out, q)
	}
	return out, nil
}

// Diff compares d with base, an earlier dump of the same program, as
// DevTools' Comparison view does with d selected and base as the
// baseline: per class, the objects new in d and those deleted since base,
// with their sizes (heapx diff BASE TARGET; leak.Diff says how
// objects are matched). The query "diff" (Query) lays the same out as a
// table, with warnings when the dumps look out of order or of two
// processes.
func (d *Dump) Diff(base *Dump) (*leak.DiffResult, error) {
	ab, err := base.Analysis()
	if err != nil {
		return nil, err
	}
	at, err := d.Analysis()
	if err != nil {
		return nil, err
	}
	r := leak.Diff(ab, at)
	if r == nil {
		return nil, fmt.Errorf("%s, %s: diff needs the classes of both dumps (an analysis without Options.Analysis.NoClasses)", base.path, d.path)
	}
	return r, nil
}
