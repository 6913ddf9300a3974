//go:build !unix

package capture

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to set where there are no process groups.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate ends a program heapx started; without signals, at once.
func terminate(p *os.Process) { p.Kill() }

// kill ends a program heapx started.
func kill(p *os.Process) { p.Kill() }

// SnapshotSignals is empty: there is no SIGUSR1 to take a snapshot with.
var SnapshotSignals []os.Signal

// exitSignal is 0: without signals, a process only exits.
func exitSignal(*os.ProcessState) syscall.Signal { return 0 }
