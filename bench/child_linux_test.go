package bench

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd, a child the benchmark starts and stops itself,
// die with the test binary: a binary killed from outside runs no deferred
// stop, and a witan up left behind would hold a core for the benchmarks
// after it.
// Linux sends SIGKILL when the thread that started the child ends: in a
// Go program, when the process does, unless a goroutine locked to that
// thread returned (none of these tests locks one).
func dieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
