//go:build !linux

package badgerstore

import "os"

// fdatasync makes f's data durable (fsync where there is no fdatasync).
func fdatasync(f *os.File) error { return f.Sync() }
