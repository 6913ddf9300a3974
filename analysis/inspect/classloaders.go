package inspect

import (
	"cmp"
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// ClassLoaderReport is the class-loader views of a Java heap: Eclipse
// MAT's Class Loader Explorer (each loader with the classes it defined
// and what they keep alive) and its Duplicate Classes (a class defined by
// more than one loader: the same name, different class objects).
type ClassLoaderReport struct {
	// Loaders are the class loaders, keeping the most alive first: every
	// loader a class names, every instance of a subclass of
	// java.lang.ClassLoader, and the bootstrap loader (Node NoNode) for
	// the classes without a loader object.
	Loaders []ClassLoader
	// Duplicates are the classes defined by more than one loader, the
	// most definitions first.
	Duplicates []DuplicateClass
}

// ClassLoader is one class loader.
type ClassLoader struct {
	// Node is the loader object, model.NoNode for the bootstrap loader.
	Node model.NodeIndex
	// Name is the name the loader was given (ClassLoader.getName(),
	// Java 9 and later: "app", "platform", a name its creator chose), ""
	// when it has none.
	Name string
	// Classes is how many classes it defined; Instances how many objects
	// of those classes the heap holds.
	Classes, Instances int
	// Retained is the loader object's retained size (0 for the bootstrap
	// loader).
	Retained uint64
	// WithClasses is what the loader and the classes it defined keep
	// alive together: the retained sizes of the loader and of each class
	// object that neither it nor another of them dominates. A loader
	// that stays alive after its application is undeployed keeps this.
	WithClasses uint64
}

// DuplicateClass is a class name more than one loader defined.
type DuplicateClass struct {
	Name        string
	Definitions []ClassDefinition
}

// ClassDefinition is one class object of a DuplicateClass.
type ClassDefinition struct {
	// Class is the class object; Loader the loader that defined it,
	// model.NoNode for the bootstrap loader.
	Class, Loader model.NodeIndex
	// Instances is how many objects of this class object the heap
	// holds; Retained the class object's retained size (its statics).
	Instances int
	Retained  uint64
}

// HPROF's names (formats/hprof) of what these views read.
const (
	hprofClassType   = "class"         // the node type of class objects
	hprofClassEdge   = "<class>"       // an object's edge to its class
	hprofLoaderEdge  = "<classloader>" // a class's edge to its loader
	hprofSuperEdge   = "<super>"       // a class's edge to its superclass
	classLoaderClass = "java.lang.ClassLoader"
)

// classInfo is what ClassLoaders knows of one class object.
type classInfo struct {
	node, loader, super model.NodeIndex
	name                string
	instances           int
	isLoader            int8 // 0 unknown, 1 a ClassLoader class, -1 not
}

// ClassLoaders returns the class-loader views of a Java heap (HPROF),
// nil for another runtime's.
func ClassLoaders(a *analysis.Analysis) *ClassLoaderReport {
	g := a.Graph
	classType := -1
	for i, t := range g.NodeTypes {
		if t.Namespace == kinds.HPROFNamespace && t.Name == hprofClassType {
			classType = i
		}
	}
	if classType < 0 {
		return nil
	}
	n := g.NumNodes()
	// slot[v] is 1 + v's index in classes for a class object, -(1 +
	// its group) for a loader object, 0 for any other node.
	slot := a.BorrowScratch(n, true)
	defer a.ReturnScratch(slot)
	classes := classObjects(g, uint8(classType), slot)
	loaders := loaderObjects(g, classes, slot)
	report := &ClassLoaderReport{Loaders: make([]ClassLoader, len(loaders)+1)}
	report.Loaders[0].Node = model.NoNode // the bootstrap loader: group 0
	groupOfClass := make([]int32, len(classes))
	for i, c := range classes {
		grp := int32(0)
		if c.loader != model.NoNode && slot[c.loader] < 0 {
			grp = -slot[c.loader] - 1
		}
		groupOfClass[i] = grp
		l := &report.Loaders[grp]
		l.Classes++
		l.Instances += c.instances
	}
	for i, v := range loaders {
		l := &report.Loaders[i+1]
		l.Node, l.Name, l.Retained = v, loaderName(g, v), a.Dominators.Retained[v]
	}
	with := a.GroupRetained(func(v int32) int32 {
		switch s := slot[v]; {
		case s > 0:
			return groupOfClass[s-1]
		case s < 0:
			return -s - 1
		}
		return -1
	}, len(report.Loaders))
	for i := range report.Loaders {
		report.Loaders[i].WithClasses = with[i]
	}
	if report.Loaders[0].Classes == 0 {
		report.Loaders = report.Loaders[1:]
	}
	slices.SortStableFunc(report.Loaders, func(x, y ClassLoader) int { return cmp.Compare(y.WithClasses, x.WithClasses) })
	report.Duplicates = duplicateClasses(a, classes)
	return report
}

// classObjects lists the class objects (nodes of type classType) with
// their names, loaders and superclasses, and marks them in slot.
func classObjects(g *model.Graph, classType uint8, slot []int32) []classInfo {
	var classes []classInfo
	for v := range g.NumNodes() {
		if g.Nodes.Type[v] != classType {
			continue
		}
		c := classInfo{node: model.NodeIndex(v), loader: model.NoNode, super: model.NoNode,
			name: strings.TrimPrefix(g.NodeName(model.NodeIndex(v)), "class ")}
		start, end := g.EdgeRange(model.NodeIndex(v))
		for e := start; e < end; e++ {
			if g.EdgeType(e).Category != model.EdgeInternal {
				continue
			}
			switch g.EdgeName(e) {
			case hprofLoaderEdge:
				c.loader = g.Edges.To[e]
			case hprofSuperEdge:
				c.super = g.Edges.To[e]
			}
		}
		classes = append(classes, c)
		slot[v] = int32(len(classes))
	}
	return classes
}

// loaderObjects counts the instances of each class, by each object's
// internal edge to its class object, and lists the class loaders in node
// order: the loaders the classes name and the instances of
// java.lang.ClassLoader's subclasses; each gets its group (1, 2, ... in
// that order) in slot.
func loaderObjects(g *model.Graph, classes []classInfo, slot []int32) []model.NodeIndex {
	for i := range classes {
		loaderClass(classes, slot, i)
	}
	var loaders []model.NodeIndex
	for _, c := range classes {
		if c.loader != model.NoNode {
			loaders = append(loaders, c.loader)
		}
	}
	// The edge's name is compared as a string until its StringID is
	// known.
	classEdge, known := model.StringID(0), false
	for v := range g.NumNodes() {
		start, end := g.EdgeRange(model.NodeIndex(v))
		for e := start; e < end; e++ {
			to := g.Edges.To[e]
			if slot[to] <= 0 || g.EdgeType(e).Category != model.EdgeInternal {
				continue
			}
			if !known {
				if g.EdgeName(e) != hprofClassEdge {
					continue
				}
				classEdge, known = g.Edges.Name[e], true
			}
			if g.Edges.Name[e] == classEdge {
				c := &classes[slot[to]-1]
				c.instances++
				if c.isLoader > 0 {
					loaders = append(loaders, model.NodeIndex(v))
				}
			}
		}
	}
	slices.Sort(loaders)
	loaders = slices.Compact(loaders)
	// A class object named as a loader (a broken dump) stays a class.
	loaders = slices.DeleteFunc(loaders, func(v model.NodeIndex) bool { return slot[v] > 0 })
	for i, v := range loaders {
		slot[v] = -int32(i+1) - 1
	}
	return loaders
}

// loaderName is the contents of the String a loader's name field holds.
func loaderName(g *model.Graph, v model.NodeIndex) string {
	start, end := g.EdgeRange(v)
	for e := start; e < end; e++ {
		to := g.Edges.To[e]
		if g.EdgeType(e).Category == model.EdgeProperty && g.NodeType(to).Category.IsString() && g.EdgeName(e) == "name" {
			return g.NodeName(to)
		}
	}
	return ""
}

// loaderClass says whether classes[i] is java.lang.ClassLoader or one of
// its subclasses, walking and marking its superclass chain.
func loaderClass(classes []classInfo, slot []int32, i int) bool {
	var walk []int
	j := i
	for classes[j].isLoader == 0 {
		c := &classes[j]
		if c.name == classLoaderClass {
			c.isLoader = 1
			break
		}
		walk = append(walk, j)
		if c.super == model.NoNode || slot[c.super] <= 0 || len(walk) > len(classes) {
			c.isLoader = -1
			break
		}
		j = int(slot[c.super] - 1)
	}
	// j is where the walk stopped: a class already known, or the chain's
	// end.
	for _, k := range walk {
		classes[k].isLoader = classes[j].isLoader
	}
	return classes[i].isLoader > 0
}

// duplicateClasses finds the class names more than one loader defined.
func duplicateClasses(a *analysis.Analysis, classes []classInfo) []DuplicateClass {
	byName := map[string][]int{}
	for i, c := range classes {
		byName[c.name] = append(byName[c.name], i)
	}
	var out []DuplicateClass
	for name, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		d := DuplicateClass{Name: name}
		loaders := map[model.NodeIndex]bool{}
		for _, i := range idx {
			c := classes[i]
			loaders[c.loader] = true
			d.Definitions = append(d.Definitions, ClassDefinition{Class: c.node, Loader: c.loader, Instances: c.instances,
				Retained: a.Dominators.Retained[c.node]})
		}
		if len(loaders) < 2 {
			// Hidden classes (lambdas, LambdaForms) of one loader share
			// a name once their addresses are dropped: one loader.
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y DuplicateClass) int {
		if c := cmp.Compare(len(y.Definitions), len(x.Definitions)); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return out
}
