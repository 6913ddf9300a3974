package jstrace

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/heapx/heapx/formats/memtrace"
)

// Ended says how the traced program ended, as words that follow "the
// program" ("exited with status 0 (its event loop ran out of work)"): from
// what it said (its EXIT record, the signals it received), its exit status
// or the signal that killed it, and whether heapx had to kill it. When it
// could not say, the words say the trace lacks its last fraction of a
// second.
func (res Result) Ended() string {
	var b strings.Builder
	received := res.Received
	if e := res.Exit; e != nil && e.How == memtrace.ExitSignal && len(received) > 0 && received[len(received)-1] == e.Detail {
		received = received[:len(received)-1] // said below
	}
	if len(received) > 0 {
		fmt.Fprintf(&b, "received %s, then ", strings.Join(received, ", "))
	}
	status := fmt.Sprintf("exited with status %d", res.ExitCode)
	if res.Signal != 0 {
		status = "was killed by " + signalName(res.Signal)
	}
	switch e := res.Exit; {
	case res.Killed:
		fmt.Fprintf(&b, "did not answer it: heapx killed it (%s); the trace holds what it wrote until a fraction of a second before", signalName(res.Signal))
	case e == nil:
		fmt.Fprintf(&b, "%s before it could say how it ended: the trace holds what it wrote until a fraction of a second before", status)
	case e.How == memtrace.ExitSignal:
		fmt.Fprintf(&b, "was ended by %s, which it had no listener for", e.Detail)
	case e.How == memtrace.ExitUncaught:
		fmt.Fprintf(&b, "%s after an uncaught exception: %s", status, e.Detail)
	case e.How == memtrace.ExitProcessExit:
		fmt.Fprintf(&b, "%s (process.exit)", status)
	default:
		fmt.Fprintf(&b, "%s (its event loop ran out of work)", status)
	}
	return b.String()
}

// signalName is a signal's conventional name (SIGINT), or its number.
func signalName(n int) string {
	names := map[syscall.Signal]string{syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGILL: "SIGILL", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGTERM: "SIGTERM"}
	if s, ok := names[syscall.Signal(n)]; ok {
		return s
	}
	return fmt.Sprintf("signal %d", n)
}
