package hprof

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/model"
)

func TestHiddenBase(t *testing.T) {
	for raw, want := range map[string]string{
		"LeakDemo$$Lambda$14/0x0000000800c03000":               "LeakDemo$$Lambda$14",
		"LeakDemo$$Lambda/0x000001d8a1003a00":                  "LeakDemo$$Lambda",
		"LeakDemo$$Lambda$1+0x00007f4a3c002a18":                "LeakDemo$$Lambda$1",
		"java/lang/invoke/LambdaForm$MH+0x00007f4a3c00c400":    "java/lang/invoke/LambdaForm$MH",
		"[Ljava/lang/invoke/LambdaForm$MH+0x00007f4a3c00c400;": "[Ljava/lang/invoke/LambdaForm$MH;",
		"[[LLeakDemo$$Lambda$1/0x0000000800c03000;":            "[[LLeakDemo$$Lambda$1;",
		"com/example/Plain":                                    "",
		"com/example/Short+0x12":                               "",
		"com/example/0x0000000800c03000/Inner":                 "",
		"com/example/Not+0x0000000800c0300g":                   "",
		"0x0000000800c03000":                                   "",
		"com/example/Plus0x0000000800c03000":                   "",
	} {
		got, ok := hiddenBase(raw)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("hiddenBase(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestHiddenClassesAcrossRuns reads the LeakDemo dumps of two runs of one
// program (issue 11.9): its four lambdas and the JDK's LambdaForms are
// hidden classes the JVM placed at other addresses in each run. Named
// without the address, every class matches across the runs, where 110
// classes changed, each lambda deleted in one row and new in another.
func TestHiddenClassesAcrossRuns(t *testing.T) {
	runs := []string{"java-leakdemo-small.hprof.gz", "java-leakdemo-small-gz.hprof.gz"}
	var as []*analysis.Analysis
	for i, name := range runs {
		g := open(t, name)
		lambdas := map[string]int{}
		for n := range g.NumNodes() {
			nm := g.NodeName(model.NodeIndex(n))
			if g.Nodes.Type[n] == ntString {
				continue // a String's name is its text: Class.getName() has the address
			}
			if strings.Contains(nm, "+0x") || strings.Contains(nm, "/0x") {
				t.Fatalf("%s: node %d named %q", name, n, nm)
			}
			if strings.Contains(nm, "$$Lambda") {
				lambdas[nm]++
			}
		}
		for k := 1; k <= 4; k++ {
			if nm := "class LeakDemo$$Lambda$" + string(rune('0'+k)); lambdas[nm] != 1 {
				t.Errorf("%s: %d nodes named %q, want 1 (%v)", name, lambdas[nm], nm, lambdas)
			}
		}
		// The full names are kept in the metadata, with the class id.
		addr := []string{"0x00007f4a3c002a18", "0x00007f2974002a18"}[i]
		var full []string
		for _, kv := range g.Meta {
			if kv.Key == "hprof:hidden_class" && strings.Contains(kv.Value, "LeakDemo$$Lambda$1+") {
				full = append(full, kv.Value)
			}
		}
		if len(full) != 1 || !strings.HasSuffix(full[0], " LeakDemo$$Lambda$1+"+addr) || !strings.HasPrefix(full[0], "0x") {
			t.Errorf("%s: hprof:hidden_class entries for Lambda$1: %q", name, full)
		}
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	d := leak.Diff(as[0], as[1])
	var changed []string
	for _, c := range d.Classes {
		changed = append(changed, c.Name)
	}
	if len(changed) != 0 {
		t.Errorf("%d classes changed across the runs: %q", len(changed), changed[:min(len(changed), 10)])
	}
}
