package memoryblock_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

func TestBands(t *testing.T) {
	cases := []struct {
		level mb.Level
		band  mb.Band
	}{
		{-1, ""}, {0, mb.Ordinary}, {49, mb.Ordinary}, {50, mb.Captain}, {69, mb.Captain},
		{70, mb.OrgAdmin}, {89, mb.OrgAdmin}, {90, mb.SystemAdmin}, {100, mb.SystemAdmin}, {1 << 30, mb.SystemAdmin},
	}
	for _, c := range cases {
		if got := c.level.Band(); got != c.band {
			t.Errorf("Level(%d).Band() = %q, want %q", c.level, got, c.band)
		}
	}
	floors := map[mb.Band]mb.Level{mb.Ordinary: 0, mb.Captain: 50, mb.OrgAdmin: 70, mb.SystemAdmin: 90}
	ceilings := map[mb.Band]mb.Level{mb.Ordinary: 49, mb.Captain: 69, mb.OrgAdmin: 89}
	for _, b := range mb.Bands() {
		if f, ok := b.Floor(); !ok || f != floors[b] {
			t.Errorf("%s.Floor() = %d, %v", b, f, ok)
		}
		c, ok := b.Ceiling()
		if want, has := ceilings[b]; ok != has || c != want {
			t.Errorf("%s.Ceiling() = %d, %v", b, c, ok)
		}
	}
	if _, ok := mb.Band("admiral").Floor(); ok {
		t.Error("unknown band has a floor")
	}
	// evidence costs the bottom of the captain band
	captain, _ := mb.Captain.Floor()
	if c, ok := mb.Cost(mb.Evidence); !ok || c != captain {
		t.Errorf("Cost(evidence) = %d, %v; captain floor %d", c, ok, captain)
	}
}

func TestAcceptField(t *testing.T) {
	none := mb.Requirement{}
	cases := []struct {
		field    mb.Field
		level    mb.Level
		allowed  bool
		keeps    bool
		code     mb.Code
		required mb.Requirement
	}{
		{mb.Subject, 0, true, true, "", mb.Requires(0)},
		{mb.Body, 0, true, true, "", mb.Requires(0)},
		{mb.Subject, -1, false, false, mb.CodeFieldBelowAuthority, mb.Requires(0)},
		{mb.Evidence, 0, false, false, mb.CodeFieldBelowAuthority, mb.Requires(50)},
		{mb.Evidence, 49, false, false, mb.CodeFieldBelowAuthority, mb.Requires(50)},
		{mb.Evidence, 50, true, true, "", mb.Requires(50)},
		{mb.Evidence, 100, true, true, "", mb.Requires(50)},
		{mb.Confidence, 0, false, false, mb.CodeFieldAlwaysRefused, none},
		{mb.Confidence, 50, false, false, mb.CodeFieldAlwaysRefused, none},
		{mb.Confidence, 89, false, false, mb.CodeFieldAlwaysRefused, none},
		{mb.Confidence, 90, false, false, mb.CodeFieldAlwaysRefused, none},
		{mb.Confidence, 100, false, false, mb.CodeFieldAlwaysRefused, none},
		{mb.Confidence, 1 << 30, false, false, mb.CodeFieldAlwaysRefused, none},
		{mb.Origin, 0, false, true, mb.CodeFieldUndeclared, none},
		{mb.ObservedAt, 100, false, true, mb.CodeFieldUndeclared, none},
		{mb.Lineage, 49, false, true, mb.CodeFieldUndeclared, none},
		{"hash", 100, false, false, mb.CodeFieldNotAField, none},
	}
	for _, c := range cases {
		d := mb.AcceptField(c.field, c.level)
		if d.Field != c.field || d.Allowed != c.allowed || d.Keeps() != c.keeps || d.Code != c.code || d.Required != c.required || d.Reason == "" {
			t.Errorf("AcceptField(%s, %d) = %+v", c.field, c.level, d)
		}
	}
}

// The reason for confidence says it is an invariant, so that no one takes
// it for a threshold to be raised; and its required is JSON null.
func TestConfidenceIsAnInvariant(t *testing.T) {
	d := mb.AcceptField(mb.Confidence, 100)
	if !strings.Contains(d.Reason, "invariant") {
		t.Errorf("reason %q does not say invariant", d.Reason)
	}
	r := mb.Refusal{Field: d.Field, Code: d.Code, Required: d.Required, Reason: d.Reason}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if req, ok := m["required"]; !ok || string(req) != "null" {
		t.Errorf("required = %s (present %v), want null", req, ok)
	}
	if string(m["code"]) != `"FIELD_ALWAYS_REFUSED"` || !strings.HasPrefix(r.Why(), "FIELD_ALWAYS_REFUSED: ") {
		t.Errorf("refusal %s", b)
	}
}

func fieldsOf(rs []mb.Refusal) []mb.Field {
	var out []mb.Field
	for _, r := range rs {
		out = append(out, r.Field)
	}
	return out
}

// The spec's two worked examples, and the other band edges.
func TestAcceptWithAuthorityLevels(t *testing.T) {
	low := []mb.Field{mb.Origin, mb.ObservedAt, mb.Lineage, mb.Subject, mb.Body}
	high := append(slices.Clone(low), mb.Evidence)
	cases := []struct {
		level            mb.Level
		accepted, refuse []mb.Field
	}{
		{0, low, []mb.Field{mb.Evidence, mb.Confidence}},
		{49, low, []mb.Field{mb.Evidence, mb.Confidence}},
		{50, high, []mb.Field{mb.Confidence}},
		{69, high, []mb.Field{mb.Confidence}},
		{70, high, []mb.Field{mb.Confidence}},
		{90, high, []mb.Field{mb.Confidence}},
		{100, high, []mb.Field{mb.Confidence}},
	}
	b := sample(t, dag.Sum([]byte("p")))
	for _, c := range cases {
		p := mb.AcceptWithAuthority(b, c.level)
		if got := p.Accepted.Fields(); !slices.Equal(got, c.accepted) {
			t.Errorf("level %d: accepted %v, want %v", c.level, got, c.accepted)
		}
		if got := fieldsOf(p.Refused); !slices.Equal(got, c.refuse) {
			t.Errorf("level %d: refused %v, want %v", c.level, got, c.refuse)
		}
		for _, f := range c.accepted {
			v, ok := p.Accepted.Get(f)
			if !ok || v != get(t, b, f) {
				t.Errorf("level %d: accepted %s = %v, %v", c.level, f, v, ok)
			}
		}
		for _, f := range c.refuse {
			if v, ok := p.Accepted.Get(f); ok || p.Accepted.Has(f) || !v.IsOmitted() {
				t.Errorf("level %d: refused %s is in the view", c.level, f)
			}
		}
	}
}

// Refused fields are absent from what a receiver gets: not present with
// null, not an error, and not recoverable from anything in the answer.
func TestRefusedFieldIsAbsentAndNotReconstructible(t *testing.T) {
	b := sample(t)
	b.Evidence = mb.MustText("SECRET-EVIDENCE-7f3a")
	b.Confidence = mb.MustText("SECRET-CONFIDENCE-19c2")
	b = b.Seal()
	r := mb.AcceptBlock(b, 49, nil)
	if r.Accepted == nil {
		t.Fatalf("refused: %+v", r.Refused)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"SECRET-EVIDENCE-7f3a", "SECRET-CONFIDENCE-19c2"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("the answer holds a refused value: %s", out)
		}
	}
	var m struct {
		Accepted map[string]json.RawMessage `json:"accepted"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"evidence", "confidence"} {
		if _, ok := m.Accepted[k]; ok {
			t.Errorf("accepted has key %q", k)
		}
	}
	if _, ok := m.Accepted["subject"]; !ok {
		t.Error("accepted lacks subject")
	}
}

// An accepted field keeps its presence: null stays null, empty stays empty,
// omitted stays omitted — and the View still says it was accepted.
func TestAcceptedFieldKeepsPresence(t *testing.T) {
	b := sample(t)
	b.Subject = mb.NullValue()
	b.Body = mb.MustText("")
	b.Evidence = mb.Value{}
	b = b.Seal()
	v := mb.AcceptBlock(b, 50, nil).Accepted
	if v == nil {
		t.Fatal("refused")
	}
	if s, ok := v.Get(mb.Subject); !ok || !s.IsNull() {
		t.Errorf("subject %v %v", s, ok)
	}
	if s, ok := v.Get(mb.Body); !ok || !s.IsEmpty() {
		t.Errorf("body %v %v", s, ok)
	}
	if s, ok := v.Get(mb.Evidence); !ok || !s.IsOmitted() || !v.Has(mb.Evidence) {
		t.Errorf("evidence %v %v", s, ok)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"body":"","lineage":[],"observed_at":"2026-09-21T06:10:00Z","origin":"agent:ada","subject":null}` {
		t.Errorf("view JSON %s", out)
	}
}

func TestAcceptBlockMissingParent(t *testing.T) {
	root := sample(t)
	have := mb.MapOf(root)
	absent := dag.Sum([]byte("never seen"))
	child := sample(t, root.ID(), absent)
	r := mb.AcceptBlock(child, 100, have)
	if r.Accepted != nil || !r.Verified || len(r.AcceptedFields()) != 0 || r.AcceptedFields() == nil {
		t.Fatalf("result %+v", r)
	}
	if len(r.Refused) != 1 {
		t.Fatalf("refused %+v", r.Refused)
	}
	ref := r.Refused[0]
	if ref.Field != mb.Lineage || ref.Code != mb.CodeBlockMissingParent || !slices.Equal(ref.Missing, []dag.ID{absent}) {
		t.Errorf("refusal %+v", ref)
	}
	if !strings.Contains(ref.Why(), "BLOCK_MISSING_PARENT: cannot produce ancestor(s) "+absent.String()) ||
		!strings.Contains(ref.Why(), "refusing rather than re-rooting") {
		t.Errorf("why %q", ref.Why())
	}
	out, _ := json.Marshal(r)
	if !strings.HasPrefix(string(out), `{"accepted":null,"accepted_fields":[],"refused":[{"code":"BLOCK_MISSING_PARENT","field":"lineage",`) ||
		!strings.HasSuffix(string(out), `"verified":true}`) {
		t.Errorf("JSON %s", out)
	}
	// nil Known holds nothing
	if r := mb.AcceptBlock(sample(t, root.ID()), 100, nil); r.Accepted != nil || r.Refused[0].Code != mb.CodeBlockMissingParent {
		t.Errorf("nil Known: %+v", r)
	}
	// once the parent arrives, the same block is accepted
	have[absent] = mb.Block{}
	if r := mb.AcceptBlock(child, 100, have); r.Accepted == nil || !slices.Contains(r.AcceptedFields(), mb.Lineage) {
		t.Errorf("with parents held: %+v", r)
	}
	if ids := mb.AcceptBlock(child, 0, have).Accepted.Lineage(); !slices.Equal(ids, []dag.ID{root.ID(), absent}) {
		t.Errorf("accepted lineage %v", ids)
	}
}

func TestAcceptBlockRootsNeedNoParents(t *testing.T) {
	for name, lin := range map[string]mb.Parents{"omitted": {}, "null": mb.NullParents(), "empty": mb.MustParents()} {
		b := sample(t)
		b.Lineage = lin
		b = b.Seal()
		r := mb.AcceptBlock(b, 0, mb.Set{})
		if r.Accepted == nil || !r.Verified {
			t.Errorf("%s lineage: %+v", name, r)
		}
		if v, _ := r.Accepted.Get(mb.Lineage); v != lin.Value() {
			t.Errorf("%s lineage became %v", name, v)
		}
	}
}

func TestAcceptBlockHashMismatch(t *testing.T) {
	b := sample(t)
	b.Body = mb.MustText("rewritten")
	r := mb.AcceptBlock(b, 100, nil)
	if r.Verified || r.Accepted != nil || len(r.Refused) != 1 || r.Refused[0].Code != mb.CodeBlockHashMismatch || r.Refused[0].Field != "" {
		t.Fatalf("result %+v", r)
	}
	out, _ := json.Marshal(r)
	if !strings.Contains(string(out), `"field":null`) || !strings.Contains(string(out), `"verified":false`) {
		t.Errorf("JSON %s", out)
	}
	// a bad hash is judged before a missing parent
	c := sample(t, dag.Sum([]byte("absent")))
	c.Subject = mb.MustText("rewritten")
	if r := mb.AcceptBlock(c, 100, nil); r.Verified || r.Refused[0].Code != mb.CodeBlockHashMismatch {
		t.Errorf("both wrong: %+v", r)
	}
}
