package testfixtures

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test would have ended.
type recorder struct {
	testing.TB
	ended []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.ended = append(r.ended, "fail: "+fmt.Sprintf(format, args...))
}
func (r *recorder) Skipf(format string, args ...any) {
	r.ended = append(r.ended, "skip: "+fmt.Sprintf(format, args...))
}

// TestNeedTool: a program on PATH is found by any of its names; a missing
// one skips the test where CI is unset or false, and fails it (first) where
// CI is true, naming what is missing.
func TestNeedTool(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	if p := NeedTool(r, "heapx-no-such-tool", "sh"); !strings.HasSuffix(p, "/sh") || r.ended != nil {
		t.Errorf("NeedTool(no-such-tool, sh) = %q, ended %q; want sh's path", p, r.ended)
	}
	for ci, want := range map[string]string{
		"":      "skip: heapx-no-such-tool or heapx-nor-this is not installed",
		"false": "skip: heapx-no-such-tool or heapx-nor-this is not installed",
		"true":  "fail: CI is set and heapx-no-such-tool or heapx-nor-this is not installed (.ci/run installs what the tests need)",
		"1":     "fail: CI is set and",
	} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		NeedTool(r, "heapx-no-such-tool", "heapx-nor-this")
		if len(r.ended) == 0 || !strings.HasPrefix(r.ended[0], want) {
			t.Errorf("CI=%q: ended %q, want first %q", ci, r.ended, want)
		}
	}
}

// TestLong: a long test runs only with HEAPX_LONG_TESTS=1, CI or not.
func TestLong(t *testing.T) {
	for _, c := range []struct{ long, ci, want string }{
		{"", "", "skip: a long test: HEAPX_LONG_TESTS=1 runs it"},
		{"", "true", "skip: a long test"},
		{"0", "", "skip: a long test"},
		{"1", "", ""},
		{"1", "true", ""},
	} {
		t.Setenv(LongTests, c.long)
		t.Setenv("CI", c.ci)
		r := &recorder{TB: t}
		Long(r)
		if got := strings.Join(r.ended, "; "); c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s=%q CI=%q: ended %q, want %q", LongTests, c.long, c.ci, got, c.want)
		}
	}
}
