package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
