package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/durable"
)

// KeygenCommand makes an Ed25519 key and writes its seed to a file that only
// its owner can read. The public key ("ed25519:…") is printed: it is a
// member's id in a session.
type KeygenCommand struct {
	main *Main
}

// keyFile is the on-disk form of a key: the RFC 8032 seed in base64url.
type keyFile struct {
	Key  string `json:"key"`
	Seed string `json:"seed"`
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
	b, err := keyFileBytes(s)
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

// keyFileBytes is the key file of s.
func keyFileBytes(s *dag.Signer) ([]byte, error) {
	b, err := json.MarshalIndent(keyFile{Key: s.Key().String(), Seed: base64.RawURLEncoding.EncodeToString(s.Seed())}, "", "  ")
	return append(b, '\n'), err
}

// The advice a damaged key file's error gives, by what the key is.
const (
	adviceMemberKey = "restore it from a backup, or make a new key with witan keygen (a new key is a new member id)"
	adviceNodeKey   = "restore it from a backup, or move it aside to start this node with a new identity (what it signed so far names the old key)"
	adviceP2PKey    = "restore it from a backup, or move it aside to start this node with a new libp2p peer id (peers given its old address must be given the new one)"
)

// damagedKey is the error of a key file that is there but holds no key:
// empty (a key written without fsync and cut by a power loss), cut short
// or changed. It says what to do; the node never replaces such a key by
// itself.
func damagedKey(path, advice string, cause error) error {
	return fmt.Errorf("%s is empty or damaged (%w): %s", path, cause, advice)
}

// readKeyFile loads a member's key written by writeKeyFile (readKeyFileAs
// with the advice for a member's key).
func readKeyFile(path string) (*dag.Signer, error) { return readKeyFileAs(path, adviceMemberKey) }

// readKeyFileAs loads a key written by writeKeyFile and checks that its
// seed and public key agree and that only its owner can read it. A file
// that is not there is noKeyFile; one that holds nothing, or a key file cut
// short or changed, is an error that gives advice; a file of another kind
// named as a member's key (a roster, a draft) says it is not a key file.
// The node's own key file holds nothing but a key, so anything else in it
// is damage.
func readKeyFileAs(path, advice string) (*dag.Signer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, noKeyFile{path}
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, damagedKey(path, advice, errEmptyKey)
	}
	var kf keyFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil || kf.Key == "" || kf.Seed == "" {
		if advice == adviceMemberKey && !bytes.Contains(b, []byte(`"seed"`)) {
			return nil, fmt.Errorf("%s is not a witan key file (witan keygen makes one; -key names it)", path)
		}
		if err == nil {
			err = errors.New("its key or seed is missing")
		}
		return nil, damagedKey(path, advice, err)
	}
	seed, err := base64.RawURLEncoding.DecodeString(kf.Seed)
	if err != nil {
		return nil, damagedKey(path, advice, err)
	}
	s, err := dag.SignerFromSeed(seed)
	if err != nil {
		return nil, damagedKey(path, advice, err)
	}
	if s.Key().String() != kf.Key {
		return nil, damagedKey(path, advice, fmt.Errorf("key %s does not match its seed", kf.Key))
	}
	// Like ssh: a secret others can read is refused, not used. Checked
	// once the file is known to be a key, so the advice fits.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("the key file %s is readable by others (mode %o); chmod 600 %s", path, perm, path)
	}
	return s, nil
}

// noKeyFile is readKeyFile's error for a file that is not there: it says
// how to make one, and is os.ErrNotExist to callers that make one
// themselves (witan up's node key).
type noKeyFile struct{ path string }

func (e noKeyFile) Error() string {
	return fmt.Sprintf("no key file %s: make one with \"witan keygen -out %s\", or name another with -key FILE", e.path, e.path)
}

func (e noKeyFile) Unwrap() error { return os.ErrNotExist }

// errEmptyKey is the cause of a damaged key file that holds nothing.
var errEmptyKey = errors.New("the file is empty")
