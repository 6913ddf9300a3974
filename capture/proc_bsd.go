//go:build unix && !linux

package capture

import "syscall"

// sysProcAttr puts a program heapx starts in a process group of its own
// (see Launch).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
