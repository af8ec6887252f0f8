package memoryblock_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

func TestResultErr(t *testing.T) {
	root := sample(t)
	child := sample(t, root.ID())
	if err := mb.AcceptBlock(child, 0, mb.SetOf(root.ID())).Err(); err != nil {
		t.Fatalf("accepted block: %v", err)
	}
	err := mb.AcceptBlock(child, 0, mb.SetOf()).Err()
	var e *mb.Error
	if !errors.As(err, &e) || e.Code != mb.CodeBlockMissingParent || e.Field != mb.Lineage || !strings.Contains(e.Detail, root.ID().String()) {
		t.Fatalf("missing parent: %v", err)
	}
	bad := child
	bad.Body = mb.MustText("changed")
	if mb.CodeOf(mb.AcceptBlock(bad, 0, mb.SetOf(root.ID())).Err()) != mb.CodeBlockHashMismatch {
		t.Fatal("hash mismatch has no error")
	}
}

// A Block works inside any struct encoding/json handles.
func TestBlockInsideJSON(t *testing.T) {
	type envelope struct {
		Space string   `json:"space"`
		Block mb.Block `json:"block"`
	}
	in := envelope{Space: "harbour", Block: sample(t, dag.Sum([]byte("p")))}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out envelope
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip through encoding/json: %s", raw)
	}
	err = json.Unmarshal([]byte(`{"space":"x","block":{"mood":"calm"}}`), &out)
	if mb.CodeOf(err) != mb.CodeBlockUnknownField {
		t.Fatalf("unknown field inside a struct: %v", err)
	}
}

// Malformed input keeps its cause; untrusted text in details is bounded.
func TestErrorDetails(t *testing.T) {
	_, err := mb.Decode([]byte(`{"lineage":["sha256:00"]}`))
	if !errors.Is(err, dag.ErrInvalidID) {
		t.Errorf("cause lost: %v", err)
	}
	long := strings.Repeat("\u00e9", 200)
	_, err = mb.Decode([]byte(`{"` + long + `":1}`))
	if mb.CodeOf(err) != mb.CodeBlockUnknownField || len(err.Error()) > 200 || !strings.Contains(err.Error(), "…") {
		t.Errorf("long key: %d bytes: %v", len(err.Error()), err)
	}
	if d := mb.AcceptField(mb.Field(long), 0); len(d.Reason) > 200 {
		t.Errorf("long name reason is %d bytes", len(d.Reason))
	}
}

func TestStrings(t *testing.T) {
	if s := (mb.Value{}).String(); s != "<omitted>" {
		t.Errorf("omitted %q", s)
	}
	if s := mb.MustText("a").String(); s != `"a"` {
		t.Errorf("text %q", s)
	}
	if s := mb.NullParents().String(); s != "null" {
		t.Errorf("null lineage %q", s)
	}
	if s := mb.Presence(9).String(); s != "presence(9)" {
		t.Errorf("bad presence %q", s)
	}
	if s := mb.Requires(50).String() + (mb.Requirement{}).String(); s != "50null" {
		t.Errorf("requirements %q", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustText of non-NFC text did not panic")
		}
	}()
	mb.MustText("e\u0301")
}

func TestEntry(t *testing.T) {
	root := sample(t)
	child := sample(t, root.ID(), dag.Sum([]byte("q")))
	for _, b := range []mb.Block{root, child, mb.Block{}.Seal(), {Lineage: mb.NullParents()}} {
		e := b.Entry("harbour")
		if e.ID != b.ID() || dag.Sum(e.Data) != e.ID || e.Space != "harbour" || e.Check() != nil {
			t.Fatalf("entry %+v", e)
		}
		got, err := mb.DecodeEntry(e)
		if err != nil || got != b.Seal() {
			t.Fatalf("DecodeEntry: %v", err)
		}
	}
	e := child.Entry("harbour")
	e.ID = root.ID()
	if _, err := mb.DecodeEntry(e); mb.CodeOf(err) != mb.CodeBlockHashMismatch {
		t.Errorf("wrong id: %v", err)
	}
	e = child.Entry("harbour")
	e.Parents = e.Parents[:1]
	if _, err := mb.DecodeEntry(e); mb.CodeOf(err) != mb.CodeBlockMalformed {
		t.Errorf("wrong parents: %v", err)
	}
	e = child.Entry("harbour")
	e.Data = child.Encode() // the wire form is not the stored form
	if _, err := mb.DecodeEntry(e); mb.CodeOf(err) != mb.CodeBlockMalformed {
		t.Errorf("wire bytes as data: %v", err)
	}
}
