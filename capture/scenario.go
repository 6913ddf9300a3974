package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// A Scenario is memlab's loop around a web page: open URL, do Setup, then
// Action and Back (its undo), Repeat times. RunScenario takes a heap
// snapshot after Setup (the baseline), after the first Action (the
// target) and after the last Back (the final): what was allocated by the
// action and is still alive once it was undone, Repeat times over, is
// what leaked. docs/scenario.md describes the steps and the file format
// for users.
type Scenario struct {
	URL                 string
	Setup, Action, Back []Step
	// Repeat is how many times Action and Back run before the final
	// snapshot; 0 means 1.
	Repeat int
}

// StepKind is what a step does.
type StepKind int

// The steps a person does on a page.
const (
	StepClick StepKind = iota + 1 // click SELECTOR
	StepType                      // type SELECTOR TEXT
	StepPress                     // press KEY
	StepGoto                      // goto URL
	StepWait                      // wait SELECTOR, or wait MS
	StepEval                      // eval JS, awaited in the page
)

// stepVerbs names each kind as a step is written.
var stepVerbs = map[string]StepKind{"click": StepClick, "type": StepType, "press": StepPress, "goto": StepGoto, "wait": StepWait, "eval": StepEval}

// Step is one thing done on the page.
type Step struct {
	Kind StepKind
	// Selector is the CSS selector of the element a click, a type or a
	// wait is about.
	Selector string
	// Arg is what type types, the key press presses, the URL goto goes
	// to (relative to the page's), the JavaScript eval runs.
	Arg string
	// Delay is how long a wait MS waits.
	Delay time.Duration
	// Text is the step as written, Where where: "--action",
	// "app.scenario:7". Errors name both.
	Text, Where string
}

// String is the step as written, with where: `click #open (app.scenario:7)`.
func (s Step) String() string {
	if s.Where == "" {
		return s.Text
	}
	return s.Text + " (" + s.Where + ")"
}

// ParseStep reads one step written as a person says it: "click #open",
// "type input[name=q] hello world", "press Escape", "goto /settings",
// "wait .modal" or "wait 500", "eval await window.app.ready". where says
// where it was written, for errors.
func ParseStep(text, where string) (Step, error) {
	text = strings.TrimSpace(text)
	verb, rest, _ := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	s := Step{Kind: stepVerbs[strings.ToLower(verb)], Text: text, Where: where}
	bad := func(format string, args ...any) (Step, error) {
		msg := fmt.Sprintf(format, args...)
		if where != "" {
			msg = where + ": " + msg
		}
		return Step{}, errors.New(msg)
	}
	if s.Kind == 0 {
		return bad("%q is not a step: a step is click SELECTOR, type SELECTOR TEXT, press KEY, goto URL, wait SELECTOR|MS or eval JS", text)
	}
	if rest == "" {
		return bad("%q needs %s", text, map[StepKind]string{StepClick: "a CSS selector", StepType: "a CSS selector and the text to type",
			StepPress: "a key (Enter, Escape, Tab, ArrowDown, a, Control+a...)", StepGoto: "a URL", StepWait: "a CSS selector or a number of milliseconds", StepEval: "JavaScript to run"}[s.Kind])
	}
	switch s.Kind {
	case StepClick:
		s.Selector = rest
	case StepType:
		sel, txt, err := splitSelector(rest)
		if err != nil {
			return bad("%q: %v", text, err)
		}
		s.Selector, s.Arg = sel, unquote(txt)
	case StepPress:
		if _, err := parseKey(rest); err != nil {
			return bad("%q: %v", text, err)
		}
		s.Arg = rest
	case StepGoto, StepEval:
		s.Arg = rest
	case StepWait:
		if d, ok := parseDelay(rest); ok {
			s.Delay = d
		} else {
			s.Selector = rest
		}
	}
	return s, nil
}

// splitSelector cuts "SELECTOR TEXT" after the selector: its first word,
// or a quoted string for a selector with spaces ('form input[name=q]').
func splitSelector(s string) (sel, rest string, err error) {
	if q := s[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", "", fmt.Errorf("the selector's quote %c is not closed", q)
		}
		sel, rest = s[1:1+end], s[2+end:]
	} else {
		sel, rest, _ = strings.Cut(s, " ")
	}
	if sel == "" {
		return "", "", errors.New("an empty selector")
	}
	return sel, strings.TrimLeft(rest, " "), nil
}

// unquote strips one pair of matching quotes around s, so that `type #q
// "two words"` types two words; anything else is typed as written.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// parseDelay reads the delay of a wait: milliseconds ("500"), or a
// duration with its unit ("1.5s", "200ms"). A CSS selector never starts
// with a digit, so the two cannot be confused.
func parseDelay(s string) (time.Duration, bool) {
	if n, err := strconv.ParseUint(s, 10, 31); err == nil {
		return time.Duration(n) * time.Millisecond, true
	}
	if s[0] >= '0' && s[0] <= '9' {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d, true
		}
	}
	return 0, false
}

// ParseSteps reads the steps of one part of a scenario as the command
// line gives them: each value one step or several, one a line. part names
// them in errors ("--action").
func ParseSteps(values []string, part string) ([]Step, error) {
	var steps []Step
	for _, v := range values {
		for line := range strings.SplitSeq(v, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			s, err := ParseStep(line, part)
			if err != nil {
				return nil, err
			}
			steps = append(steps, s)
		}
	}
	return steps, nil
}

// ParseScenario reads a scenario file (named name in errors): JSON, an
// object with "url", "setup", "action", "back" (arrays of steps as
// strings) and "repeat"; or lines:
//
//	url http://localhost:8080/
//	repeat 5
//	setup:
//	  click #login
//	action:
//	  click .open
//	  wait .modal
//	back:
//	  press Escape
//
// Blank lines and lines starting with # are skipped; a line ending with a
// backslash goes on on the next (a long eval).
func ParseScenario(r io.Reader, name string) (*Scenario, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxScenarioFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxScenarioFile {
		return nil, fmt.Errorf("%s: over %d MB: not a scenario", name, maxScenarioFile>>20)
	}
	if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return parseScenarioJSON(t, name)
	}
	return parseScenarioLines(b, name)
}

// ReadScenarioFile reads the scenario file at path (ParseScenario, its
// steps named by path and line).
func ReadScenarioFile(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseScenario(f, path)
}

// maxScenarioFile bounds a scenario file: steps, not data.
const maxScenarioFile = 4 << 20

// scenarioJSON is a scenario file in JSON.
type scenarioJSON struct {
	URL    string   `json:"url"`
	Setup  []string `json:"setup"`
	Action []string `json:"action"`
	Back   []string `json:"back"`
	Repeat int      `json:"repeat"`
}

func parseScenarioJSON(b []byte, name string) (*Scenario, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var j scenarioJSON
	if err := d.Decode(&j); err != nil {
		return nil, fmt.Errorf("%s: not a scenario (an object with url, setup, action, back and repeat): %v", name, err)
	}
	sc := &Scenario{URL: j.URL, Repeat: j.Repeat}
	for _, p := range []struct {
		key   string
		steps []string
		to    *[]Step
	}{{"setup", j.Setup, &sc.Setup}, {"action", j.Action, &sc.Action}, {"back", j.Back, &sc.Back}} {
		for i, text := range p.steps {
			s, err := ParseStep(text, fmt.Sprintf("%s: %s[%d]", name, p.key, i))
			if err != nil {
				return nil, err
			}
			*p.to = append(*p.to, s)
		}
	}
	return sc, nil
}

func parseScenarioLines(b []byte, name string) (*Scenario, error) {
	sc := &Scenario{}
	var part *[]Step
	sn := bufio.NewScanner(bytes.NewReader(b))
	sn.Buffer(nil, maxScenarioFile)
	n, pending, start := 0, "", 0
	for sn.Scan() {
		n++
		line := strings.TrimSpace(sn.Text())
		if pending == "" {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending += cont + "\n"
			continue
		}
		line, pending = pending+line, ""
		where := fmt.Sprintf("%s:%d", name, start)
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		val = strings.TrimSpace(val)
		switch {
		case key == "setup:" || key == "action:" || key == "back:":
			part = map[string]*[]Step{"setup:": &sc.Setup, "action:": &sc.Action, "back:": &sc.Back}[key]
			if val != "" {
				return nil, fmt.Errorf("%s: the steps of %s go on the lines after it", where, key)
			}
		case key == "url":
			sc.URL = val
		case key == "repeat":
			r, err := strconv.Atoi(val)
			if err != nil || r < 1 {
				return nil, fmt.Errorf("%s: repeat takes a number of times, 1 or more, not %q", where, val)
			}
			sc.Repeat = r
		case part == nil:
			return nil, fmt.Errorf("%s: %q is outside setup:, action: and back: (a scenario file has url, repeat, and steps under those)", where, line)
		default:
			s, err := ParseStep(line, where)
			if err != nil {
				return nil, err
			}
			*part = append(*part, s)
		}
	}
	if err := sn.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	if pending != "" {
		return nil, fmt.Errorf("%s:%d: the file ends on a line continued with a backslash", name, start)
	}
	return sc, nil
}

// Check says what is missing from a scenario, or nil when it can run.
func (sc *Scenario) Check() error {
	switch {
	case sc.URL == "":
		return errors.New("a scenario needs the URL of the page to open")
	case len(sc.Action) == 0:
		return errors.New("a scenario needs the action to repeat (the steps whose leaks are looked for)")
	case len(sc.Back) == 0:
		return errors.New("a scenario needs the steps that undo the action (back): what the action allocated and back did not free is what leaked")
	case sc.Repeat < 0:
		return fmt.Errorf("a scenario repeats 1 or more times, not %d", sc.Repeat)
	}
	return nil
}

// repeats is Repeat, 1 when not set.
func (sc *Scenario) repeats() int { return max(sc.Repeat, 1) }
