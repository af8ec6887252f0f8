package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ht "github.com/witan-dev/witan/replica/house/housetest"
)

func TestKeygen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "a.key")
	out, _, code := run(ctx, "", "keygen", "-out", path)
	if code != exitOK || !strings.HasPrefix(out, "key   ed25519:") {
		t.Fatalf("keygen: %d %q", code, out)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	s, err := readKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, s.Key().String()) {
		t.Fatalf("printed key %q is not the file's %s", out, s.Key())
	}
	// An existing key is never overwritten without -force.
	if _, errOut, code := run(ctx, "", "keygen", "-out", path); code != exitFailure || !strings.Contains(errOut, "exists") {
		t.Fatalf("second keygen: %d %q", code, errOut)
	}
	out, _, code = run(ctx, "", "keygen", "-out", path, "-force", "-json")
	var j struct{ Key, File string }
	if code != exitOK || json.Unmarshal([]byte(out), &j) != nil || j.File != path || j.Key == s.Key().String() {
		t.Fatalf("keygen -force -json: %d %q", code, out)
	}
	// A key others can read is refused.
	os.Chmod(path, 0o644)
	if _, err := readKeyFile(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("a world-readable key was read: %v", err)
	}
	os.Chmod(path, 0o600)
	// A file whose key does not match its seed is refused.
	b, _ := os.ReadFile(path)
	bad := strings.Replace(string(b), j.Key, s.Key().String(), 1)
	os.WriteFile(path, []byte(bad), 0o600)
	if _, err := readKeyFile(path); err == nil {
		t.Fatal("a key file with a foreign public key was read")
	}
}

func TestBench(t *testing.T) {
	out, errOut, code := run(context.Background(), "", "bench", "-n", "5")
	if code != exitOK {
		t.Fatalf("bench: %d %s", code, errOut)
	}
	for _, row := range []string{"submit ballot (replica)", "state hash", "checkpoint", "submit ballot (HTTP)", "GET /log", "replay (verify)"} {
		if !strings.Contains(out, row) {
			t.Fatalf("bench table lacks %q:\n%s", row, out)
		}
	}
	out, _, code = run(context.Background(), "", "bench", "-n", "3", "-json")
	var rows []BenchRow
	if code != exitOK || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 6 || rows[0].Ops != 3 || rows[0].PerOp <= 0 {
		t.Fatalf("bench -json: %d %s", code, out)
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, c := range []struct {
		addr   string
		public bool
		ok     bool
	}{
		{"127.0.0.1:8030", false, true},
		{"localhost:0", false, true},
		{"[::1]:8030", false, true},
		{"0.0.0.0:8030", false, false},
		{"192.168.1.4:8030", false, false},
		{"0.0.0.0:8030", true, true},
		{"nonsense", false, false},
	} {
		if err := checkLoopback(c.addr, c.public); (err == nil) != c.ok {
			t.Errorf("checkLoopback(%q, %v) = %v", c.addr, c.public, err)
		}
	}
}

// TestDamagedKeyIsNotReplaced: a node key or libp2p key that is empty
// (what a power cut leaves of a key written without fsync), cut short or
// garbled stops witan up with an error that names the file and says what
// to do; the file is left as it was and no new identity is made.
func TestDamagedKeyIsNotReplaced(t *testing.T) {
	ctx := context.Background()
	// Any valid key file serves to be cut short.
	kp := filepath.Join(t.TempDir(), "k")
	if err := writeKeyFile(kp, ht.Member(7), false); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(kp)
	for _, c := range []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"empty node key", "node.key", nil, "node.key is empty or damaged (the file is empty): restore it from a backup, or move it aside to start this node with a new identity"},
		{"node key cut short", "node.key", good[:len(good)/2], "node.key is empty or damaged (unexpected EOF): restore it from a backup, or move it aside"},
		{"node key garbled", "node.key", []byte("\x00\x00\x00\x00"), "node.key is empty or damaged (invalid character"},
		{"empty p2p key", "p2p.key", nil, "p2p.key is empty or damaged (the file is empty): restore it from a backup, or move it aside to start this node with a new libp2p peer id"},
		{"p2p key garbled", "p2p.key", []byte("\x08\x01\x12\x03abc"), "p2p.key is empty or damaged ("},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.file == "p2p.key" {
				if err := writeKeyFile(filepath.Join(dir, "node.key"), ht.Member(7), false); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := run(ctx, "", "up", "-data", dir, "-http", "127.0.0.1:0", "-mdns=false", "-p2p-listen", "/ip4/127.0.0.1/tcp/0")
			if code != exitFailure || !strings.Contains(errOut, path+" ") || !strings.Contains(errOut, c.want) {
				t.Fatalf("witan up on a damaged %s: exit %d, stderr %q; want it to contain %q", c.file, code, errOut, c.want)
			}
			if b, _ := os.ReadFile(path); string(b) != string(c.data) {
				t.Errorf("%s was changed to %q", c.file, b)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "node.key" && e.Name() != "p2p.key" {
					t.Errorf("witan up made %s before refusing the damaged key", e.Name())
				}
			}
		})
	}
	// A member's key file says to make a new key, not a new identity.
	p := filepath.Join(t.TempDir(), "voter.key")
	os.WriteFile(p, nil, 0o600)
	if _, err := readKeyFile(p); err == nil || !strings.Contains(err.Error(), "voter.key is empty or damaged (the file is empty): restore it from a backup, or make a new key with witan keygen") {
		t.Errorf("an empty member key: %v", err)
	}
}
