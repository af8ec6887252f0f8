package node

// This file keeps a node key on disk: the file witan up keeps as
// witan-data/node.key, {"key":"ed25519:…","seed":"<base64url>"}, mode
// 0600, readable by its owner only. witan keygen writes members' keys in
// the same form, and witan reads them with ReadKeyFile.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/durable"
)

// NodeKeyAdvice is what a damaged node key's error says to do.
const NodeKeyAdvice = "restore it from a backup, or move it aside to start this node with a new identity (what it signed so far names the old key)"

// LoadOrCreateKey returns the node key kept in the file at path, creating
// the file with a fresh key (and its directory) when there is none. A file
// others may read, or one that is there but holds no key (empty, as a
// power cut leaves a key written without fsync, cut short or changed), is
// an error that names it and says what to do (NodeKeyAdvice), never
// replaced. The new file is written through dag/durable (synced, with its
// directory) before the key is returned: a node that signs with it must
// find it again after a power cut. Open refuses a store first opened with
// another key (replica.ErrOtherNodeKey).
func LoadOrCreateKey(path string) (*dag.Signer, error) {
	s, err := ReadKeyFile(path, NodeKeyAdvice)
	if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	if s, err = dag.GenerateSigner(nil); err != nil {
		return nil, fmt.Errorf("node: generate node key: %w", err)
	}
	b, err := KeyFileBytes(s)
	if err != nil {
		return nil, err
	}
	if err := durable.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	// A new file, synced with its directory before it is named: a crash
	// leaves the old state (no key) or the whole key, never a part.
	if err := durable.CreateFile(path, b, 0o600); err != nil {
		if errors.Is(err, os.ErrExist) { // another start made it meanwhile
			return ReadKeyFile(path, NodeKeyAdvice)
		}
		return nil, fmt.Errorf("node: write %s: %w", path, err)
	}
	return s, nil
}

type keyFile struct {
	Key  string `json:"key"`
	Seed string `json:"seed"`
}

// KeyFileBytes returns the key file of s: {"key","seed"}, indented, with
// a final newline.
func KeyFileBytes(s *dag.Signer) ([]byte, error) {
	b, err := json.MarshalIndent(keyFile{Key: s.Key().String(), Seed: base64.RawURLEncoding.EncodeToString(s.Seed())}, "", "  ")
	return append(b, '\n'), err
}

// DamagedKeyError is ReadKeyFile's error for a key file that is there but
// holds no key: empty, cut short, or changed. Its message names the file,
// the cause, and Advice.
type DamagedKeyError struct {
	Path, Advice string
	Err          error
}

func (e *DamagedKeyError) Error() string {
	return fmt.Sprintf("%s is empty or damaged (%v): %s", e.Path, e.Err, e.Advice)
}

func (e *DamagedKeyError) Unwrap() error { return e.Err }

// ErrEmptyKey is the cause of a DamagedKeyError for a file that holds
// nothing.
var ErrEmptyKey = errors.New("the file is empty")

// ReadKeyFile loads the key file at path and checks that its seed and
// public key agree and that only its owner can read it (like ssh, a
// secret others can read is refused, not used). A file that is not there
// is an error wrapping os.ErrNotExist; one that holds no key is a
// *DamagedKeyError that gives advice.
func ReadKeyFile(path, advice string) (*dag.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	damaged := func(err error) error { return &DamagedKeyError{Path: path, Advice: advice, Err: err} }
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, damaged(ErrEmptyKey)
	}
	var kf keyFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil || kf.Key == "" || kf.Seed == "" {
		if err == nil {
			err = errors.New("its key or seed is missing")
		}
		return nil, damaged(err)
	}
	seed, err := base64.RawURLEncoding.DecodeString(kf.Seed)
	if err != nil {
		return nil, damaged(err)
	}
	s, err := dag.SignerFromSeed(seed)
	if err != nil {
		return nil, damaged(err)
	}
	if s.Key().String() != kf.Key {
		return nil, damaged(fmt.Errorf("key %s does not match its seed", kf.Key))
	}
	// Checked once the file is known to be a key, so the advice fits.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("the key file %s is readable by others (mode %o); chmod 600 %s", path, perm, path)
	}
	return s, nil
}
