package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/durable"
	"github.com/witan-dev/witan/replica/node"
)

// KeygenCommand makes an Ed25519 key and writes its seed to a file that only
// its owner can read. The public key ("ed25519:…") is printed: it is a
// member's id in a session.
type KeygenCommand struct {
	main *Main
}

func (c *KeygenCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("keygen", "keygen [-out FILE] [-force] [-json]")
	out := fs.String("out", "witan.key", "file to write the key to")
	force := fs.Bool("force", false, "overwrite an existing file")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	s, err := dag.GenerateSigner(nil)
	if err != nil {
		return err
	}
	if err := writeKeyFile(*out, s, *force); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(map[string]string{"key": s.Key().String(), "file": *out})
	}
	fmt.Fprintf(c.main.Stdout, "key   %s\nfile  %s\n", s.Key(), *out)
	return nil
}

// writeKeyFile writes s's key file at path (durably: after a power cut the
// file is there whole or not at all), refusing to replace a file unless
// force.
func writeKeyFile(path string, s *dag.Signer, force bool) error {
	b, err := node.KeyFileBytes(s)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := durable.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	if force {
		return durable.WriteFile(path, b, 0o600)
	}
	if err := durable.CreateFile(path, b, 0o600); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists (use -force to overwrite)", path)
		}
		return err
	}
	return nil
}

// The advice a damaged key file's error gives, by what the key is.
const (
	adviceMemberKey = "restore it from a backup, or make a new key with witan keygen (a new key is a new member id)"
	adviceP2PKey    = "restore it from a backup, or move it aside to start this node with a new libp2p peer id (peers given its old address must be given the new one)"
)

// damagedKey is the error of a key file that is there but holds no key:
// empty (a key written without fsync and cut by a power loss), cut short
// or changed. It says what to do; the node never replaces such a key by
// itself.
func damagedKey(path, advice string, cause error) error {
	return &node.DamagedKeyError{Path: path, Advice: advice, Err: cause}
}

// readKeyFile loads a member's key written by writeKeyFile (readKeyFileAs
// with the advice for a member's key).
func readKeyFile(path string) (*dag.Signer, error) { return readKeyFileAs(path, adviceMemberKey) }

// readKeyFileAs loads a key written by writeKeyFile (node.ReadKeyFile,
// whose checks and damaged-key errors witan up's node key shares). A file
// that is not there is noKeyFile; a file of another kind named as a
// member's key (a roster, a draft) says it is not a key file. The node's
// own key file holds nothing but a key, so anything else in it is damage.
func readKeyFileAs(path, advice string) (*dag.Signer, error) {
	s, err := node.ReadKeyFile(path, advice)
	if errors.Is(err, os.ErrNotExist) {
		return nil, noKeyFile{path}
	}
	var de *node.DamagedKeyError
	if errors.As(err, &de) && advice == adviceMemberKey && !errors.Is(err, node.ErrEmptyKey) {
		if b, rerr := os.ReadFile(path); rerr == nil && !bytes.Contains(b, []byte(`"seed"`)) {
			return nil, fmt.Errorf("%s is not a witan key file (witan keygen makes one; -key names it)", path)
		}
	}
	return s, err
}

// noKeyFile is readKeyFile's error for a file that is not there: it says
// how to make one, and is os.ErrNotExist to callers that make one
// themselves (witan up's node key).
type noKeyFile struct{ path string }

func (e noKeyFile) Error() string {
	return fmt.Sprintf("no key file %s: make one with \"witan keygen -out %s\", or name another with -key FILE", e.path, e.path)
}

func (e noKeyFile) Unwrap() error { return os.ErrNotExist }
