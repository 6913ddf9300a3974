//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestCaptureStreamsWithProgress captures a large heap with stderr on a
// terminal, as a person at one would: progress bars show the snapshot
// being built and written, and are gone at the end; heapx's memory stays
// a fraction of the file's size, as the snapshot streams to disk.
func TestCaptureStreamsWithProgress(t *testing.T) {
	needNode(t)
	p := startInspected(t, 300000)
	master, tty := openPTY(t)
	defer master.Close()
	// A terminal of no size gets no bar; give it a width.
	ws := [4]uint16{24, 100, 0, 0}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		t.Skipf("setting the terminal's size: %v", e)
	}
	path := filepath.Join(t.TempDir(), "big.heapsnapshot")
	cmd := heapxCommand(t, "capture", "--inspect", p.hostPort, "-o", path)
	peak := measurePeak(t, cmd)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var term bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&term, master); close(done) }()
	err := cmd.Wait()
	<-done
	if err != nil {
		t.Fatalf("heapx: %v\n%s", err, term.String())
	}
	// A bar appears for a phase that lasts a second: building the
	// snapshot does here, writing it out too on a slow or busy machine.
	shown := term.String()
	if !strings.Contains(shown, "building the snapshot") && !strings.Contains(shown, "writing "+path) {
		t.Errorf("the terminal never showed a bar:\n%q", shown)
	}
	// The last bar is erased: the cursor goes up a line and clears.
	if !strings.HasSuffix(shown, "\x1b[1A\x1b[J") {
		t.Errorf("the terminal is left with %q", shown[max(0, len(shown)-80):])
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// heapx idles at about 20 MB (the test binary standing in for it);
	// streaming adds a few chunks' worth, never the snapshot.
	rss := peak()
	if rss > maxCaptureRSS || rss > 20<<20+st.Size()/2 {
		t.Errorf("heapx peaked at %d MB capturing a %d MB snapshot: it is not streamed", rss>>20, st.Size()>>20)
	}
	t.Logf("a %d MB snapshot captured in %d MB", st.Size()>>20, rss>>20)
}
