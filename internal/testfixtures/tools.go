package testfixtures

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// UnderCI reports whether the tests run under CI: CI set to a true value
// (true, 1), as .ci/run and CI services set it.
func UnderCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Missing ends t, which cannot run here because something it needs from
// outside Go (node, npm, gdb's gcore, Chromium, a JDK) is not installed or
// cannot do its job. A developer's machine may lack them, so t skips,
// saying what is missing; under CI, where .ci/run installs every one of
// them, t fails instead, so that a CI run that tested nothing cannot pass.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if UnderCI() {
		t.Fatalf("CI is set and "+format+" (.ci/run installs what the tests need)", args...)
	}
	t.Skipf(format, args...)
}

// NeedTool returns the path of the first of names found on PATH (the
// names one program goes by: chromium, google-chrome), or ends t with
// Missing when none is.
func NeedTool(t testing.TB, names ...string) string {
	t.Helper()
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	Missing(t, "%s is not installed", strings.Join(names, " or "))
	return ""
}

// LongTests is the environment variable that turns on the long tests.
const LongTests = "HEAPX_LONG_TESTS"

// Long skips t unless HEAPX_LONG_TESTS=1. A long test takes minutes (it
// makes a dump or a value of hundreds of megabytes and measures what heapx
// does with it): go test ./... leaves it out so that the everyday run stays
// short, and .ci/run runs the long tests in a step of their own.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv(LongTests) != "1" {
		t.Skipf("a long test: %s=1 runs it (.ci/run does)", LongTests)
	}
}
