//go:build unix

package capture

import (
	"os"
	"syscall"
)

// terminate asks a program heapx started to exit: SIGTERM to its process
// group, so what it started goes too.
func terminate(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill ends a program heapx started that did not exit when asked.
func kill(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }

// SnapshotSignals are the signals that take a snapshot of a series when
// sent to heapx: SIGUSR1, as `kill -USR1 <heapx pid>`.
var SnapshotSignals = []os.Signal{syscall.SIGUSR1}

// exitSignal is the signal that ended a process, or 0.
func exitSignal(ps *os.ProcessState) syscall.Signal {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}
