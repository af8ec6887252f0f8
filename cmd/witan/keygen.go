package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/witan-dev/witan/dag"
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

func writeKeyFile(path string, s *dag.Signer, force bool) error {
	b, err := json.MarshalIndent(keyFile{Key: s.Key().String(), Seed: base64.RawURLEncoding.EncodeToString(s.Seed())}, "", "  ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists (use -force to overwrite)", path)
		}
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readKeyFile loads a key written by writeKeyFile and checks that only its
// owner can read it and that its seed and public key agree.
func readKeyFile(path string) (*dag.Signer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, noKeyFile{path}
	}
	if err != nil {
		return nil, err
	}
	var kf keyFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil || kf.Key == "" || kf.Seed == "" {
		return nil, fmt.Errorf("%s is not a witan key file (witan keygen makes one; -key names it)", path)
	}
	seed, err := base64.RawURLEncoding.DecodeString(kf.Seed)
	if err != nil {
		return nil, fmt.Errorf("%s: seed: %w", path, err)
	}
	s, err := dag.SignerFromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Key().String() != kf.Key {
		return nil, fmt.Errorf("%s: key %s does not match its seed", path, kf.Key)
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
