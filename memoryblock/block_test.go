package memoryblock_test

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

func TestCanonicalMatchesReference(t *testing.T) {
	parent := dag.Sum([]byte("parent"))
	blocks := map[string]mb.Block{
		"full":    sample(t, parent),
		"zero":    {},
		"nulls":   {Origin: mb.NullValue(), Evidence: mb.NullValue(), Lineage: mb.NullParents()},
		"empties": {Subject: mb.MustText(""), Body: mb.MustValue("[]"), Evidence: mb.MustValue("{}"), Lineage: mb.MustParents()},
		"escapes": {Body: mb.MustText("<a & b>\n\"q\"\t\u0001 \u00e9 \U0001F600")},
	}
	for name, b := range blocks {
		t.Run(name, func(t *testing.T) {
			ref := referenceCanonical(t, b)
			if got := b.Canonical(); !bytes.Equal(got, ref) {
				t.Fatalf("Canonical\n got %s\nwant %s", got, ref)
			}
			if mb.BlockHash(b) != dag.IDFromDigest(sha256.Sum256(ref)) || b.ID() != mb.BlockHash(b) {
				t.Fatal("BlockHash is not the SHA-256 of the canonical form")
			}
		})
	}
	// the exact bytes of the empty block, written out by hand
	if got := string((mb.Block{}).Canonical()); got != `["witan/cat7/v1",[],[],[],[],[],[],[]]` {
		t.Fatalf("zero block canonical = %s", got)
	}
}

// Omitted, null and empty hash differently, field by field.
func TestHashSeparatesOmittedNullEmpty(t *testing.T) {
	for _, f := range mb.Fields() {
		empty := mb.MustText("")
		if f == mb.Lineage {
			empty = mb.MustValue("[]")
		}
		hashes := map[dag.ID]string{}
		for name, v := range map[string]mb.Value{"omitted": {}, "null": mb.NullValue(), "empty": empty} {
			h := mb.BlockHash(set(t, mb.Block{}, f, v))
			if prev, dup := hashes[h]; dup {
				t.Errorf("%s: %s and %s hash the same", f, prev, name)
			}
			hashes[h] = name
		}
	}
}

// The order of the fields is part of the hash: the same value moved to
// another field gives another hash.
func TestHashDependsOnFieldOrder(t *testing.T) {
	v := mb.MustText("same")
	seen := map[dag.ID]mb.Field{}
	for _, f := range mb.Fields() {
		if f == mb.Lineage {
			continue
		}
		h := mb.BlockHash(set(t, mb.Block{}, f, v))
		if g, dup := seen[h]; dup {
			t.Errorf("%s and %s hash the same", f, g)
		}
		seen[h] = f
	}
}

func TestVerifyBlockTampering(t *testing.T) {
	b := sample(t, dag.Sum([]byte("p")))
	if err := mb.VerifyBlock(b); err != nil {
		t.Fatalf("sealed block: %v", err)
	}
	for _, f := range mb.Fields() {
		var v mb.Value
		if f == mb.Lineage {
			v = mb.MustParents(dag.Sum([]byte("q"))).Value()
		} else {
			v = mb.MustText("tampered")
		}
		tampered := set(t, b, f, v) // keeps the old claimed hash
		if err := mb.VerifyBlock(tampered); mb.CodeOf(err) != mb.CodeBlockHashMismatch {
			t.Errorf("tampered %s: %v, want BLOCK_HASH_MISMATCH", f, err)
		}
		for _, other := range []mb.Value{{}, mb.NullValue()} {
			if err := mb.VerifyBlock(set(t, b, f, other)); mb.CodeOf(err) != mb.CodeBlockHashMismatch {
				t.Errorf("%s set to %v: %v", f, other, err)
			}
		}
	}
	unsealed := b
	unsealed.Hash = dag.ID{}
	if err := mb.VerifyBlock(unsealed); mb.CodeOf(err) != mb.CodeBlockHashMismatch {
		t.Errorf("block with no hash: %v", err)
	}
	wrong := b
	wrong.Hash = dag.Sum([]byte("other"))
	if err := mb.VerifyBlock(wrong); mb.CodeOf(err) != mb.CodeBlockHashMismatch {
		t.Errorf("wrong hash: %v", err)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	b := sample(t, dag.Sum([]byte("p")), dag.Sum([]byte("q")))
	b.Evidence = mb.NullValue()
	b.Body = mb.MustText("")
	b.Confidence = mb.Value{}
	b = b.Seal()
	wire := b.Encode()
	if !dag.IsCanonical(wire) {
		t.Fatalf("Encode is not canonical: %s", wire)
	}
	if strings.Contains(string(wire), `"confidence"`) {
		t.Fatalf("omitted field has a key: %s", wire)
	}
	if !strings.Contains(string(wire), `"evidence":null`) || !strings.Contains(string(wire), `"body":""`) {
		t.Fatalf("null or empty field lost: %s", wire)
	}
	got, err := mb.Decode(wire)
	if err != nil {
		t.Fatal(err)
	}
	if got != b {
		t.Fatalf("round trip changed the block:\n got %s\nwant %s", got.Encode(), wire)
	}
	if err := mb.VerifyBlock(got); err != nil {
		t.Fatal(err)
	}
	c, err := mb.DecodeCanonical(b.Canonical())
	if err != nil {
		t.Fatal(err)
	}
	if c != b {
		t.Fatalf("DecodeCanonical round trip:\n got %s\nwant %s", c.Encode(), wire)
	}
	// encoding/json integration
	var viaJSON mb.Block
	if err := viaJSON.UnmarshalJSON(wire); err != nil || viaJSON != b {
		t.Fatalf("UnmarshalJSON: %v", err)
	}
}

// Decode accepts non-canonical input and answers the same block.
func TestDecodeNonCanonicalInput(t *testing.T) {
	in := "{ \"subject\" : \"x\",\n \"origin\": \"a\", \"lineage\": [ ] }"
	b, err := mb.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := mb.Block{Origin: mb.MustText("a"), Subject: mb.MustText("x"), Lineage: mb.MustParents()}
	if b != want {
		t.Fatalf("got %s", b.Encode())
	}
}

func TestDecodeRefuses(t *testing.T) {
	id := dag.Sum([]byte("p")).String()
	cases := []struct {
		name, in string
		code     mb.Code
	}{
		{"unknown key", `{"origin":"a","colour":"red"}`, mb.CodeBlockUnknownField},
		{"unknown key beats float", `{"colour":0.5}`, mb.CodeBlockUnknownField},
		{"key differs in case", `{"Origin":"a"}`, mb.CodeBlockUnknownField},
		{"not json", `{"origin":`, mb.CodeBlockMalformed},
		{"array", `[]`, mb.CodeBlockMalformed},
		{"string", `"origin"`, mb.CodeBlockMalformed},
		{"duplicate key", `{"origin":"a","origin":"b"}`, mb.CodeBlockMalformed},
		{"trailing data", `{} {}`, mb.CodeBlockMalformed},
		{"float", `{"confidence":0.8}`, mb.CodeBlockMalformed},
		{"not NFC", "{\"body\":\"e\u0301\"}", mb.CodeBlockMalformed},
		{"invalid utf-8", "{\"body\":\"\xff\"}", mb.CodeBlockMalformed},
		{"lineage string", `{"lineage":"` + id + `"}`, mb.CodeBlockMalformed},
		{"lineage number", `{"lineage":[1]}`, mb.CodeBlockMalformed},
		{"lineage bad id", `{"lineage":["sha256:00"]}`, mb.CodeBlockMalformed},
		{"lineage upper hex", `{"lineage":["` + strings.ToUpper(id) + `"]}`, mb.CodeBlockMalformed},
		{"lineage duplicate", `{"lineage":["` + id + `","` + id + `"]}`, mb.CodeBlockMalformed},
		{"hash number", `{"hash":1}`, mb.CodeBlockMalformed},
		{"hash null", `{"hash":null}`, mb.CodeBlockMalformed},
		{"hash bad", `{"hash":"sha256:xyz"}`, mb.CodeBlockMalformed},
		{"too deep", `{"body":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, mb.CodeBlockMalformed},
		{"too big", `{"body":"` + strings.Repeat("a", mb.MaxBlockSize) + `"}`, mb.CodeBlockMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mb.Decode([]byte(c.in))
			if mb.CodeOf(err) != c.code {
				t.Fatalf("Decode error %v, want %s", err, c.code)
			}
		})
	}
}

func TestDecodeCanonicalRefuses(t *testing.T) {
	good := string(sample(t).Canonical())
	cases := map[string]string{
		"not canonical":   strings.Replace(good, ",", ", ", 1),
		"wrong domain":    strings.Replace(good, mb.HashDomain, "witan/cat7/v2", 1),
		"six slots":       `["witan/cat7/v1",[],[],[],[],[],[]]`,
		"eight slots":     `["witan/cat7/v1",[],[],[],[],[],[],[],[]]`,
		"slot not array":  `["witan/cat7/v1",null,[],[],[],[],[],[]]`,
		"slot of two":     `["witan/cat7/v1",[1,2],[],[],[],[],[],[]]`,
		"lineage object":  `["witan/cat7/v1",[],[],[],[],[],[],[{}]]`,
		"object":          `{"origin":"a"}`,
		"float in a slot": `["witan/cat7/v1",[0.5],[],[],[],[],[],[]]`,
	}
	for name, in := range cases {
		if _, err := mb.DecodeCanonical([]byte(in)); mb.CodeOf(err) != mb.CodeBlockMalformed {
			t.Errorf("%s: %v, want BLOCK_MALFORMED", name, err)
		}
	}
	b, err := mb.DecodeCanonical([]byte(`["witan/cat7/v1",[],[null],[""],[],[],[],[[]]]`))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Origin.IsOmitted() || !b.Subject.IsNull() || !b.Body.IsEmpty() || b.Lineage.Presence() != mb.Present || b.Lineage.Len() != 0 {
		t.Fatalf("decoded %s", b.Encode())
	}
	if err := mb.VerifyBlock(b); err != nil {
		t.Fatal(err)
	}
}

func TestGetAndParents(t *testing.T) {
	p := dag.Sum([]byte("p"))
	b := sample(t, p)
	for _, f := range mb.Fields() {
		v := get(t, b, f)
		if !v.IsPresent() {
			t.Errorf("%s: %v", f, v.Presence())
		}
	}
	if got := get(t, b, mb.Lineage); string(got.JSON()) != `["`+p.String()+`"]` {
		t.Errorf("lineage value %s", got)
	}
	if ps := b.Parents(); len(ps) != 1 || ps[0] != p {
		t.Errorf("Parents() = %v", ps)
	}
}
