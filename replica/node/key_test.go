package node_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"

	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/node"
)

// TestLoadOrCreateKey: the first call makes the key file (mode 0600), the
// next reads the same key; a node opened on its directory with another
// key is refused with replica.ErrOtherNodeKey, and with its own key opens.
func TestLoadOrCreateKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "keys", "node.key")
	k1, err := node.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, st.Mode())
	}
	k2, err := node.LoadOrCreateKey(path)
	if err != nil || k2.Key() != k1.Key() {
		t.Fatalf("second load: %v, key %s then %s", err, k1.Key(), k2.Key())
	}
	data := filepath.Join(dir, "data")
	n, err := node.Open(ctx, node.Options{Dir: data, NodeKey: k1})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := node.LoadOrCreateKey(filepath.Join(dir, "other.key"))
	if err != nil || other.Key() == k1.Key() {
		t.Fatalf("another key: %v", err)
	}
	if n, err := node.Open(ctx, node.Options{Dir: data, NodeKey: other}); !errors.Is(err, replica.ErrOtherNodeKey) {
		if err == nil {
			n.Close()
		}
		t.Fatalf("opened with another key: %v, want replica.ErrOtherNodeKey", err)
	}
	n, err = node.Open(ctx, node.Options{Dir: data, NodeKey: k1})
	if err != nil {
		t.Fatalf("reopened with its own key: %v", err)
	}
	n.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := node.LoadOrCreateKey(path); err == nil {
		t.Fatal("a key file others may read was used")
	}
}

// TestLoadOrCreateKeyDamaged: a node key file that is empty (what a power
// cut leaves of a key written without fsync) or cut short is an error
// that names the file and says what to do, and the file is left as it
// was: no new identity is made.
func TestLoadOrCreateKeyDamaged(t *testing.T) {
	good, err := node.KeyFileBytes(mustSigner(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"empty": nil, "cut short": good[:len(good)/2]} {
		path := filepath.Join(t.TempDir(), "node.key")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := node.LoadOrCreateKey(path)
		var de *node.DamagedKeyError
		if !errors.As(err, &de) || de.Path != path || !strings.HasPrefix(err.Error(), path+" is empty or damaged (") || !strings.HasSuffix(err.Error(), node.NodeKeyAdvice) {
			t.Errorf("%s: %v; want a DamagedKeyError naming %s with the advice", name, err, path)
		}
		if name == "empty" && !errors.Is(err, node.ErrEmptyKey) {
			t.Errorf("empty: %v; want ErrEmptyKey", err)
		}
		if b, _ := os.ReadFile(path); string(b) != string(data) {
			t.Errorf("%s: the file was changed to %q", name, b)
		}
	}
}

func mustSigner(t *testing.T) *dag.Signer {
	t.Helper()
	s, err := dag.GenerateSigner(nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
