package redistest

import "syscall"

// childAttr makes the kernel SIGKILL a redis-server child when the test
// binary dies, so a crashed or timed-out test leaves no server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
