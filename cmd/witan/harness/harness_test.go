package harness

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/mlog"
	"github.com/witan-dev/witan/replica/opinion"
)

// The harness's canonicalization against RFC 8785's own examples
// (§3.2.2.2 strings, §3.2.3 sorting by UTF-16 code units), written out
// by hand, and against witan's dag.Canonicalize on the same inputs: the
// two are written separately, so agreeing is evidence, not tautology.
func TestCanonVectors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"b":1,"a":"x"}`, `{"a":"x","b":1}`},
		{`{"\u20ac":1,"\r":2,"1":3,"\u00e9":4,"\ud83d\ude00":5,"\ufb33":6}`, "{\"\\r\":2,\"1\":3,\"\u00e9\":4,\"\u20ac\":1,\"\U0001F600\":5,\"\ufb33\":6}"},
		{`["\u0000\u001f\b\t\n\f\r\"\\/<>&\u2028"]`, "[\"\\u0000\\u001f\\b\\t\\n\\f\\r\\\"\\\\/<>&\u2028\"]"},
		{`{ "nested" : { "z" : [ true , false , null ] , "a" : -7 } }`, `{"nested":{"a":-7,"z":[true,false,null]}}`},
	} {
		got, err := CanonJSON([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("Canon(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
		theirs, err := dag.Canonicalize([]byte(c.in))
		if err == nil && string(theirs) != string(got) {
			t.Errorf("dag.Canonicalize(%s) = %s, harness %s", c.in, theirs, got)
		}
	}
	if _, err := CanonJSON([]byte(`{"a":1.5}`)); err == nil {
		t.Error("a fraction was accepted")
	}
}

// A node object and a change built by the harness hash as 30k §4 says,
// and as witan's dag.Node does for the same node.
func TestNodeHash(t *testing.T) {
	n := &Node{NID: "/us/t1/s1", Kind: "section", Heading: "Section 1", Text: "The period is 30 days."}
	// By hand: JCS sorts children, heading, kind, nid, text.
	want := `{"children":[],"heading":"Section 1","kind":"section","nid":"/us/t1/s1","text":"The period is 30 days."}`
	if got := string(MustCanon(n.object())); got != want {
		t.Fatalf("node object %s, want %s", got, want)
	}
	if n.Hash() != Hash([]byte(want)) {
		t.Fatal("node hash is not sha256 of its canonical object")
	}
	dn := dag.Node{NID: n.NID, Kind: n.Kind, Heading: n.Heading, Text: n.Text}
	if got := string(dn.AppendCanonical(nil)); got != want {
		t.Errorf("witan's node object %s, the harness's %s", got, want)
	}
}

// Envelopes the harness seals verify under witan's own decoder and
// signature check, with the same id.
func TestSealVerifies(t *testing.T) {
	s := NewSigner("test member")
	tx := Seal(s, "ballot.cast", "sha256:"+strings.Repeat("ab", 32), []string{"sha256:" + strings.Repeat("cd", 32)},
		map[string]any{"mr": "sha256:" + strings.Repeat("ef", 32), "choice": "approve", "supersedes": nil}, "2026-09-21T12:00:01Z")
	env, _, id, err := dag.DecodeEnvelope(tx.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if id.String() != tx.ID {
		t.Fatalf("witan's id %s, the harness's %s", id, tx.ID)
	}
	if err := env.VerifySignature(); err != nil {
		t.Fatal(err)
	}
	if got, err := VerifyEnvelope(tx.Bytes); err != nil || got != tx.ID {
		t.Fatalf("VerifyEnvelope: %s %v", got, err)
	}
	var m map[string]any
	_ = json.Unmarshal(tx.Bytes, &m)
	m["body"].(map[string]any)["choice"] = "reject"
	b, _ := json.Marshal(m)
	if _, err := VerifyEnvelope(b); err == nil {
		t.Fatal("a changed body verified")
	}
}

// The harness's RFC 9162 root equals witan's mlog for 0..9 leaves.
func TestMerkleRoot(t *testing.T) {
	var ids []string
	for n := 0; n < 10; n++ {
		root, err := MerkleRoot(ids)
		if err != nil {
			t.Fatal(err)
		}
		var leaves [][]byte
		for _, id := range ids {
			d, _ := dag.ParseID(id)
			dg := d.Digest()
			leaves = append(leaves, mlog.LeafHash(dg[:]))
		}
		tr := mlog.New(func(i uint64) []byte { return leaves[i] }, 0)
		tr.Grow(uint64(len(leaves)))
		want, err := tr.Root(uint64(len(leaves)))
		if err != nil {
			t.Fatal(err)
		}
		if root != "sha256:"+hex.EncodeToString(want) {
			t.Fatalf("%d leaves: %s, witan %x", n, root, want)
		}
		ids = append(ids, Hash([]byte{byte(n)}))
	}
}

// VerifyInclusion against witan's mlog proofs (a separate implementation
// of RFC 9162): every index of trees of 1 to 9 leaves verifies, and a
// path with one hash changed, a wrong index and another root fail.
func TestVerifyInclusion(t *testing.T) {
	var ids []string
	var leaves [][]byte
	for n := 1; n <= 9; n++ {
		id := Hash([]byte{byte(n)})
		ids = append(ids, id)
		d, _ := dag.ParseID(id)
		dg := d.Digest()
		leaves = append(leaves, mlog.LeafHash(dg[:]))
		tr := mlog.New(func(i uint64) []byte { return leaves[i] }, 0)
		tr.Grow(uint64(n))
		root, err := MerkleRoot(ids)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			p, err := tr.Inclusion(uint64(i), uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			path := make([]string, len(p))
			for j, h := range p {
				path[j] = "sha256:" + hex.EncodeToString(h)
			}
			if err := VerifyInclusion(ids[i], int64(i), int64(n), path, root); err != nil {
				t.Fatalf("leaf %d of %d: %v", i, n, err)
			}
			if n > 1 {
				if VerifyInclusion(ids[i], int64((i+1)%n), int64(n), path, root) == nil {
					t.Fatalf("leaf %d of %d verifies at index %d", i, n, (i+1)%n)
				}
				bad := append([]string(nil), path...)
				bad[0] = Hash([]byte("not a node"))
				if VerifyInclusion(ids[i], int64(i), int64(n), bad, root) == nil {
					t.Fatalf("leaf %d of %d verifies with a changed path", i, n)
				}
			}
			other, _ := MerkleRoot(append(append([]string(nil), ids...), Hash([]byte("one more"))))
			if VerifyInclusion(ids[i], int64(i), int64(n), path, other) == nil {
				t.Fatalf("leaf %d of %d verifies against another root", i, n)
			}
		}
	}
}

// The harness links only the standard library: it must not compute what
// it checks with the code it checks.
func TestStdlibOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v %s", err, out)
	}
	for _, d := range strings.Fields(string(out)) {
		if d != "github.com/witan-dev/witan/cmd/witan/harness" {
			t.Errorf("the harness links %s", d)
		}
	}
}

// docs/opinions.md parses into its "###" items (ten opinions and three
// open questions, counted by hand), each a body witan's own opinion
// decoder accepts as an implementation's opinion on the spec.
func TestOpinionsDoc(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/opinions.md")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := ParseOpinions(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 13 {
		t.Fatalf("%d opinions, want 13", len(ops))
	}
	for _, o := range ops {
		b := MustCanon(ImplementationOpinion(o))
		op, err := opinion.Decode(b)
		if err != nil {
			t.Fatalf("%q: %v", o.Summary, err)
		}
		if op.AuthorKind != "implementation" || op.Summary != o.Summary {
			t.Fatalf("decoded %+v", op)
		}
	}
}

// houseOutcome against §7's threshold_vote worked out by hand for N = 30
// (basis electorate, quorum 1/2, on_threshold).
func TestHouseOutcome(t *testing.T) {
	for _, c := range []struct {
		rule      string
		a, rj, ab int
		want      string
	}{
		{"majority", 16, 0, 0, "approved"},    // 32 > 30, quorum 32 ≥ 30
		{"majority", 15, 0, 0, "pending"},     // 30 > 30 fails; (30−0)·2 = 60 > 30
		{"majority", 14, 15, 0, "rejected"},   // (30−15)·2 = 30 > 30 fails
		{"majority", 14, 14, 0, "pending"},    // (30−14)·2 = 32 > 30
		{"two-thirds", 20, 0, 0, "approved"},  // 60 ≥ 60
		{"two-thirds", 19, 10, 0, "pending"},  // 57 ≥ 60 fails; (30−10)·3 = 60 ≥ 60
		{"two-thirds", 19, 11, 0, "rejected"}, // (30−11)·3 = 57 ≥ 60 fails
	} {
		if got := houseOutcome(c.rule, 30, c.a, c.rj, c.ab); got != c.want {
			t.Errorf("%s A=%d R=%d: %s, want %s", c.rule, c.a, c.rj, got, c.want)
		}
	}
}
