package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each step is read as a person writes it, and a mistake is an error that
// says where it is and what a step looks like.
func TestParseStep(t *testing.T) {
	for _, c := range []struct {
		text string
		want Step
	}{
		{"click #open", Step{Kind: StepClick, Selector: "#open"}},
		{"click  .menu > li:first-child ", Step{Kind: StepClick, Selector: ".menu > li:first-child"}},
		{"type #q hello world", Step{Kind: StepType, Selector: "#q", Arg: "hello world"}},
		{`type "form input[name=q]" "two  words"`, Step{Kind: StepType, Selector: "form input[name=q]", Arg: "two  words"}},
		{"type #q 'it''s'", Step{Kind: StepType, Selector: "#q", Arg: "it''s"}},
		{"press Escape", Step{Kind: StepPress, Arg: "Escape"}},
		{"press Control+a", Step{Kind: StepPress, Arg: "Control+a"}},
		{"goto /settings?tab=2", Step{Kind: StepGoto, Arg: "/settings?tab=2"}},
		{"wait 250", Step{Kind: StepWait, Delay: 250 * time.Millisecond}},
		{"wait 1.5s", Step{Kind: StepWait, Delay: 1500 * time.Millisecond}},
		{"wait .modal[open]", Step{Kind: StepWait, Selector: ".modal[open]"}},
		{"EVAL await app.ready; app.flush()", Step{Kind: StepEval, Arg: "await app.ready; app.flush()"}},
	} {
		got, err := ParseStep(c.text, "--action")
		c.want.Text, c.want.Where = strings.TrimSpace(c.text), "--action"
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.text, got, err, c.want)
		}
	}
	for text, want := range map[string]string{
		"hover #x":             `--action: "hover #x" is not a step: a step is click SELECTOR`,
		"click":                `--action: "click" needs a CSS selector`,
		"type":                 `needs a CSS selector and the text to type`,
		`type "#q hello`:       `the selector's quote " is not closed`,
		"press Hyper+a":        `"Hyper" is not a modifier`,
		"press Return":         `"Return" is not a key`,
		"wait":                 `needs a CSS selector or a number of milliseconds`,
		"eval   ":              `"eval" needs JavaScript to run`,
		"goto":                 `"goto" needs a URL`,
		"press Control+Escape": "",
	} {
		_, err := ParseStep(text, "--action")
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", text, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}

// Keys are what DevTools' Input domain takes: the DOM's key and code,
// Windows' virtual key code, the text they type, the modifiers' bits.
func TestParseKey(t *testing.T) {
	for name, want := range map[string]key{
		"Enter":       {key: "Enter", code: "Enter", vk: 13, text: "\r"},
		"a":           {key: "a", code: "KeyA", vk: 'A', text: "a"},
		"Z":           {key: "Z", code: "KeyZ", vk: 'Z', text: "Z"},
		"7":           {key: "7", code: "Digit7", vk: '7', text: "7"},
		"/":           {key: "/", text: "/"},
		"+":           {key: "+", text: "+"},
		"Control++":   {key: "+", modifiers: 2},
		"Control+a":   {key: "a", code: "KeyA", vk: 'A', modifiers: 2},
		"Shift+Tab":   {key: "Tab", code: "Tab", vk: 9, modifiers: 8},
		"Shift+a":     {key: "a", code: "KeyA", vk: 'A', text: "a", modifiers: 8},
		"Alt+Meta+F5": {key: "F5", code: "F5", vk: 116, modifiers: 5},
		"é":           {key: "é", text: "é"},
	} {
		got, err := parseKey(name)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "F13", "Enterr", "Control+", "ab"} {
		if _, err := parseKey(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A scenario file is JSON or lines; both give the same scenario, and a
// mistake names the file and its line.
func TestParseScenario(t *testing.T) {
	lines := `# the dialog leaks its listener
url http://localhost:8080/app
repeat 5

setup:
  click #login
action:
  click .open
  wait .modal
  eval await \
    window.app.idle()
back:
  press Escape
`
	js := `{"url": "http://localhost:8080/app", "repeat": 5,
		"setup": ["click #login"],
		"action": ["click .open", "wait .modal", "eval await \nwindow.app.idle()"],
		"back": ["press Escape"]}`
	want := "http://localhost:8080/app 5 [click #login] [click .open|wait .modal|eval await \nwindow.app.idle()] [press Escape]"
	for name, text := range map[string]string{"app.scenario": lines, "app.json": js} {
		sc, err := ParseScenario(strings.NewReader(text), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := scenarioString(sc); got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
		if err := sc.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if sc, _ := ParseScenario(strings.NewReader(lines), "app.scenario"); sc.Action[2].Where != "app.scenario:10" || sc.Back[0].Where != "app.scenario:13" {
		t.Errorf("where: %q, %q", sc.Action[2].Where, sc.Back[0].Where)
	}
	for text, want := range map[string]string{
		"url x\nclick #a\n":                 `app.scenario:2: "click #a" is outside setup:, action: and back:`,
		"action:\n  hover #a\n":             `app.scenario:2: "hover #a" is not a step`,
		"repeat none\n":                     `app.scenario:1: repeat takes a number of times`,
		"action: click #a\n":                `app.scenario:1: the steps of action: go on the lines after it`,
		"action:\n  eval x \\":              `app.scenario:2: the file ends on a line continued`,
		`{"url": "x", "actions": []}`:       `app.scenario: not a scenario`,
		`{"url": "x", "back": ["jump #a"]}`: `app.scenario: back[0]: "jump #a" is not a step`,
	} {
		_, err := ParseScenario(strings.NewReader(text), "app.scenario")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
	for sc, want := range map[*Scenario]string{
		{Action: []Step{{}}, Back: []Step{{}}}:                       "needs the URL",
		{URL: "x", Back: []Step{{}}}:                                 "needs the action",
		{URL: "x", Action: []Step{{}}}:                               "undo the action (back)",
		{URL: "x", Action: []Step{{}}, Back: []Step{{}}, Repeat: -1}: "1 or more",
	} {
		if err := sc.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", sc, err, want)
		}
	}
}

// scenarioString shows a scenario's parts for a comparison.
func scenarioString(sc *Scenario) string {
	part := func(steps []Step) string {
		var s []string
		for _, st := range steps {
			s = append(s, st.Text)
		}
		return "[" + strings.Join(s, "|") + "]"
	}
	return strings.Join([]string{sc.URL, fmt.Sprint(sc.Repeat), part(sc.Setup), part(sc.Action), part(sc.Back)}, " ")
}

// ParseSteps takes a step a flag, or several a line.
func TestParseSteps(t *testing.T) {
	steps, err := ParseSteps([]string{"click #open", "wait .modal\n\npress Escape\n"}, "--action")
	if err != nil || len(steps) != 3 || steps[2].Kind != StepPress || steps[2].Where != "--action" {
		t.Fatalf("%+v, %v", steps, err)
	}
	if _, err := ParseSteps([]string{"click #a", "klick #b"}, "--back"); err == nil || !strings.HasPrefix(err.Error(), `--back: "klick #b"`) {
		t.Errorf("error %v", err)
	}
}

// TestReadScenarioFile reads a scenario file, its steps named by its path
// and line, and says a missing one is missing.
func TestReadScenarioFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.scenario")
	if err := os.WriteFile(path, []byte("url http://localhost:8080/\naction:\n  click .open\nback:\n  press Escape\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := ReadScenarioFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scenarioString(sc), "http://localhost:8080/ 0 [] [click .open] [press Escape]"; got != want || sc.Action[0].Where != path+":3" {
		t.Errorf("read %s (action at %s), want %s", got, sc.Action[0].Where, want)
	}
	if _, err := ReadScenarioFile(path + ".none"); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}
