package capture

import "syscall"

// sysProcAttr puts a program heapx starts in a process group of its own
// (see Launch) and has the kernel end it if heapx dies without stopping
// it (kill -9), so it is never left waiting for a debugger.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
