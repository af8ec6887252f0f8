// Package durable writes the small files of a node (its keys, a state file
// of a command) so that a power cut leaves either the old file or the new
// one whole, never an empty or partial file, and so that a file is on the
// disk, name and contents, when the call that wrote it returns.
//
// Each file is written to a temporary file in the same directory, which is
// fsynced and closed, then given its name (rename, or link for a file that
// must not exist yet), and the directory is fsynced so that the name
// itself survives a cut. MkdirAll fsyncs the parent of every directory it
// makes, so a file written durably into a directory made durably is found
// again after a cut.
//
// A cut between the temporary file's creation and its rename can leave
// the temporary file (".NAME.tmp-…", mode 0600, in the same directory);
// it is never read, and the next write of NAME does not depend on it.
//
// This package imports neither Badger nor libp2p: the store's own
// durability is Badger's (dag/badgerstore), this is for the files beside
// it.
package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path with permissions perm, replacing a file
// already there: after a power cut path holds either its old contents or
// data, whole. When it returns nil, data is on the disk under path.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// CreateFile writes data to a new file path with permissions perm, like
// WriteFile, but fails with an error wrapping os.ErrExist (and leaves the
// file there as it was) if path exists. The name is given with link(2),
// so path never exists without its whole contents, even for an instant.
func CreateFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	if rmErr := os.Remove(tmp); err == nil {
		err = rmErr
	}
	if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// writeTemp writes data to a new temporary file beside path, fsyncs and
// closes it, and returns its name.
func writeTemp(path string, data []byte, perm os.FileMode) (string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// SyncDir fsyncs the directory dir, so that the names created, renamed or
// removed in it survive a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("durable: fsync of directory %s: %w", dir, err)
	}
	return nil
}

// MkdirAll makes dir and every missing parent with permissions perm, as
// os.MkdirAll does, and fsyncs the parent of each directory it makes, so
// that they survive a power cut. A directory that already exists is left
// as it is.
func MkdirAll(dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return &os.PathError{Op: "mkdir", Path: dir, Err: errors.New("not a directory")}
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if !errors.Is(err, os.ErrExist) {
			return err
		}
		// Made by someone else meanwhile: it is theirs to sync, but a
		// second fsync of the parent costs little and makes it ours too.
	}
	return SyncDir(parent)
}
