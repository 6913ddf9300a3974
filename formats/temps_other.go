//go:build !unix || solaris || aix

package formats

import (
	"errors"
	"io/fs"
	"os"
)

// lock fails: there is no flock here (Windows, Solaris, AIX), so a live
// writer's temporary file cannot be told from an abandoned one and none
// is removed.
func lock(*os.File) error { return errors.ErrUnsupported }

// removeIfUnlocked leaves the file: without locks it cannot be told from
// one being written.
func removeIfUnlocked(string) {}

// sameGroup reports true: permission bits are all there is to compare.
func sameGroup(a, b fs.FileInfo) bool { return true }
