package capture

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
)

// ProgramExit is the error of a capture whose program (one Run started)
// ended before the capture was complete: it exited with a status, was
// killed by a signal, or finished its work while snapshots were still to
// come. What was written by then is kept (Result.Files).
type ProgramExit struct {
	Program string // the program's name, "node"
	// Status is its exit status; -1 when a signal ended it.
	Status int
	Signal syscall.Signal // the signal that ended it, or 0
	// Stderr is its last lines on standard error (at most tailLines),
	// without the lines node's inspector adds.
	Stderr []string
	// Done says what the capture had done when the program ended, e.g.
	// "1 of 3 snapshots taken".
	Done string
}

// ExitCode is the exit code a command wrapping the capture should end
// with, as a shell reports the program's: its status, 128 plus the
// signal's number when a signal ended it, and 1 when it ended normally
// (status 0) but too early for the capture.
func (e *ProgramExit) ExitCode() int {
	switch {
	case e.Signal != 0:
		return 128 + int(e.Signal)
	case e.Status > 0:
		return e.Status
	}
	return 1
}

// How says how the program ended: "node exited with status 1", "node was
// killed by SIGKILL".
func (e *ProgramExit) How() string {
	switch {
	case e.Signal != 0:
		return fmt.Sprintf("%s was killed by %s", e.Program, signalName(e.Signal))
	case e.Status == 0:
		return e.Program + " exited normally (status 0)"
	}
	return fmt.Sprintf("%s exited with status %d", e.Program, e.Status)
}

func (e *ProgramExit) Error() string {
	msg := e.How() + " before the capture was complete"
	if e.Done != "" {
		msg += " (" + e.Done + ")"
	}
	if w := LastWords(e.Stderr); w != "" {
		msg += ": " + w
	}
	return msg
}

// signalName names a signal as kill -l does: SIGKILL.
func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT",
		syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM", syscall.SIGTRAP: "SIGTRAP",
	}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d (%v)", int(s), s)
}

// errorLine is a line that states an error: a JavaScript error's first
// line as node prints an uncaught one ("TypeError: x is not a function",
// "Uncaught Error: ..."), or V8's fatal errors ("FATAL ERROR: Reached
// heap limit ...").
var errorLine = regexp.MustCompile(`^(Uncaught )?([A-Za-z_$][\w$.]*)?(Error|Exception)\b.*|^FATAL ERROR: .*|^#? ?Fatal error\b.*`)

// noiseLine is what surrounds that line: stack frames, node's version
// line, native stack dumps, an error's properties, blank lines.
var noiseLine = regexp.MustCompile(`^\s*$|^\s+at |^Node\.js v\d|^\s*\d+: |^-----|^\s*[{}]\s*$|^\s+\w+: |^\s*\^+\s*$`)

// LastWords picks from a program's last lines on stderr the one that says
// why it ended: the last error line (the message of an uncaught
// exception, V8's "FATAL ERROR"), or else the last line that is not a
// stack frame or another part of a crash report. "" when there is none.
func LastWords(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if errorLine.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if !noiseLine.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}
