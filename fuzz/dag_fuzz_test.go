package fuzz

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// FuzzDecodeEnvelope: any bytes either decode to an envelope whose
// canonical form re-decodes to the same id, or fail with code schema; and
// DecodeSigned (a one-pass decoder for canonical input, the general one
// for the rest) agrees with dagtest.NaiveDecode, a plain reference, on the verdict,
// the canonical bytes, the id, every field and the signed message.
func FuzzDecodeEnvelope(f *testing.F) {
	s, _ := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	e := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum([]byte("s")), Parents: []dag.ID{dag.Sum([]byte("p"))},
		Body: []byte(`{"choice":"approve"}`), TS: "2026-09-21T12:00:00Z"}
	b, _, _ := e.Seal(s)
	f.Add(b)
	f.Add([]byte(`{"v":"0.10"}`))
	f.Add([]byte(`{}`))
	// The shapes the one-pass decoder branches on: no parents
	// (session.create), more parents than it keeps beside the envelope,
	// a body with escapes, non-ASCII text and nesting, a fraction of a
	// second; and non-canonical spellings of them.
	body := []byte(`{"a":[1,-2,{"b":null}],"q":"\"\\\n\u001f","t":"é😀` + "\u2028" + `"}`)
	create := &dag.Envelope{Type: dag.TxSessionCreate, Session: dag.Sum(body), Body: body, TS: "2026-01-02T03:04:05.5Z"}
	b, _, _ = create.Seal(s)
	f.Add(b)
	f.Add(bytes.Replace(b, []byte(`"é`), []byte(`"e\u0301`), 1))
	f.Add(bytes.Replace(b, []byte(`"é`), []byte(`"\u00e9`), 1))
	merge := &dag.Envelope{Type: dag.TxBranchAppend, Session: dag.Sum([]byte("s")), Body: body, TS: "2026-09-21T12:00:00Z",
		Parents: []dag.ID{dag.Sum([]byte("p")), dag.Sum([]byte("q")), dag.Sum([]byte("r"))}}
	b, _, _ = merge.Seal(s)
	f.Add(b)
	f.Add(bytes.Replace(b, []byte(`,"`), []byte(` , "`), 2))
	f.Add(append([]byte(`{"v":"0.10",`), b[1:]...))
	f.Fuzz(func(t *testing.T, in []byte) {
		ref, rerr := dagtest.NaiveDecode(in)
		env, canon, id, err := dag.DecodeEnvelope(in)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("DecodeEnvelope: %v; reference: %v", err, rerr)
		}
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		if !bytes.Equal(canon, ref.Canonical) || id != ref.ID || !sameEnvelope(env, &ref.Envelope) {
			t.Fatalf("decoded %+v\n%s\nreference %+v\n%s", *env, canon, ref.Envelope, ref.Canonical)
		}
		if !dag.IsCanonical(canon) || dag.Sum(canon) != id || !bytes.Equal(env.Canonical(), canon) {
			t.Fatalf("decoded envelope is not self-consistent")
		}
		_, _, id2, err := dag.DecodeEnvelope(canon)
		if err != nil || id2 != id {
			t.Fatalf("canonical form does not re-decode: %v", err)
		}
		se, err := dag.DecodeSigned(in)
		if err != nil || se.ID != id || !bytes.Equal(se.SigningBytes(), env.SigningBytes()) || !bytes.Equal(se.SigningBytes(), ref.Signing) {
			t.Fatalf("DecodeSigned disagrees with DecodeEnvelope or the reference: %v\ncut %s\nwant %s", err, se.SigningBytes(), ref.Signing)
		}
		_ = env.VerifySignature() // must not panic
	})
}

// sameEnvelope compares every field, and whether Parents is nil.
func sameEnvelope(a, b *dag.Envelope) bool {
	return a.V == b.V && a.Type == b.Type && a.Session == b.Session && a.Author == b.Author &&
		reflect.DeepEqual(a.Parents, b.Parents) && bytes.Equal(a.Body, b.Body) && a.TS == b.TS &&
		bytes.Equal(a.Sig, b.Sig)
}

// FuzzCanonicalize: canonicalization never panics, its output is a fixed
// point, and IsCanonical agrees with it.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null]}`, `"\ud83d\ude00"`, `1.5`, `{"a":1,"a":2}`, "\"\xff\"", ` [ ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := dag.Canonicalize(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			if dag.IsCanonical(in) {
				t.Fatal("IsCanonical true for refused input")
			}
			return
		}
		c2, err := dag.Canonicalize(c)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("not a fixed point: %q -> %q (%v)", c, c2, err)
		}
		if dag.IsCanonical(in) != bytes.Equal(in, c) {
			t.Fatalf("IsCanonical(%q) disagrees with Canonicalize", in)
		}
		if _, err := dag.CanonicalizeRFC8785(in); err != nil {
			t.Fatalf("accepted by the witan profile but not by plain RFC 8785: %v", err)
		}
	})
}

// FuzzParseID: ParseID accepts exactly the strings String produces, and
// the CID form round-trips.
func FuzzParseID(f *testing.F) {
	f.Add(dag.Sum([]byte("x")).String())
	f.Add(dag.Sum([]byte("x")).CID().String())
	f.Add("sha256:")
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := dag.ParseID(s); err == nil {
			if id.String() != s {
				t.Fatalf("ParseID(%q) prints as %q", s, id)
			}
		} else if dag.CodeOf(err) != dag.CodeSchema {
			t.Fatalf("error without code schema: %v", err)
		}
		if id, err := dag.ParseCID(s); err == nil {
			if back, err := dag.FromCID(id.CID()); err != nil || back != id {
				t.Fatalf("CID round trip failed for %q", s)
			}
		} else if dag.CodeOf(err) != dag.CodeSchema {
			t.Fatalf("error without code schema: %v", err)
		}
		if k, err := dag.ParseKey(s); err == nil && k.String() != s {
			t.Fatalf("ParseKey(%q) prints as %q", s, k)
		}
	})
}
