package statute

import (
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func TestApplyOps(t *testing.T) {
	base := sample()
	h := func(nid string) dag.ID { return mustHash(base, nid) }
	leaf := func(nid, text string) *NodeSpec { s := NodeSpec{NID: nid, Kind: "section", Text: text}; return &s }
	tests := []struct {
		name  string
		ops   []Op
		err   error
		order string // expected children of /us/t1 after, comma-joined
	}{
		{"insert first", []Op{{Op: OpInsert, ParentNID: "/us/t1", Node: leaf("/us/t1/s0", "new")}}, nil, "/us/t1/s0,/us/t1/s1,/us/t1/s2,/us/t1/s3"},
		{"insert after", []Op{{Op: OpInsert, ParentNID: "/us/t1", AfterNID: "/us/t1/s2", Node: leaf("/us/t1/s9", "new")}}, nil, "/us/t1/s1,/us/t1/s2,/us/t1/s9,/us/t1/s3"},
		{"insert with children", []Op{{Op: OpInsert, ParentNID: "/us/t1", AfterNID: "/us/t1/s3", Node: &NodeSpec{NID: "/us/t1/s4", Kind: "section", Children: []NodeSpec{{NID: "/us/t1/s4/a", Kind: "subsection"}}}}}, nil, "/us/t1/s1,/us/t1/s2,/us/t1/s3,/us/t1/s4"},
		{"insert duplicate", []Op{{Op: OpInsert, ParentNID: "/us/t1", Node: leaf("/us/t2/s1", "dup")}}, ErrDuplicateNID, ""},
		{"insert no parent", []Op{{Op: OpInsert, ParentNID: "/nope", Node: leaf("/x", "")}}, ErrNoNode, ""},
		{"insert bad after", []Op{{Op: OpInsert, ParentNID: "/us/t1", AfterNID: "/us/t2/s1", Node: leaf("/x", "")}}, ErrBadAfter, ""},
		{"replace keeps children", []Op{{Op: OpReplace, NID: "/us/t1/s1", Pre: h("/us/t1/s1"), Node: &NodeSpec{NID: "/us/t1/s1", Kind: "section", Text: "The period is 45 days."}}}, nil, "/us/t1/s1,/us/t1/s2,/us/t1/s3"},
		{"replace stale pre", []Op{{Op: OpReplace, NID: "/us/t1/s1", Pre: h("/us/t1/s2"), Node: &NodeSpec{NID: "/us/t1/s1", Kind: "section"}}}, ErrPreMismatch, ""},
		{"replace wrong nid", []Op{{Op: OpReplace, NID: "/us/t1/s1", Pre: h("/us/t1/s1"), Node: &NodeSpec{NID: "/us/t1/s9", Kind: "section"}}}, ErrBadNode, ""},
		{"delete", []Op{{Op: OpDelete, NID: "/us/t1/s2", Pre: h("/us/t1/s2")}}, nil, "/us/t1/s1,/us/t1/s3"},
		{"delete root", []Op{{Op: OpDelete, NID: "/us", Pre: h("/us")}}, ErrBadMove, ""},
		{"delete missing", []Op{{Op: OpDelete, NID: "/zz", Pre: h("/us")}}, ErrNoNode, ""},
		{"move within parent", []Op{{Op: OpMove, NID: "/us/t1/s1", Pre: h("/us/t1/s1"), ParentNID: "/us/t1", AfterNID: "/us/t1/s3"}}, nil, "/us/t1/s2,/us/t1/s3,/us/t1/s1"},
		{"move to first", []Op{{Op: OpMove, NID: "/us/t1/s3", Pre: h("/us/t1/s3"), ParentNID: "/us/t1"}}, nil, "/us/t1/s3,/us/t1/s1,/us/t1/s2"},
		{"move across", []Op{{Op: OpMove, NID: "/us/t2/s1", Pre: h("/us/t2/s1"), ParentNID: "/us/t1", AfterNID: "/us/t1/s1"}}, nil, "/us/t1/s1,/us/t2/s1,/us/t1/s2,/us/t1/s3"},
		{"move into own subtree", []Op{{Op: OpMove, NID: "/us/t1", Pre: h("/us/t1"), ParentNID: "/us/t1/s1"}}, ErrBadMove, ""},
		{"move after itself", []Op{{Op: OpMove, NID: "/us/t1/s1", Pre: h("/us/t1/s1"), ParentNID: "/us/t1", AfterNID: "/us/t1/s1"}}, ErrBadAfter, ""},
		{"pre sees earlier ops", []Op{
			{Op: OpReplace, NID: "/us/t1/s1/a", Pre: h("/us/t1/s1/a"), Node: &NodeSpec{NID: "/us/t1/s1/a", Kind: "subsection", Text: "x"}},
			{Op: OpDelete, NID: "/us/t1/s1", Pre: h("/us/t1/s1")}, // stale: its child changed
		}, ErrPreMismatch, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := base.Hash()
			got, err := Apply(base, tc.ops)
			if base.Hash() != before {
				t.Fatal("Apply changed its input")
			}
			if tc.err != nil {
				var ae *ApplyError
				if !errors.Is(err, tc.err) || !errors.As(err, &ae) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			must(t, err)
			n, _ := got.Get("/us/t1")
			if s := strings.Join(n.Children, ","); s != tc.order {
				t.Fatalf("children %s, want %s", s, tc.order)
			}
			// Hashes are recomputed, never stale: rebuilding from the spec
			// gives the same id.
			spec, _ := got.Spec(got.Root())
			if MustTree(spec).Hash() != got.Hash() {
				t.Fatal("incremental hash differs from a full rebuild")
			}
		})
	}
}

func TestOpJSON(t *testing.T) {
	pre := "sha256:" + strings.Repeat("ab", 32)
	good := []string{
		`{"after_nid":null,"node":{"kind":"section","nid":"/a/b"},"op":"insert","parent_nid":"/a"}`,
		`{"after_nid":"/a/c","node":{"children":[],"heading":"H","kind":"section","nid":"/a/b","text":"T"},"op":"insert","parent_nid":"/a"}`,
		`{"nid":"/a/b","node":{"kind":"section","nid":"/a/b","text":"T"},"op":"replace","pre":"` + pre + `"}`,
		`{"nid":"/a/b","op":"delete","pre":"` + pre + `"}`,
		`{"after_nid":null,"nid":"/a/b","op":"move","parent_nid":"/c","pre":"` + pre + `"}`,
	}
	for _, s := range good {
		o, err := DecodeOp([]byte(s))
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		b, err := o.MarshalJSON()
		must(t, err)
		if string(b) != s {
			t.Errorf("round trip:\n got %s\nwant %s", b, s)
		}
	}
	bad := []string{
		`{"op":"insert","parent_nid":"/a"}`,                                              // no node
		`{"op":"delete","nid":"/a"}`,                                                     // no pre
		`{"op":"delete","nid":"/a","pre":"` + pre + `","node":null}`,                     // extra member
		`{"op":"frob","nid":"/a"}`,                                                       // unknown op
		`{"nid":"a","op":"delete","pre":"` + pre + `"}`,                                  // nid not a path
		`{"nid":"/a","op":"delete","pre":"sha256:AB"}`,                                   // bad pre
		`{"nid":"/a","node":{"kind":"x","nid":"/b"},"op":"replace","pre":"` + pre + `"}`, // replace of another nid
		`{"after_nid":5,"nid":"/a","op":"move","parent_nid":"/c","pre":"` + pre + `"}`,
		`{"nid":"/a","op":"delete","pre":"` + pre + `","pre":"` + pre + `"}`, // duplicate key
		`{"after_nid":null,"node":{"kind":"a b","nid":"/a/b"},"op":"insert","parent_nid":"/a"}`,
		`{"after_nid":null,"node":{"kind":"s","nid":"/a/b","text":"e\u0301"},"op":"insert","parent_nid":"/a"}`, // not NFC
	}
	for _, s := range bad {
		if _, err := DecodeOp([]byte(s)); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("%s: err %v, want schema", s, err)
		}
	}
}

func TestChangeDecodeVerify(t *testing.T) {
	base := sample()
	ops := []Op{{Op: OpReplace, NID: "/us/t1/s1", Pre: mustHash(base, "/us/t1/s1"), Node: &NodeSpec{NID: "/us/t1/s1", Kind: "section", Text: "The period is 45 days."}}}
	res, err := Apply(base, ops)
	must(t, err)
	c := &Change{Base: base.Hash(), Ops: ops, Result: res.Hash(), Parents: []dag.ID{testID("p")}, Message: "extend", Author: dag.SystemAuthor,
		Contributors: []Contributor{{Name: "A. Drafter", Role: "drafter"}}}
	b, err := c.Canonical()
	must(t, err)
	if !dag.IsCanonical(b) {
		t.Fatalf("not canonical: %s", b)
	}
	c2, canon, id, err := DecodeChange(b)
	must(t, err)
	if string(canon) != string(b) {
		t.Fatal("canonical bytes differ")
	}
	if cid, _ := c.ID(); cid != id || id != dag.Sum(b) {
		t.Fatal("ids differ")
	}
	if _, err := c2.Verify(base); err != nil {
		t.Fatal(err)
	}
	// Wrong base, wrong result.
	if _, err := c2.Verify(res); !errors.Is(err, ErrResultMismatch) {
		t.Fatalf("wrong base: %v", err)
	}
	c2.Result = base.Hash()
	if _, err := c2.Verify(base); !errors.Is(err, ErrResultMismatch) || dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("wrong result: %v", err)
	}
	// Schema errors.
	for _, s := range []string{
		`{}`,
		strings.Replace(string(b), `"oth:system"`, `"alice"`, 1),
		strings.Replace(string(b), `"drafter"`, `"ghost"`, 1),
		strings.Replace(string(b), `"message":"extend"`, `"message":"extend","extra":1`, 1),
		`{"author":"oth:system","base":"` + base.Hash().String() + `","contributors":null,"ops":[],"parents":[],"result":"` + base.Hash().String() + `"}`,
		`{"author":"oth:system","base":"` + base.Hash().String() + `","ops":[],"parents":["` + base.Hash().String() + `","` + base.Hash().String() + `"],"result":"` + base.Hash().String() + `"}`,
	} {
		if _, _, _, err := DecodeChange([]byte(s)); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("%.60s…: %v", s, err)
		}
	}
}
