package memoryblock_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

var update = flag.Bool("update", false, "rewrite the golden vectors in testdata/ from the code")

// The vectors are ours, not the spec's: every case says so with
// "provisional": true. They are built from the fixed inputs below
// (go test ./memoryblock -run Vectors -update) and then read back as
// goldens: each test recomputes every output from the inputs in the file,
// so a change in the hash, the wire form, acceptance or the walks shows up
// as a diff. docs/memory-blocks.md quotes some of them.

type blockVector struct {
	Name        string          `json:"name"`
	Provisional bool            `json:"provisional"`
	Block       json.RawMessage `json:"block"`     // wire form, as Encode writes it
	Canonical   string          `json:"canonical"` // the hashed form
	Hash        string          `json:"hash"`      // SHA-256 of canonical
	Verify      string          `json:"verify"`    // "" or the code VerifyBlock answers
}

type decodeVector struct {
	Name        string `json:"name"`
	Provisional bool   `json:"provisional"`
	Input       string `json:"input"`
	Code        string `json:"code"`
}

type acceptVector struct {
	Name        string          `json:"name"`
	Provisional bool            `json:"provisional"`
	Block       json.RawMessage `json:"block"`
	Level       int             `json:"level"`
	Have        []string        `json:"have"` // what the receiver can produce
	Result      json.RawMessage `json:"result"`
}

type storeEntry struct {
	Key   string          `json:"key"` // the store's key; not always the block's hash
	Block json.RawMessage `json:"block"`
}

type lineageVector struct {
	Name        string          `json:"name"`
	Provisional bool            `json:"provisional"`
	Store       []storeEntry    `json:"store"`
	Query       string          `json:"query"` // "ancestry" or "is_descendant_of"
	Start       string          `json:"start"`
	Ancestor    string          `json:"ancestor,omitempty"`
	Want        json.RawMessage `json:"want"`
}

func golden[T any](t *testing.T, name string, build func(t *testing.T) []T) []T {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		b, err := json.MarshalIndent(build(t), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./memoryblock -run Vectors -update)", err)
	}
	var out []T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no cases", name)
	}
	return out
}

// The fixed blocks the vectors are built from.
type fixtureSet struct {
	root, child, second, twoParents mb.Block
	absent                          dag.ID
	named                           []namedBlock
}

type namedBlock struct {
	name string
	b    mb.Block
}

func fixtures(t *testing.T) fixtureSet {
	var f fixtureSet
	f.root = sample(t) // every field present, lineage [] (a root)
	f.child = mb.Block{
		Origin:     mb.MustText("agent:bo"),
		Subject:    mb.MustText("tide tables"),
		Body:       mb.MustText("high water at 06:10, confirmed"),
		Evidence:   mb.MustText("second gauge"),
		Confidence: mb.MustValue("95"),
		ObservedAt: mb.MustText("2026-09-21T06:40:00Z"),
		Lineage:    mb.MustParents(f.root.ID()),
	}.Seal()
	f.second = mb.Block{Origin: mb.MustText("agent:cy"), Subject: mb.MustText("harbour"), Body: mb.MustText("pier 2 closed"),
		ObservedAt: mb.MustText("2026-09-21T07:00:00Z"), Lineage: mb.MustParents()}.Seal()
	f.absent = dag.Sum([]byte("a block this receiver never saw"))
	f.twoParents = mb.Block{Origin: mb.MustText("agent:bo"), Subject: mb.MustText("harbour tides"),
		Body: mb.MustText("closure and high water coincide"), ObservedAt: mb.MustText("2026-09-21T07:05:00Z"),
		Lineage: mb.MustParents(f.child.ID(), f.second.ID())}.Seal()

	variant := func(edit func(b *mb.Block)) mb.Block {
		b := f.root
		edit(&b)
		return b.Seal()
	}
	tampered := f.root
	tampered.Body = mb.MustText("high water at 09:10")
	unsealed := f.root
	unsealed.Hash = dag.ID{}
	f.named = []namedBlock{
		{"root: every field present, lineage empty", f.root},
		{"child of root", f.child},
		{"two parents", f.twoParents},
		{"evidence omitted", variant(func(b *mb.Block) { b.Evidence = mb.Value{} })},
		{"evidence null", variant(func(b *mb.Block) { b.Evidence = mb.NullValue() })},
		{"evidence empty string", variant(func(b *mb.Block) { b.Evidence = mb.MustText("") })},
		{"lineage omitted", variant(func(b *mb.Block) { b.Lineage = mb.Parents{} })},
		{"lineage null", variant(func(b *mb.Block) { b.Lineage = mb.NullParents() })},
		{"every field omitted", mb.Block{}.Seal()},
		{"every field null", mb.Block{Origin: mb.NullValue(), Subject: mb.NullValue(), Body: mb.NullValue(), Evidence: mb.NullValue(),
			Confidence: mb.NullValue(), ObservedAt: mb.NullValue(), Lineage: mb.NullParents()}.Seal()},
		{"structured values and escapes", variant(func(b *mb.Block) {
			b.Body = mb.MustValue(`{"text":"caf\u00e9 <b> & \"q\"\n","tags":["tide",1,true,null]}`)
			b.Confidence = mb.MustText("high")
		})},
		{"tampered body (claims the root's hash)", tampered},
		{"no hash", unsealed},
	}
	return f
}

func (f fixtureSet) byName(t *testing.T, name string) mb.Block {
	for _, n := range f.named {
		if n.name == name {
			return n.b
		}
	}
	t.Fatalf("no fixture %q", name)
	return mb.Block{}
}

func buildBlocks(t *testing.T) []blockVector {
	var out []blockVector
	for _, n := range fixtures(t).named {
		c := n.b.Canonical()
		v := blockVector{Name: n.name, Provisional: true, Block: n.b.Encode(), Canonical: string(c), Hash: dag.Sum(c).String()}
		v.Verify = string(mb.CodeOf(mb.VerifyBlock(n.b)))
		out = append(out, v)
	}
	return out
}

func TestVectorsBlocks(t *testing.T) {
	for _, v := range golden(t, "blocks.json", buildBlocks) {
		t.Run(v.Name, func(t *testing.T) {
			if !v.Provisional {
				t.Error("not marked provisional")
			}
			b, err := mb.Decode(v.Block)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b.Canonical()); got != v.Canonical {
				t.Errorf("canonical\n got %s\nwant %s", got, v.Canonical)
			}
			// the hash, from the vector's own bytes, without the package
			sum := sha256.Sum256([]byte(v.Canonical))
			if want := "sha256:" + hex.EncodeToString(sum[:]); v.Hash != want || b.ID().String() != want {
				t.Errorf("hash %s / %s, want %s", v.Hash, b.ID(), want)
			}
			if got := string(mb.CodeOf(mb.VerifyBlock(b))); got != v.Verify {
				t.Errorf("verify %q, want %q", got, v.Verify)
			}
			if !sameJSON(t, b.Encode(), v.Block) {
				t.Errorf("re-encoded %s", b.Encode())
			}
		})
	}
}

var decodeInputs = []struct{ name, in string }{
	{"focus", `{"focus":"tides"}`},
	{"issue", `{"issue":"tides"}`},
	{"intent", `{"intent":"tides"}`},
	{"motivation", `{"motivation":"tides"}`},
	{"commitment", `{"commitment":"tides"}`},
	{"perspective", `{"perspective":"tides"}`},
	{"mood", `{"mood":"calm"}`},
	{"SVAF", `{"SVAF":{"anchor":"captain"}}`},
	{"remix", `{"remix":true}`},
	{"camel-case observedAt", `{"observedAt":"2026-09-21T06:10:00Z"}`},
	{"fractional confidence", `{"confidence":0.8}`},
	{"duplicate key", `{"body":"a","body":"b"}`},
	{"not an object", `["origin"]`},
	{"lineage not an array", `{"lineage":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}`},
	{"lineage id not lower-case", `{"lineage":["SHA256:0000000000000000000000000000000000000000000000000000000000000000"]}`},
	{"hash not an id", `{"hash":"md5:00"}`},
	{"non-NFC text", "{\"subject\":\"cafe\u0301\"}"},
}

func buildDecode(t *testing.T) []decodeVector {
	var out []decodeVector
	for _, c := range decodeInputs {
		_, err := mb.Decode([]byte(c.in))
		out = append(out, decodeVector{Name: c.name, Provisional: true, Input: c.in, Code: string(mb.CodeOf(err))})
	}
	return out
}

func TestVectorsDecode(t *testing.T) {
	for _, v := range golden(t, "decode.json", buildDecode) {
		_, err := mb.Decode([]byte(v.Input))
		if got := string(mb.CodeOf(err)); got != v.Code || v.Code == "" || !v.Provisional {
			t.Errorf("%s: code %q, want %q", v.Name, got, v.Code)
		}
	}
}

func buildAccept(t *testing.T) []acceptVector {
	f := fixtures(t)
	var out []acceptVector
	add := func(name string, b mb.Block, level int, have ...dag.ID) {
		names := []string{}
		for _, h := range have {
			names = append(names, h.String())
		}
		r, err := json.Marshal(mb.AcceptBlock(b, mb.Level(level), mb.SetOf(have...)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, acceptVector{Name: name, Provisional: true, Block: b.Encode(), Level: level, Have: names, Result: r})
	}
	for _, level := range []int{0, 49, 50, 69, 70, 90, 100} {
		add("child at level "+itoa(level), f.child, level, f.root.ID())
	}
	add("root at level -1 (no band)", f.root, -1)
	add("evidence null at level 50", f.byName(t, "evidence null"), 50)
	add("lineage: parent absent", f.child, 100)
	add("lineage: one of two parents absent", f.twoParents, 100, f.child.ID())
	add("lineage: both parents held", f.twoParents, 0, f.child.ID(), f.second.ID())
	add("lineage null needs no parent", f.byName(t, "lineage null"), 0)
	add("tampered body", f.byName(t, "tampered body (claims the root's hash)"), 100)
	add("no hash", f.byName(t, "no hash"), 100)
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestVectorsAcceptance(t *testing.T) {
	for _, v := range golden(t, "acceptance.json", buildAccept) {
		t.Run(v.Name, func(t *testing.T) {
			if !v.Provisional {
				t.Error("not marked provisional")
			}
			b, err := mb.Decode(v.Block)
			if err != nil {
				t.Fatal(err)
			}
			have := mb.Set{}
			for _, h := range v.Have {
				have[dag.MustParseID(h)] = struct{}{}
			}
			got, err := json.Marshal(mb.AcceptBlock(b, mb.Level(v.Level), have))
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, v.Result) {
				t.Errorf("result\n got %s\nwant %s", got, v.Result)
			}
		})
	}
}

func buildLineage(t *testing.T) []lineageVector {
	var out []lineageVector
	// a chain of four: c0 <- c1 <- c2 <- c3
	var c []mb.Block
	lin := mb.MustParents()
	for i := 0; i < 4; i++ {
		b := mb.Block{Origin: mb.MustText("agent:ada"), Subject: mb.MustText("log"), Body: mb.MustText("entry " + itoa(i)), Lineage: lin}.Seal()
		c = append(c, b)
		lin = mb.MustParents(b.ID())
	}
	honest := func(bs ...mb.Block) []storeEntry {
		var s []storeEntry
		for _, b := range bs {
			s = append(s, storeEntry{Key: b.ID().String(), Block: b.Encode()})
		}
		return s
	}
	query := func(name string, store []storeEntry, kind string, start, ancestor dag.ID) {
		m := mapOf(t, store)
		var want any
		v := lineageVector{Name: name, Provisional: true, Store: store, Query: kind, Start: start.String()}
		if kind == "ancestry" {
			want = mb.Ancestry(start, m)
		} else {
			v.Ancestor = ancestor.String()
			want = mb.IsDescendantOf(start, ancestor, m)
		}
		raw, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		v.Want = raw
		out = append(out, v)
	}
	full := honest(c...)
	query("chain of four: ancestry of the tip", full, "ancestry", c[3].ID(), dag.ID{})
	query("chain of four: ancestry of the root", full, "ancestry", c[0].ID(), dag.ID{})
	query("chain of four: tip descends from root", full, "is_descendant_of", c[3].ID(), c[0].ID())
	query("chain of four: root does not descend from tip", full, "is_descendant_of", c[0].ID(), c[3].ID())
	holed := honest(c[0], c[2], c[3])
	query("chain with a hole: the gap is collected", holed, "ancestry", c[3].ID(), dag.ID{})
	query("chain with a hole: descent unknown beyond it", holed, "is_descendant_of", c[3].ID(), c[0].ID())
	query("start not held", honest(c[0]), "ancestry", c[3].ID(), dag.ID{})
	// echo: an incoming block naming c2, asked about with the store plus it
	echo := mb.Block{Origin: mb.MustText("agent:bo"), Subject: mb.MustText("log"), Body: mb.MustText("heard: entry 1"), Lineage: mb.MustParents(c[2].ID())}.Seal()
	query("echo: incoming block descends from a held one", honest(c[0], c[1], c[2], echo), "is_descendant_of", echo.ID(), c[1].ID())
	// a lying store: c1's key holds a block whose lineage names c3
	liar := mb.Block{Subject: mb.MustText("forged"), Lineage: mb.MustParents(c[3].ID())}.Seal()
	lying := honest(c[0], c[2], c[3])
	lying = append(lying, storeEntry{Key: c[1].ID().String(), Block: liar.Encode()})
	query("lying store: cycle reported, walk terminates", lying, "ancestry", c[3].ID(), dag.ID{})
	query("lying store: descent walk terminates", lying, "is_descendant_of", c[3].ID(), dag.Sum([]byte("elsewhere")))
	return out
}

// sameJSON compares two JSON texts by their canonical forms (the files are
// indented for people).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	ca, err := dag.CanonicalizeRFC8785(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := dag.CanonicalizeRFC8785(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ca, cb)
}

func mapOf(t *testing.T, store []storeEntry) mb.Map {
	m := mb.Map{}
	for _, e := range store {
		b, err := mb.Decode(e.Block)
		if err != nil {
			t.Fatal(err)
		}
		m[dag.MustParseID(e.Key)] = b
	}
	return m
}

func TestVectorsLineage(t *testing.T) {
	for _, v := range golden(t, "lineage.json", buildLineage) {
		t.Run(v.Name, func(t *testing.T) {
			if !v.Provisional {
				t.Error("not marked provisional")
			}
			m := mapOf(t, v.Store)
			start := dag.MustParseID(v.Start)
			var got any
			switch v.Query {
			case "ancestry":
				got = mb.Ancestry(start, m)
			case "is_descendant_of":
				got = mb.IsDescendantOf(start, dag.MustParseID(v.Ancestor), m)
			default:
				t.Fatalf("query %q", v.Query)
			}
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, raw, v.Want) {
				t.Errorf("answer\n got %s\nwant %s", raw, v.Want)
			}
		})
	}
}
