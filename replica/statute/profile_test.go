package statute

import (
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func TestEmbeddedProfiles(t *testing.T) {
	if ids := ProfileIDs(); !slices.Equal(ids, []string{"akn-generic", "uslm-1"}) {
		t.Fatalf("profiles %v", ids)
	}
	u, err := LoadProfile("uslm-1")
	must(t, err)
	if len(u.Kinds()) != 18 || u.Root != "root" {
		t.Fatalf("uslm-1 kinds %v", u.Kinds())
	}
	// Each kind contains only kinds below it in the USLM order.
	ks := u.Kinds()
	for i, a := range ks {
		for j, b := range ks {
			if want := j > i && b != "root"; u.MayContain(a, b) != want {
				t.Errorf("uslm-1: %s may contain %s = %v", a, b, !want)
			}
		}
	}
	a, err := LoadProfile("akn-generic")
	must(t, err)
	if !a.MayContain("hcontainer", "hcontainer") || a.MayContain("content", "content") || a.MayContain("hcontainer", "root") {
		t.Fatal("akn-generic nesting")
	}
	if _, err := LoadProfile("uslm-2"); dag.CodeOf(err) != dag.CodeProfileUnknown {
		t.Fatalf("unknown profile: %v", err)
	}
}

func TestParseProfileRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"no root":          `{"id":"p","version":1,"kinds":[{"kind":"a","contains":[]}]}`,
		"root undeclared":  `{"id":"p","version":1,"root":"r","kinds":[{"kind":"a","contains":[]}]}`,
		"dup kind":         `{"id":"p","version":1,"root":"a","kinds":[{"kind":"a","contains":[]},{"kind":"a","contains":[]}]}`,
		"undeclared child": `{"id":"p","version":1,"root":"a","kinds":[{"kind":"a","contains":["b"]}]}`,
		"contains root":    `{"id":"p","version":1,"root":"a","kinds":[{"kind":"a","contains":["b"]},{"kind":"b","contains":["a"]}]}`,
		"bad kind":         `{"id":"p","version":1,"root":"a","kinds":[{"kind":"a b","contains":[]}]}`,
		"unknown member":   `{"id":"p","version":1,"root":"a","kinds":[{"kind":"a","contains":[]}],"x":1}`,
		"version 0":        `{"id":"p","version":0,"root":"a","kinds":[{"kind":"a","contains":[]}]}`,
	} {
		if _, err := ParseProfile([]byte(doc)); !errors.Is(err, ErrProfile) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// S14: a node with a kind the profile forbids blocks the MR (structure).
func TestS14ForbiddenKindBlocks(t *testing.T) {
	u, _ := LoadProfile("uslm-1")
	base := sample()
	env := Env{Profile: u}
	if ms := Structure(base, env); len(ms) != 0 {
		t.Fatalf("sample does not conform: %+v", ms)
	}
	for name, spec := range map[string]NodeSpec{
		"unknown kind":  {NID: "/us/t1/art", Kind: "article"},
		"wrong nesting": {NID: "/us/t1/sub", Kind: "subtitle"}, // fine under a title...
	} {
		parent := "/us/t1"
		if name == "wrong nesting" {
			parent = "/us/t1/s2" // ...but a section may not contain a subtitle
		}
		r := NewReview(base, []Op{{Op: OpInsert, ParentNID: parent, Node: &spec}})
		c := RunChecks(r, env)
		if !c.Blocked || c.Checks[0].Name != CheckStructure || c.Checks[0].Status != StatusBlock {
			t.Fatalf("%s: not blocked: %+v", name, c.Checks[0])
		}
		if !slices.Contains(c.Checks[0].Messages[0].NIDs, spec.NID) {
			t.Errorf("%s: message does not name %s: %+v", name, spec.NID, c.Checks[0].Messages)
		}
		for _, cr := range c.Checks[1:] {
			if cr.Status == StatusBlock {
				t.Errorf("%s: %s blocks", name, cr.Name)
			}
		}
	}
}
