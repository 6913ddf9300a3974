//go:build unix && !solaris && !aix

package formats

import (
	"io/fs"
	"os"
	"syscall"
)

// lock takes f's lock if it is free: nil when taken, errLockBusy when
// another open file holds it, another error when the file system has no
// locks. A writer holds it on its temporary file to tell other heapx
// processes the file is in use (RemoveStaleTemps); flock locks belong to
// the open file, so the kernel releases one when its writer dies, however
// it dies.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return errLockBusy
	}
	return err
}

// removeIfUnlocked removes the temporary file at p if no writer holds its
// lock. It is removed while locked, so a writer cannot take it up again
// in between. It opens only a regular file, never a link or a FIFO put
// there in the meantime (which would block the open).
func removeIfUnlocked(p string) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return
	}
	if lock(f) == nil {
		os.Remove(p)
	}
}

// sameGroup reports whether two files have the same owning group.
func sameGroup(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Gid == sb.Gid
}
