//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair: heapx writes to the second, the
// test reads what a terminal would get from the first.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the terminal: %v", err)
	}
	return m, s
}

// onTerminal runs heapx with its stdout on a terminal and returns what the
// terminal received.
func onTerminal(t *testing.T, args ...string) string {
	t.Helper()
	master, tty := openPTY(t)
	defer master.Close()
	cmd := heapxCommand(t, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child has it; EOF (EIO) once it exits
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, master); close(done) }()
	err := cmd.Wait()
	<-done
	if err != nil {
		t.Fatalf("heapx %v on a terminal: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestTerminalEscapesInDataOutputs: --csv and --json print exact values to
// pipes, but on a terminal what would drive it (ESC, BEL, C1 controls,
// RTL overrides, bytes that are not UTF-8) arrives escaped; the JSON is
// still JSON with the same values (\u009b is its own escape).
func TestTerminalEscapesInDataOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	snap := filepath.Join(dir, "hostile.heapsnapshot")
	if err := os.WriteFile(snap, []byte(hostileSnapshot), 0o644); err != nil {
		t.Fatal(err)
	}
	q := "SELECT 'x' AS \"\x1b]0;title\x07\", 'a' || char(155) || '2J' AS c1, CAST(x'9b3f' AS TEXT) AS raw, char(8238) AS rlo"
	for _, args := range [][]string{
		{"sql", "--csv", snap, q},
		{"sql", "--json", snap, q},
		{"sql", "--json", snap, "SELECT data FROM strings"},
		{"top", "--json", snap},
		{"summary", "--json", snap},
		{"sql", snap, q},
	} {
		out := onTerminal(t, args...)
		checkNoTerminalBytes(t, "heapx "+strings.Join(args[:2], " ")+" on a terminal", out)
		if args[1] == "--csv" && !strings.Contains(out, `a\u009b2J`) {
			t.Errorf("sql --csv on a terminal does not show a\\u009b2J:\n%s", out)
		}
		if args[0] == "top" && !strings.Contains(out, `"\u001b[2J\u001b]0;pwned\u0007Evil`) {
			t.Errorf("top --json on a terminal does not show the name escaped:\n%s", out)
		}
		if len(args) == 4 && args[1] == "--json" && args[3] == q && !strings.Contains(out, `"c1":"a\u009b2J"`) {
			t.Errorf("sql --json on a terminal: want \"c1\":\"a\\u009b2J\":\n%s", out)
		}
	}
}
