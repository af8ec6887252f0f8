package fuzz

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// FuzzDecodeEnvelope: any bytes either decode to an envelope whose
// canonical form re-decodes to the same id, or fail with code schema.
func FuzzDecodeEnvelope(f *testing.F) {
	s, _ := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	e := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum([]byte("s")), Parents: []dag.ID{dag.Sum([]byte("p"))},
		Body: []byte(`{"choice":"approve"}`), TS: "2026-09-21T12:00:00Z"}
	b, _, _ := e.Seal(s)
	f.Add(b)
	f.Add([]byte(`{"v":"0.10"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		env, canon, id, err := dag.DecodeEnvelope(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		if !dag.IsCanonical(canon) || dag.Sum(canon) != id || !bytes.Equal(env.Canonical(), canon) {
			t.Fatalf("decoded envelope is not self-consistent")
		}
		_, _, id2, err := dag.DecodeEnvelope(canon)
		if err != nil || id2 != id {
			t.Fatalf("canonical form does not re-decode: %v", err)
		}
		se, err := dag.DecodeSigned(in)
		if err != nil || se.ID != id || !bytes.Equal(se.SigningBytes(), env.SigningBytes()) {
			t.Fatalf("DecodeSigned disagrees with DecodeEnvelope: %v\ncut %s\nwant %s", err, se.SigningBytes(), env.SigningBytes())
		}
		_ = env.VerifySignature() // must not panic
	})
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
