package inspect_test

import (
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/model"
)

// javaThreads analyses testdata/hprof/java-threads.hprof.gz: OpenJDK 17
// running testdata/gen/ThreadsDemo.java (see testdata/gen/java-threads.sh).
func javaThreads(t *testing.T) *analysis.Analysis {
	t.Helper()
	g, err := hprof.ReadFile(filepath.Join("..", "..", "testdata", "hprof", "java-threads.hprof.gz"), hprof.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// outEdge is the node n's edge named name leads to, model.NoNode if none.
func outEdge(g *model.Graph, n model.NodeIndex, name string) model.NodeIndex {
	start, end := g.EdgeRange(n)
	for e := start; e < end; e++ {
		if g.EdgeName(e) == name {
			return g.Edges.To[e]
		}
	}
	return model.NoNode
}

// TestThreadStacksOfAJVM: what ThreadsDemo's threads hold, with the
// sizes the program's objects have. The thread "holder" is blocked in
// hold(), whose local is an ArrayList of capacity 1,000 holding 1,000
// Item of one int and nothing else holds them: the list retains itself,
// its array and the items, 24 + 4,016 + 1,000 x 16 = 20,040 bytes with
// compressed references, which the graph's shallow sizes add up to too.
// "nested" holds a byte[100000] in inner() and a HashMap in outer().
func TestThreadStacksOfAJVM(t *testing.T) {
	a := javaThreads(t)
	g := a.Graph
	ts := inspect.ThreadStacks(a)
	if len(ts) != len(g.Stacks) {
		t.Fatalf("%d threads for %d stacks", len(ts), len(g.Stacks))
	}
	byName := map[string]*inspect.ThreadStack{}
	for i := range ts {
		byName[ts[i].Stack.Name] = &ts[i]
	}
	holder, nested := byName["holder"], byName["nested"]
	if holder == nil || nested == nil {
		t.Fatalf("threads %v", byName)
	}
	list := holder.Values[1][0]
	if g.NodeName(list.Node) != "java.util.ArrayList" || list.Shallow != 24 || list.Retained != 20040 {
		t.Fatalf("hold()'s local: %s, shallow %d, retained %d; want an ArrayList retaining 20,040 bytes", g.NodeName(list.Node), list.Shallow, list.Retained)
	}
	arr := outEdge(g, list.Node, "elementData")
	sum := g.NodeSize(list.Node) + g.NodeSize(arr)
	items := 0
	start, end := g.EdgeRange(arr)
	for e := start; e < end; e++ {
		if to := g.Edges.To[e]; g.NodeName(to) == "ThreadsDemo$Item" {
			sum += g.NodeSize(to)
			items++
		}
	}
	if items != 1000 || sum != list.Retained {
		t.Errorf("the list's array holds %d Items; list, array and items are %d bytes, retained %d", items, sum, list.Retained)
	}
	buf, table := nested.Values[1][0], nested.Values[2][0]
	if g.NodeName(buf.Node) != "byte[]" || buf.Retained != 100016 || g.NodeName(table.Node) != "java.util.HashMap" {
		t.Errorf("nested holds %s (retained %d) and %s", g.NodeName(buf.Node), buf.Retained, g.NodeName(table.Node))
	}
	for _, th := range []*inspect.ThreadStack{holder, nested} {
		if th.Object == model.NoNode || g.NodeName(th.Object) != "java.lang.Thread" || th.Retained == 0 {
			t.Errorf("thread %q: object %d (%s), retained %d", th.Stack.Name, th.Object, g.NodeName(th.Object), th.Retained)
		}
		var all uint64
		for _, f := range th.Values {
			for _, v := range f {
				all += v.Retained
			}
		}
		if th.Held > all+th.Retained {
			t.Errorf("thread %q holds %d, more than its object and values retain (%d)", th.Stack.Name, th.Held, all+th.Retained)
		}
	}
	if min := holder.Retained + 20040; holder.Held < min {
		t.Errorf("holder holds %d, less than its object and list (%d)", holder.Held, min)
	}
	if min := nested.Retained + 100016 + table.Retained; nested.Held < min {
		t.Errorf("nested holds %d, less than its object, buffer and map (%d)", nested.Held, min)
	}
}

// TestSetRetained: a set counts each member's retained size once, and
// none of a member another member dominates.
func TestSetRetained(t *testing.T) {
	// root -> a -> b, root -> c -> b2; a retains b.
	g := analysistest.Build([]analysistest.Node{{Type: "synthetic"}, analysistest.Obj("A", 10), analysistest.Obj("B", 20), analysistest.Obj("C", 40), analysistest.Obj("D", 80)},
		[]analysistest.Edge{analysistest.Prop(0, 1, "a"), analysistest.Prop(1, 2, "b"), analysistest.Prop(0, 3, "c"), analysistest.Prop(3, 4, "d")})
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  []model.NodeIndex
		want uint64
	}{
		{[]model.NodeIndex{1, 2}, 30},
		{[]model.NodeIndex{2, 1, 2}, 30},
		{[]model.NodeIndex{2, 4}, 100},
		{[]model.NodeIndex{1, 3}, 150},
		{nil, 0},
	} {
		if got := inspect.SetRetained(a, c.set); got != c.want {
			t.Errorf("SetRetained(%v) = %d, want %d", c.set, got, c.want)
		}
	}
}

// TestClassLoadersOfAJVM: ThreadsDemo's loaders. Two URLClassLoaders,
// "plugins-0" and "plugins-1", each define Plugin (whose static byte[]
// is 50,016 bytes), so Plugin is defined twice; "widgets" defined Widget
// (a static byte[] of 1,000,016 bytes) and nothing holds it but the
// Widget kept in a static map, so it and its class keep the most alive.
func TestClassLoadersOfAJVM(t *testing.T) {
	a := javaThreads(t)
	g := a.Graph
	rep := inspect.ClassLoaders(a)
	if rep == nil {
		t.Fatal("no class-loader report for a Java heap")
	}
	byName := map[string]inspect.ClassLoader{}
	loaderName := map[model.NodeIndex]string{}
	var boot inspect.ClassLoader
	for _, l := range rep.Loaders {
		if l.Name != "" {
			byName[l.Name] = l
		}
		if l.Node == model.NoNode {
			boot = l
		}
		loaderName[l.Node] = l.Name
	}
	widgets := rep.Loaders[0]
	if widgets.Name != "widgets" || widgets.Classes != 1 || widgets.Instances != 1 || widgets.WithClasses < 1000016+widgets.Retained {
		t.Errorf("the loader keeping the most alive is %+v, want widgets keeping over 1,000,016 bytes", widgets)
	}
	for _, name := range []string{"plugins-0", "plugins-1"} {
		l, ok := byName[name]
		if !ok || l.Classes != 1 || l.Instances != 0 || l.WithClasses < 50016 || g.NodeName(l.Node) != "java.net.URLClassLoader" {
			t.Errorf("loader %s: %+v", name, l)
		}
	}
	if app := byName["app"]; app.Classes < 2 || app.Instances < 1000 {
		t.Errorf("the application loader (ThreadsDemo, its 1,000 Items): %+v", app)
	}
	// The platform loader defined no class here: it is found as an
	// instance of a ClassLoader subclass.
	if platform, ok := byName["platform"]; !ok || platform.Node == model.NoNode || g.NodeName(platform.Node) != "jdk.internal.loader.ClassLoaders$PlatformClassLoader" {
		t.Errorf("the platform loader: %+v", platform)
	}
	if boot.Classes < 500 || boot.Instances < 10000 {
		t.Errorf("the bootstrap loader: %+v", boot)
	}
	if len(rep.Duplicates) != 1 || rep.Duplicates[0].Name != "Plugin" || len(rep.Duplicates[0].Definitions) != 2 {
		t.Fatalf("duplicates %+v, want Plugin twice", rep.Duplicates)
	}
	seen := map[string]bool{}
	for _, d := range rep.Duplicates[0].Definitions {
		seen[loaderName[d.Loader]] = true
		if g.NodeName(d.Class) != "class Plugin" || d.Instances != 0 || d.Retained < 50016 {
			t.Errorf("a definition of Plugin: %+v (%s)", d, g.NodeName(d.Class))
		}
	}
	if !seen["plugins-0"] || !seen["plugins-1"] {
		t.Errorf("Plugin is defined by %v, want plugins-0 and plugins-1", seen)
	}
	v8 := analysistest.Build([]analysistest.Node{{Type: "synthetic"}, analysistest.Obj("A", 10)}, []analysistest.Edge{analysistest.Prop(0, 1, "a")})
	b, err := analysis.Analyze(v8, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := inspect.ClassLoaders(b); r != nil {
		t.Errorf("a V8 heap has class loaders: %+v", r)
	}
}
