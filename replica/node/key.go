package node

// This file keeps a node key on disk: the file witan up keeps as
// witan-data/node.key, {"key":"ed25519:…","seed":"<base64url>"}, mode
// 0600, readable by its owner only.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/durable"
)

// LoadOrCreateKey returns the node key kept in the file at path, creating
// the file with a fresh key (and its directory) when there is none. A file
// others may read, that does not decode, or whose key is not its seed's is
// an error, never replaced. The new file is written through dag/durable
// (synced, with its directory) before the key is returned: a node that signs with it must find it again
// after a power cut. Open refuses a store first opened with another key
// (replica.ErrOtherNodeKey).
func LoadOrCreateKey(path string) (*dag.Signer, error) {
	s, err := readKey(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	if s, err = dag.GenerateSigner(nil); err != nil {
		return nil, fmt.Errorf("node: generate node key: %w", err)
	}
	if err := writeKey(path, s); err != nil {
		return nil, err
	}
	return s, nil
}

type keyFile struct {
	Key  string `json:"key"`
	Seed string `json:"seed"`
}

func readKey(path string) (*dag.Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("node: %s is readable by others (mode %o); chmod 600 it", path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var kf keyFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil {
		return nil, fmt.Errorf("node: %s: %w", path, err)
	}
	seed, err := base64.RawURLEncoding.DecodeString(kf.Seed)
	if err != nil {
		return nil, fmt.Errorf("node: %s: seed: %w", path, err)
	}
	s, err := dag.SignerFromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", path, err)
	}
	if s.Key().String() != kf.Key {
		return nil, fmt.Errorf("node: %s: key %s does not match its seed", path, kf.Key)
	}
	return s, nil
}

func writeKey(path string, s *dag.Signer) error {
	b, err := json.MarshalIndent(keyFile{Key: s.Key().String(), Seed: base64.RawURLEncoding.EncodeToString(s.Seed())}, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	// A new file, synced with its directory before it is named: a crash
	// leaves the old state (no key) or the whole key, never a part.
	if err := durable.CreateFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	return nil
}
