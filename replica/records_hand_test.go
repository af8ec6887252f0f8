package replica

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The record vectors (testdata/local_records.json) are rewritten from the
// code by -update-records. This test derives each one by hand from the
// record formats (docs/replica.md; 30k §5 for the checkpoint, RFC 9162 for
// its root), with the standard library only, and checks the committed file
// against that: a regenerated file that drifts from the format fails here.
func TestLocalRecordVectorsByHand(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "local_records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []recordVector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	hexSum := func(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }
	session := hexSum([]byte("session"))
	entry := []byte(`{"a witan entry":"its exact bytes"}`)
	seed := make([]byte, 32)
	seed[0] = 9
	priv := ed25519.NewKeyFromSeed(seed)
	node := "ed25519:" + base64.RawURLEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))

	// RFC 9162 §2.1.1: the root of the empty tree is SHA-256 of nothing;
	// a leaf hashes 0x00 ‖ leaf, an inner node 0x01 ‖ left ‖ right, and
	// the leaves are the 32-byte digests of the tx ids.
	emptyRoot := hexSum(nil)
	leaf := func(id []byte) []byte {
		d := sha256.Sum256(id) // the tx id's digest is the SHA-256 of the entry
		h := sha256.Sum256(append([]byte{0}, d[:]...))
		return h[:]
	}
	twoRoot := hexSum(append(append([]byte{1}, leaf([]byte("one"))...), leaf(entry)...))

	// A checkpoint record: the checkpoint's members (30k §5) plus the
	// session and the record's seq, in canonical JSON (keys sorted), the
	// signature over "oth/0.10-checkpoint\n" ‖ JCS(checkpoint without sig).
	// The first two are legacy records (signed without the session); since
	// the session is signed too, between root and size in key order.
	withSession := false
	checkpoint := func(seq, size int, root, ts string) string {
		signed := `{"node":"` + node + `","root":"` + root + `","size":` + strconv.Itoa(size) + `,"ts":"` + ts + `"}`
		if withSession {
			signed = `{"node":"` + node + `","root":"` + root + `","session":"` + session + `","size":` + strconv.Itoa(size) + `,"ts":"` + ts + `"}`
		}
		sig := base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte("oth/0.10-checkpoint\n"+signed)))
		return `{"node":"` + node + `","root":"` + root + `","seq":` + strconv.Itoa(seq) + `,"session":"` + session +
			`","sig":"` + sig + `","size":` + strconv.Itoa(size) + `,"ts":"` + ts + `"}`
	}
	c1 := checkpoint(1, 0, emptyRoot, "2026-09-21T00:00:00Z")
	// 500 ns past the second, in RFC 3339 with trailing zeros cut.
	c2 := checkpoint(2, 2, twoRoot, "2026-09-21T00:00:01.0000005Z")
	withSession = true
	c3 := checkpoint(3, 2, twoRoot, "2026-09-21T00:00:02Z")
	// A held record: the envelope's bytes in base64url without padding,
	// its session and its tx id.
	held := `{"entry":"` + base64.RawURLEncoding.EncodeToString(entry) + `","session":"` + session + `","tx":"` + hexSum(entry) + `"}`

	// A deposited draft: its branch, change id, commitment
	// sha256(salt ‖ change id as written), the objects as deposited in
	// base64url without padding, the salt likewise, and the session; keys
	// sorted.
	salt := strings.Repeat("\x01", 32)
	draft := `{"branch":"r-7f3a","change":"` + hexSum(entry) + `","commitment":"` + hexSum([]byte(salt+hexSum(entry))) +
		`","objects":["` + base64.RawURLEncoding.EncodeToString(entry) + `","` + base64.RawURLEncoding.EncodeToString([]byte(`"a node"`)) +
		`"],"salt":"` + base64.RawURLEncoding.EncodeToString([]byte(salt)) + `","session":"` + session + `"}`

	want := []struct {
		name, space, data string
		parents           []string
	}{
		{"first checkpoint, empty log", "witan-local/checkpoints/" + session, c1, nil},
		{"second checkpoint, after the first", "witan-local/checkpoints/" + session, c2, []string{hexSum([]byte(c1))}},
		{"third checkpoint, its session signed", "witan-local/checkpoints/" + session, c3, []string{hexSum([]byte(c2))}},
		{"held entry", "witan-local/held/" + session, held, nil},
		{"deposited draft", "witan-local/drafts", draft, nil},
	}
	if len(vs) != len(want) {
		t.Fatalf("%d vectors, %d derived by hand", len(vs), len(want))
	}
	for i, w := range want {
		v := vs[i]
		var parents []string
		for _, p := range v.Parents {
			parents = append(parents, p.String())
		}
		switch {
		case v.Name != w.name:
			t.Errorf("vector %d is %q, by hand %q", i, v.Name, w.name)
		case v.Space != w.space:
			t.Errorf("%s: space %s, by hand %s", w.name, v.Space, w.space)
		case v.Data != w.data:
			t.Errorf("%s: data\n%s\nby hand\n%s", w.name, v.Data, w.data)
		case v.ID.String() != hexSum([]byte(w.data)):
			t.Errorf("%s: id %s is not the SHA-256 of the data", w.name, v.ID)
		case strings.Join(parents, ",") != strings.Join(w.parents, ","):
			t.Errorf("%s: parents %v, by hand %v", w.name, parents, w.parents)
		}
	}
}
