package fuzz

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
)

var statuteSeedTree = `{"children":[{"children":[{"kind":"section","nid":"/us/t1/s1","text":"The period is 30 days. [[ref:/us/t1/s2]]"},{"kind":"section","nid":"/us/t1/s2","text":"[[def:fee]] Fees of $5."}],"heading":"General","kind":"title","nid":"/us/t1"}],"kind":"root","nid":"/us"}`

// FuzzStatuteNodeSpec: any bytes either decode to a NodeSpec whose
// canonical form re-decodes to the same bytes and builds the same tree, or
// fail with code schema.
func FuzzStatuteNodeSpec(f *testing.F) {
	f.Add([]byte(statuteSeedTree))
	f.Add([]byte(`{"kind":"section","nid":"/a","children":null}`))
	f.Add([]byte(`{"kind":"section","nid":"/a","children":[{"kind":"x","nid":"/a"}]}`))
	f.Add([]byte(`{"kind":"a b","nid":"/a"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := statute.DecodeNodeSpec(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		b, err := s.MarshalJSON()
		if err != nil || !dag.IsCanonical(b) {
			t.Fatalf("marshal: %v %q", err, b)
		}
		s2, err := statute.DecodeNodeSpec(b)
		if err != nil {
			t.Fatalf("canonical form does not re-decode: %v", err)
		}
		b2, _ := s2.MarshalJSON()
		if !bytes.Equal(b, b2) {
			t.Fatalf("not a fixed point: %s vs %s", b, b2)
		}
		tr, err := statute.NewTree(s)
		if err != nil {
			if !errors.Is(err, statute.ErrDuplicateNID) {
				t.Fatalf("NewTree of a decoded spec: %v", err)
			}
			return
		}
		tr2, err := statute.NewTree(s2)
		if err != nil || tr.Hash() != tr2.Hash() {
			t.Fatalf("trees differ: %v", err)
		}
		// Objects round trip through LoadTree.
		m := statute.NodeMap{}
		for _, o := range tr.Objects() {
			o := o
			m[o.Hash()] = &o
		}
		tr3, err := statute.LoadTree(tr.Hash(), m)
		if err != nil || tr3.Hash() != tr.Hash() {
			t.Fatalf("LoadTree: %v", err)
		}
	})
}

// FuzzStatuteOp: any bytes either decode to an op whose encoding is a
// fixed point, or fail with code schema; applying a decoded op to a fixed
// tree never panics and fails only with an *ApplyError.
func FuzzStatuteOp(f *testing.F) {
	seed, _ := statute.DecodeNodeSpec([]byte(statuteSeedTree))
	base := statute.MustTree(seed)
	h, _ := base.NodeHash("/us/t1/s1")
	f.Add([]byte(`{"op":"replace","nid":"/us/t1/s1","pre":"` + h.String() + `","node":{"kind":"section","nid":"/us/t1/s1","text":"45"}}`))
	f.Add([]byte(`{"op":"move","nid":"/us/t1/s1","pre":"` + h.String() + `","parent_nid":"/us/t1","after_nid":"/us/t1/s2"}`))
	f.Add([]byte(`{"op":"delete","nid":"/us/t1/s1","pre":"` + h.String() + `"}`))
	f.Add([]byte(`{"op":"insert","parent_nid":"/us/t1","after_nid":null,"node":{"kind":"section","nid":"/us/t1/s0"}}`))
	f.Add([]byte(`{"op":"insert","parent_nid":"/us/t1","node":{"kind":"section","nid":"/us/t1/s1"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		o, err := statute.DecodeOp(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		b, err := o.MarshalJSON()
		if err != nil || !dag.IsCanonical(b) {
			t.Fatalf("marshal: %v %q", err, b)
		}
		o2, err := statute.DecodeOp(b)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		b2, _ := o2.MarshalJSON()
		if !bytes.Equal(b, b2) {
			t.Fatalf("not a fixed point: %s vs %s", b, b2)
		}
		before := base.Hash()
		out, err := statute.Apply(base, []statute.Op{*o})
		if base.Hash() != before {
			t.Fatal("Apply changed its input")
		}
		if err != nil {
			var ae *statute.ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("apply error of the wrong type: %v", err)
			}
			return
		}
		spec, _ := out.Spec(out.Root())
		if statute.MustTree(spec).Hash() != out.Hash() {
			t.Fatal("incremental hash differs from a rebuild")
		}
	})
}

// FuzzStatuteChange: DecodeChange either fails with code schema or
// returns a change whose id is the hash of its canonical bytes and whose
// own encoding re-decodes to the same change.
func FuzzStatuteChange(f *testing.F) {
	z := "sha256:" + strings.Repeat("0", 64)
	f.Add([]byte(`{"author":"oth:system","base":"` + z + `","message":"m","ops":[],"parents":[],"result":"` + z + `"}`))
	f.Add([]byte(`{"author":"oth:system","base":"` + z + `","ops":[{"op":"delete","nid":"/a","pre":"` + z + `"}],"parents":["` + z + `"],"result":"` + z + `","contributors":[{"key":null,"name":"n","role":"drafter"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, canon, id, err := statute.DecodeChange(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		if dag.Sum(canon) != id || !dag.IsCanonical(canon) {
			t.Fatal("id is not the hash of the canonical bytes")
		}
		b, err := c.Canonical()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		c2, _, id2, err := statute.DecodeChange(b)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if cid, _ := c2.ID(); cid != id2 {
			t.Fatal("ID disagrees with DecodeChange")
		}
	})
}

// FuzzStatuteResolutions: an MR's resolutions either decode, each
// re-encoding to a resolution that decodes to the same bytes, or fail with
// code schema.
func FuzzStatuteResolutions(f *testing.F) {
	f.Add([]byte(`[{"nid":"/a","node":null},{"nid":"/b","node":{"kind":"section","nid":"/b","text":"x"}}]`))
	f.Add([]byte(`[{"nid":"/a","node":null},{"nid":"/a","node":null}]`))
	f.Add([]byte(`[{"nid":"/a","node":{"kind":"s","nid":"/b"}}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		rs, err := statute.DecodeResolutions(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		for _, r := range rs {
			b, err := r.MarshalJSON()
			if err != nil || !dag.IsCanonical(b) {
				t.Fatalf("marshal: %v %q", err, b)
			}
			rs2, err := statute.DecodeResolutions(append(append([]byte("["), b...), ']'))
			if err != nil || len(rs2) != 1 {
				t.Fatalf("re-decode: %v", err)
			}
			b2, _ := rs2[0].MarshalJSON()
			if !bytes.Equal(b, b2) {
				t.Fatalf("not a fixed point: %s vs %s", b, b2)
			}
		}
	})
}

// FuzzStatuteMarkers: marker parsing, stripping and number extraction
// never panic, and every number is a substring of its text.
func FuzzStatuteMarkers(f *testing.F) {
	f.Add("See [[ref:/a]] [[def:x]] [[sunset:90]] [[effective:2027-01-01]] [[approp:a:1:2027]] [[avail:c]] [[applies:CA,NY]] [[opt_in:p]] 1,000.50")
	f.Add("[[[[ref:/a]] [[sunset:]] ]] [[")
	f.Fuzz(func(t *testing.T, s string) {
		m := statute.ParseMarkers(s, s)
		_ = m
		_ = statute.StripMarkers(s)
		rest := s
		for _, n := range statute.Numbers(s) {
			i := strings.Index(rest, n)
			if i < 0 {
				t.Fatalf("number %q not in order in %q", n, s)
			}
			rest = rest[i+len(n):]
		}
	})
}
