package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/heapx/heapx/sqlquery"
)

// These tests treat heapx's outputs as a user with private dumps would:
// the modes of the files it writes, where its cache goes, and the
// temporary files a killed run leaves.

// heapxUmask runs heapx under umask mask (sh sets it, as a user's shell
// does) and requires success.
func heapxUmask(t *testing.T, mask string, args ...string) string {
	t.Helper()
	heapx := heapxCommand(t, args...)
	cmd := exec.Command("sh", append([]string{"-c", `umask ` + mask + ` && exec "$0" "$@"`, heapx.Path}, args...)...)
	cmd.Env = heapx.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("umask %s; heapx %v: %v\n%s", mask, args, err, errb.String())
	}
	return out.String()
}

func perm(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestOutputModes: every file heapx derives from a dump (sql's cached
// copy, convert's output in each format, report --html) gets the mode the
// umask gives, less what the dump denies. A private dump (0600) never
// yields a world-readable copy of its strings, whatever the umask; a
// umask of 077 is honoured for a readable dump. The dumps are small
// (what a file's mode is does not depend on its size), as each is read 43
// times.
func TestOutputModes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mask      string
		src, want fs.FileMode
	}{
		{"022", 0o600, 0o600}, // the dump's privacy wins over the umask
		{"077", 0o600, 0o600}, // the case
		{"077", 0o644, 0o600}, // the umask is honoured
		{"022", 0o644, 0o644},
		{"027", 0o640, 0o640}, // same group: it may read the copy too
		{"002", 0o604, 0o604}, // others may read the dump, the group not
	} {
		t.Run(fmt.Sprintf("umask %s dump %04o", c.mask, c.src), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(t.TempDir(), "small.heapsnapshot")
			writeBigSnapshot(t, in, 100)
			if err := os.Chmod(in, c.src); err != nil {
				t.Fatal(err)
			}
			heapxUmask(t, c.mask, "sql", in, "SELECT 1")
			outs := []string{in + sqlquery.CacheSuffix}
			for _, name := range []string{"o.jsonl", "o.jsonl.gz", "o.db", "o.heapsnapshot"} {
				p := filepath.Join(dir, name)
				heapxUmask(t, c.mask, "convert", in, p)
				outs = append(outs, p)
			}
			html := filepath.Join(dir, "r.html")
			heapxUmask(t, c.mask, "report", "--html", html, in)
			outs = append(outs, html)
			for _, p := range outs {
				if got := perm(t, p); got != c.want {
					t.Errorf("%s: mode %04o, want %04o", filepath.Base(p), got, c.want)
				}
			}
		})
	}
	// A report on several dumps is as private as the most private one.
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.heapsnapshot"), filepath.Join(dir, "b.heapsnapshot")
	writeBigSnapshot(t, a, 100)
	writeBigSnapshot(t, b, 100)
	os.Chmod(a, 0o644)
	os.Chmod(b, 0o600)
	html := filepath.Join(dir, "r.html")
	heapxUmask(t, "022", "report", "--html", html, b, a)
	if got := perm(t, html); got != 0o600 {
		t.Errorf("report of a 0644 and a 0600 dump: mode %04o, want 0600", got)
	}
}

// TestUserCacheDirPrivate: the copies heapx sql keeps under the user
// cache directory are in a directory only the user can enter, also when
// an older heapx made it 0755.
func TestUserCacheDirPrivate(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache) // for systems without XDG
	dir := filepath.Join(cache, "heapx")
	in := copyFixture(t, "node-basic.heapsnapshot.gz")
	notWritable := func(string) bool { return false }
	for _, existing := range []bool{false, true} {
		if existing {
			os.RemoveAll(dir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		c, err := sqlquery.Cached(in, sqlquery.Choice{}, copyBuilder(os.Stderr, notWritable))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(c.Path) != dir {
			t.Fatalf("cached at %s, want under %s", c.Path, dir)
		}
		if got := perm(t, dir); got != 0o700 {
			t.Errorf("existing %v: cache directory mode %04o, want 0700", existing, got)
		}
	}
}

// TestStaleTempsRemoved: temporary files a killed heapx left (unlocked)
// are removed by the next write into their directory, as is an old one of
// the older naming for the same output; one a live writer holds (locked),
// files of other names, and other files of the older naming are not.
func TestStaleTempsRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := copyFixture(t, "node-basic.heapsnapshot.gz")
	create := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("half a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if age > 0 {
			old := time.Now().Add(-age)
			os.Chtimes(p, old, old)
		}
		return p
	}
	stale := []string{
		create(".out.jsonl.tmp-heapx-123456", 0),
		create(".other.db.tmp-heapx-42", 0), // another output, same directory
		create(".out.jsonl.tmp-987654321", 2*time.Hour),
	}
	live := create(".big.db.tmp-heapx-777", 0)
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	keep := []string{
		live,
		create(".out.jsonl.tmp-555", 0),          // older naming, maybe still being written
		create(".other.db.tmp-666", 2*time.Hour), // older naming, not the output's: maybe not heapx's
		create("notes.tmp-heapx-1", 0),           // not hidden: not heapx's
		create(".notes.tmp-heapx-draft", 0),
		create(".cache.tmp-x", 3*time.Hour),
	}
	ok(t, "convert", in, filepath.Join(dir, "out.jsonl"))
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was left behind (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}

// TestKilledWriteCleanedUp kills a convert with SIGKILL while it writes
// (nothing can clean up then): the temporary file stays, and the next
// heapx writing into the directory removes it.
func TestKilledWriteCleanedUp(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a large snapshot")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "big.heapsnapshot")
	writeBigSnapshot(t, in, 300_000)
	cmd := heapxCommand(t, "convert", in, filepath.Join(dir, "big.jsonl.gz"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var temp []string
	for deadline := time.Now().Add(60 * time.Second); len(temp) == 0; time.Sleep(time.Millisecond) {
		temp, _ = filepath.Glob(filepath.Join(dir, ".big.jsonl.gz.tmp-*"))
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no temporary file appeared")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(temp[0]); err != nil {
		t.Fatalf("the killed write left no temporary file (%v): finished first?", err)
	}
	ok(t, "convert", copyFixture(t, "node-basic.heapsnapshot.gz"), filepath.Join(dir, "small.jsonl"))
	if _, err := os.Stat(temp[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there after the next write (%v)", temp[0], err)
	}
}
