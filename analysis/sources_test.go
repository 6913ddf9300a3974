package analysis_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

// TestResolverNamesScripts: in a real Node 20 snapshot, whose locations
// carry only script ids, every script with a function is named after the
// snapshot's Script object: Node's own modules "node:...", the
// fixture's program by its path; and every object location too, through
// the ids its functions named. Only V8's anonymous script (that of
// Function.prototype) stays "script ID".
func TestResolverNamesScripts(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-basic")
	r := a.Resolver()
	g := a.Graph
	unnamed, program := map[uint32]bool{}, 0
	for _, l := range g.Locations {
		p := r.Locate(l.ScriptID, l.Line, l.Column)
		if strings.HasPrefix(p.Script, "script ") {
			if s := analysis.FunctionScript(g, l.Node); s == model.NoNode || g.NodeName(s) != "" {
				unnamed[l.ScriptID] = true
			}
		}
		if strings.HasSuffix(p.Script, "/testdata/gen/make-fixtures.js") {
			program++
		}
		if p.Line != int32(l.Line)+1 || p.Column != int32(l.Column)+1 {
			t.Fatalf("location %+v at %+v: want one-based", l, p)
		}
	}
	if len(unnamed) > 0 || program == 0 {
		t.Errorf("%d script ids unnamed (%v); %d locations in make-fixtures.js", len(unnamed), unnamed, program)
	}
	// The Customer class of the fixture: its constructor's place.
	for v := range g.NumNodes() {
		if g.NodeName(int32(v)) == "Customer" && g.NodeType(int32(v)).Name == "object" {
			p, ok := r.NodePosition(int32(v))
			if !ok || analysis.ShortScriptName(p.Script) != "make-fixtures.js" || p.Line < 1 {
				t.Errorf("Customer @%d at %+v, %v", g.NodeID(int32(v)), p, ok)
			}
			break
		}
	}
	if s := r.ScriptName(1 << 30); s != "script 1073741824" {
		t.Errorf("an id nothing names: %q", s)
	}
}

// shift is a PositionMapper moving app.js's positions ten lines down
// into app.ts, as a source map would.
type shift struct{}

func (shift) MapPosition(p analysis.Position) (analysis.Position, bool) {
	if !strings.HasSuffix(p.Script, "/app.js") {
		return p, false
	}
	return analysis.Position{Script: "/src/app.ts", Line: p.Line + 10, Column: 1}, true
}

// TestResolverSideFileAndMapper: a scripts side file names what the
// snapshot does not and gives each script its record (source map URL);
// a file: URL shows as its path; a PositionMapper set on the Resolver
// maps every position it returns.
func TestResolverSideFileAndMapper(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{analysistest.Obj("", 0), analysistest.Obj("RequestContext", 64)}, []analysistest.Edge{analysistest.Prop(0, 1, "x")})
	g.Locations = []model.Location{{Node: 1, ScriptID: 81, Line: 14, Column: 2}}
	g.Scripts = &model.Scripts{List: []model.Script{{ID: 81, URL: "file:///srv/my%20app/app.js", SourceMapURL: "app.js.map"}}}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Resolver()
	p, ok := r.NodePosition(1)
	if want := (analysis.Position{ScriptID: 81, Script: "/srv/my app/app.js", Line: 15, Column: 3}); !ok || p != want {
		t.Errorf("position %+v, %v; want %+v", p, ok, want)
	}
	if p.Short() != "app.js:15:3" || p.String() != "/srv/my app/app.js:15:3" {
		t.Errorf("Short %q, String %q", p.Short(), p.String())
	}
	if s, ok := r.Script(81); !ok || s.SourceMapURL != "app.js.map" || s.URL != "file:///srv/my%20app/app.js" {
		t.Errorf("script 81: %+v, %v", s, ok)
	}
	r.SetMapper(shift{})
	if p, _ := r.NodePosition(1); p.Script != "/src/app.ts" || p.Line != 25 {
		t.Errorf("mapped: %+v", p)
	}
	if p := r.Resolve(analysis.Position{Script: "node:internal/timers", Line: 3}); p.Script != "node:internal/timers" || p.Line != 3 {
		t.Errorf("a position the mapper does not know: %+v", p)
	}
	r.SetMapper(nil)
	if p, _ := r.NodePosition(1); p.Script != "/srv/my app/app.js" {
		t.Errorf("after SetMapper(nil): %+v", p)
	}
}

// TestShortScriptName: what a sentence calls a script.
func TestShortScriptName(t *testing.T) {
	for in, want := range map[string]string{
		"/srv/app.js": "app.js",
		"/srv/node_modules/express/lib/router/index.js": "router/index.js",
		"https://example.com/static/main.3f2a.js?v=2#x": "main.3f2a.js",
		"node:internal/timers":                          "node:internal/timers",
		"script 81":                                     "script 81",
		"C:\\srv\\app.js":                               "app.js",
		"":                                              "",
		"https://example.com/":                          "example.com",
	} {
		if got := analysis.ShortScriptName(in); got != want {
			t.Errorf("ShortScriptName(%q) = %q, want %q", in, got, want)
		}
	}
}
