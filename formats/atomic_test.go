//go:build unix && !solaris && !aix

package formats_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/heapx/heapx/formats"
)

// TestWriteFileAtomicMode: the output, and the temporary file before a
// byte is written to it, have the umask's mode less what the sources deny;
// a source that cannot be examined counts as private.
func TestWriteFileAtomicMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	src := func(name string, mode fs.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	open, private, groupOnly := src("open", 0o644), src("private", 0o600), src("group", 0o640)
	for _, c := range []struct {
		sources []string
		want    fs.FileMode
	}{
		{nil, 0o644},
		{[]string{open}, 0o644},
		{[]string{private}, 0o600},
		{[]string{groupOnly}, 0o640},
		{[]string{open, private}, 0o600},
		{[]string{filepath.Join(dir, "gone")}, 0o600},
	} {
		out := filepath.Join(dir, "out")
		var during fs.FileMode
		err := formats.WriteFileAtomic(out, func(tmp string) error {
			st, err := os.Stat(tmp)
			if err != nil {
				return err
			}
			during = st.Mode().Perm()
			return os.WriteFile(tmp, []byte("data"), 0o666)
		}, c.sources...)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.want || during != c.want {
			t.Errorf("sources %v: mode %04o, %04o while written, want %04o", c.sources, st.Mode().Perm(), during, c.want)
		}
	}
}

// TestRemoveStaleTemps: an abandoned temporary file (no lock) goes, one a
// writer holds stays, and the write in progress is never its own victim.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".a.db.tmp-heapx-1")
	held := filepath.Join(dir, ".b.db.tmp-heapx-2")
	for _, p := range []string{stale, held} {
		os.WriteFile(p, []byte("x"), 0o600)
	}
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	err = formats.WriteFileAtomic(filepath.Join(dir, "c.db"), func(tmp string) error {
		if !strings.HasPrefix(filepath.Base(tmp), ".c.db.tmp-heapx-") {
			t.Errorf("temporary file %s", tmp)
		}
		// Another heapx starting now leaves this one alone.
		formats.RemoveStaleTemps(filepath.Join(dir, "d.db"))
		return os.WriteFile(tmp, []byte("c"), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the abandoned temporary file is still there")
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the held temporary file was removed: %v", err)
	}
}

// TestWriteStream checks that what fill writes is the file, that a failed
// fill leaves nothing, and that the file is no more readable than its
// sources.
func TestWriteStream(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "page.html")
	err := formats.WriteStream(out, func(w io.Writer) error {
		io.WriteString(w, "<html>half")
		return errors.New("interrupted")
	})
	if err == nil || err.Error() != "interrupted" {
		t.Fatalf("failed fill: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed fill left %v", ents)
	}
	src := filepath.Join(dir, "private.heapsnapshot")
	if err := os.WriteFile(src, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := formats.WriteStream(out, func(w io.Writer) error {
		_, err := io.WriteString(w, "<html>done")
		return err
	}, src); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "<html>done" {
		t.Errorf("wrote %q", b)
	}
	if st, _ := os.Stat(out); st.Mode().Perm()&0o077 != 0 {
		t.Errorf("a page of a private dump has mode %v", st.Mode())
	}
}
