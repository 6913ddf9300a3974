package capture

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPageURL: a file's path becomes its file: URL, from any working
// directory; URLs, directories and paths to nothing stay as given.
func TestPageURL(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "my page.html")
	if err := os.WriteFile(page, []byte("<p>hi</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, c := range []struct{ page, want string }{
		{"my page.html", "file://" + filepath.ToSlash(dir) + "/my%20page.html"},
		{page, "file://" + filepath.ToSlash(dir) + "/my%20page.html"},
		{"http://localhost:8080/app", "http://localhost:8080/app"},
		{"file:///srv/index.html", "file:///srv/index.html"},
		{".", "."},
		{"missing.html", "missing.html"},
		{"", ""},
	} {
		if got := PageURL(c.page); got != c.want {
			t.Errorf("PageURL(%q) = %q, want %q", c.page, got, c.want)
		}
	}
}
