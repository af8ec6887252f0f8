package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd, a child the test starts and stops itself, die
// with the test binary: a binary killed from outside (go test's
// -timeout, a CI job cancelled) runs no Cleanup, and a witan up or relay
// left behind would hold its ports and a core for the tests after it.
// Linux sends SIGKILL when the thread that started the child ends: in a
// Go program, when the process does, unless a goroutine locked to that
// thread returned (none of these tests locks one).
func dieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
