package jstrace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// runBoth runs argv (node and its arguments) in dir plainly and traced,
// and returns both runs' stdout, stderr and exit status.
func runBoth(t *testing.T, dir string, argv ...string) (plain, traced [3]string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	plain = [3]string{out.String(), errOut.String(), cmd.ProcessState.String()}
	out.Reset()
	errOut.Reset()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var trace bytes.Buffer
	res, err := Run(context.Background(), argv, Options{Stdout: &out, Stderr: &errOut}, &trace)
	if err != nil {
		t.Fatal(err)
	}
	traced = [3]string{out.String(), errOut.String(), exitString(res)}
	if res.Bytes < 100 {
		t.Errorf("%v: a trace of %d bytes", argv, res.Bytes)
	}
	return plain, traced
}

// exitString says how a traced run ended as os.ProcessState.String does.
func exitString(r Result) string {
	if r.Signal != 0 {
		return "signal: " + syscall.Signal(r.Signal).String()
	}
	return "exit status " + strconv.Itoa(r.ExitCode)
}

// sameRun reports where a traced run differs from the plain one: stdout
// and stderr byte for byte, and the exit status.
func sameRun(t *testing.T, name string, plain, traced [3]string) {
	t.Helper()
	for i, what := range []string{"stdout", "stderr", "exit"} {
		if plain[i] != traced[i] {
			t.Errorf("%s: %s differs traced:\n%s\nuntraced:\n%s", name, what, traced[i], plain[i])
		}
	}
}

// TestConformance: programs that print what they observe of the
// language (testdata/conformance: functions' source text, names and
// lengths, with, eval, new Function, getters, setters, Proxies, mapped
// arguments, frozen objects, global enumeration, stack traces with the
// program's own prepareStackTrace, captureStackTrace and stackTraceLimit,
// uncaught exceptions in a required module and at the top level, an ES
// module's unhandled rejection) print the same, byte for byte, on stdout
// and stderr, and end the same, traced as untraced.
func TestConformance(t *testing.T) {
	needNode(t)
	dir, _ := filepath.Abs(filepath.Join("testdata", "conformance"))
	progs, _ := filepath.Glob(filepath.Join(dir, "*.*js"))
	ran := 0
	for _, p := range progs {
		name := filepath.Base(p)
		if strings.Contains(name, "-lib") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			plain, traced := runBoth(t, dir, "node", name)
			sameRun(t, name, plain, traced)
		})
		ran++
	}
	if ran < 6 {
		t.Errorf("ran %d programs", ran)
	}
}
