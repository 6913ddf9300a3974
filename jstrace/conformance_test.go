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

	"github.com/heapx/heapx/internal/testfixtures"
)

// runBoth runs argv (node and its arguments) in dir plainly and traced
// (instrumenting what include matches too), and returns both runs' stdout, stderr and exit status.
func runBoth(t *testing.T, dir string, include []string, argv ...string) (plain, traced [3]string) {
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
	res, err := Run(context.Background(), argv, Options{Include: include, Stdout: &out, Stderr: &errOut}, &trace)
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
			plain, traced := runBoth(t, dir, nil, "node", name)
			sameRun(t, name, plain, traced)
		})
		ran++
	}
	if ran < 6 {
		t.Errorf("ran %d programs", ran)
	}
}

// suitePackages are pure-JavaScript packages whose npm tarballs hold their
// own test suites (tape), pinned with the test dependencies those suites
// require.
var suitePackages = []string{"minimist@1.2.8", "qs@6.17.1", "side-channel@1.1.1", "tape@5.10.2",
	"es-value-fixtures@1.7.1", "for-each@0.3.5", "has-bigints@1.1.0", "has-override-mistake@1.0.1",
	"has-property-descriptors@1.0.2", "has-proto@1.2.0", "has-symbols@1.1.0", "iconv-lite@0.7.3",
	"mock-property@1.1.2", "safer-buffer@2.1.2", "test262-parser-tests@0.0.5"}

// TestPackageSuites runs the real test suites of minimist, qs and
// side-channel (installed with npm at test time) with the packages and
// their test runner instrumented (--include): every test file prints the
// same, byte for byte, and ends the same traced as untraced. Written after
// the rules, they found one: the runtime read inherited getters of an
// object literal (qs's tests put one on Object.prototype).
func TestPackageSuites(t *testing.T) {
	needNode(t)
	npm := testfixtures.NeedTool(t, "npm")
	if testing.Short() {
		t.Skip("installs packages with npm")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	install := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save"}, suitePackages...)...)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		testfixtures.Missing(t, "npm install failed (no registry?): %v\n%s", err, out)
	}
	var include []string
	for _, p := range []string{"minimist", "qs", "side-channel", "tape"} {
		include = append(include, "**/node_modules/"+p+"/**")
	}
	suites, ran := 0, 0 // files that ran tests (one of qs's is data), files run
	for _, p := range []string{"minimist", "qs", "side-channel"} {
		tests, _ := filepath.Glob(filepath.Join(dir, "node_modules", p, "test", "*.js"))
		for _, f := range tests {
			rel, _ := filepath.Rel(dir, f)
			t.Run(rel, func(t *testing.T) {
				ran++
				plain, traced := runBoth(t, dir, include, "node", rel)
				sameRun(t, rel, plain, traced)
				if strings.Contains(plain[0], "# pass") {
					suites++
				}
			})
		}
	}
	if ran == 20 && suites < 19 {
		t.Errorf("%d test files ran tests, want the 19 of the pinned packages", suites)
	}
	t.Run("test262-parser-tests", func(t *testing.T) { instrumentsValid(t, dir) })
	// npm itself, all of its node_modules instrumented (a minified glob
	// bundle among them): it found the last three rules of instrument.mjs.
	t.Run("npm", func(t *testing.T) {
		cli, err := filepath.EvalSymlinks(npm)
		if err != nil || !strings.HasSuffix(cli, ".js") {
			t.Skipf("npm is not a JavaScript file here (%s)", cli)
		}
		root := filepath.Dir(filepath.Dir(cli))
		for _, args := range [][]string{{"--version"}, {"ls", "--depth=0", "--prefix", dir}} {
			plain, traced := runBoth(t, dir, []string{root + "/**"}, append([]string{"node", cli}, args...)...)
			sameRun(t, "npm "+strings.Join(args, " "), plain, traced)
		}
	})
}

// instrumentsValid instruments each of the 1,981 programs that must parse
// of test262-parser-tests (installed by TestPackageSuites into dir) and
// parses the result. One is known not to: a function whose body declares
// a generator and a function of one name (sloppy code allows that at a
// function's top level, not in the block heapx wraps the body in).
func instrumentsValid(t *testing.T, dir string) {
	js := t.TempDir()
	if err := unpack(js); err != nil {
		t.Fatal(err)
	}
	script := `import { instrument } from ` + strconv.Quote(filepath.Join(js, "js", "instrument.mjs")) + `;
import { parse } from ` + strconv.Quote(filepath.Join(js, "js", "acorn.mjs")) + `;
import fs from 'node:fs';
const dir = ` + strconv.Quote(filepath.Join(dir, "node_modules", "test262-parser-tests", "pass")) + ` + '/';
let ok = 0; const bad = [];
for (const f of fs.readdirSync(dir).sort()) {
  const esm = f.endsWith('.module.js');
  const out = instrument(fs.readFileSync(dir + f, 'utf8'), '/t/' + f, esm ? 'esm' : 'cjs', 'k');
  try { parse(out, { ecmaVersion: 'latest', sourceType: esm ? 'module' : 'script', allowReturnOutsideFunction: !esm, allowAwaitOutsideFunction: esm, allowHashBang: true }); ok++; }
  catch (e) { bad.push(f); }
}
console.log(JSON.stringify({ ok, bad }));`
	out, err := exec.Command("node", "--input-type=module", "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != `{"ok":1980,"bad":["ba4cc699857f41f2.js"]}` {
		t.Errorf("instrumented test262-parser-tests pass/: %s", got)
	}
}
