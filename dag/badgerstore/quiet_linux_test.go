package badgerstore_test

import (
	"os"
	"syscall"
)

// quietStderr points the process's standard error at /dev/null: a child
// of a power-loss test faults on the files Badger maps once the disk is
// gone (SIGBUS), and the runtime would print every goroutine's stack. The
// child reports its errors on standard output.
func quietStderr() {
	if f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		syscall.Dup3(int(f.Fd()), 2, 0) //nolint:errcheck // best effort
	}
}
