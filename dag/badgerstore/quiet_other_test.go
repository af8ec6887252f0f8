//go:build !linux

package badgerstore_test

// quietStderr does nothing where the power-loss tests do not run.
func quietStderr() {}
