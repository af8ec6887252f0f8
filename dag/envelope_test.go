package dag_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

func sealedBallot(t testing.TB) (*dag.Envelope, []byte, dag.ID) {
	t.Helper()
	s, _ := dag.SignerFromSeed(seed(4))
	e := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum([]byte("session")), Parents: []dag.ID{dag.Sum([]byte("p"))},
		Body: []byte(`{"choice":"approve","mr":"` + dag.Sum([]byte("mr")).String() + `"}`), TS: "2026-09-21T12:00:00Z"}
	b, id, err := e.Seal(s)
	if err != nil {
		t.Fatal(err)
	}
	return e, b, id
}

func TestEnvelopeRoundTrip(t *testing.T) {
	e, b, id := sealedBallot(t)
	if !dag.IsCanonical(b) {
		t.Fatalf("sealed envelope is not canonical: %s", b)
	}
	got, canon, gid, err := dag.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if gid != id || !bytes.Equal(canon, b) || got.ID() != id {
		t.Fatal("decode changed the id or bytes")
	}
	if err := got.VerifySignature(); err != nil {
		t.Fatal(err)
	}
	// Signing bytes are the canonical envelope without its "sig" member.
	c, err := dag.Canonicalize(bytes.Replace(b, []byte(`"sig":"`+b64url.EncodeToString(e.Sig)+`",`), nil, 1))
	if err != nil || !bytes.Equal(c, got.SigningBytes()) {
		t.Fatalf("signing bytes %s\nwant %s", got.SigningBytes(), c)
	}
	// A non-canonical spelling of the same envelope has the same id.
	loose := strings.Replace(string(b), `{"author"`, "{ \"author\" ", 1)
	_, _, lid, err := dag.DecodeEnvelope([]byte(loose))
	if err != nil || lid != id {
		t.Fatalf("loose spelling: %v %v", lid, err)
	}
}

func TestEnvelopeRefuses(t *testing.T) {
	_, b, _ := sealedBallot(t)
	s := string(b)
	cases := map[string]string{
		"unknown field":   strings.Replace(s, `{"author"`, `{"x":1,"author"`, 1),
		"missing sig":     cutMember(s, "sig"),
		"missing ts":      cutMember(s, "ts"),
		"missing parents": cutMember(s, "parents"),
		"empty parents":   strings.Replace(s, s[strings.Index(s, `"parents":[`):strings.Index(s, `],"session"`)+1], `"parents":[]`, 1),
		"wrong version":   strings.Replace(s, `"v":"0.10"`, `"v":"0.9"`, 1),
		"unknown type":    strings.Replace(s, `"type":"ballot.cast"`, `"type":"ballot.burn"`, 1),
		"bad ts":          strings.Replace(s, `"ts":"2026-09-21T12:00:00Z"`, `"ts":"2026-09-21 12:00"`, 1),
		"non-utc ts":      strings.Replace(s, `"ts":"2026-09-21T12:00:00Z"`, `"ts":"2026-09-21T12:00:00+01:00"`, 1),
		"body not object": strings.Replace(s, s[strings.Index(s, `"body":`):strings.Index(s, `,"parents"`)], `"body":[1]`, 1),
		"float in body":   strings.Replace(s, `"choice":"approve"`, `"choice":"approve","w":1.5`, 1),
		"duplicate key":   strings.Replace(s, `{"author"`, `{"v":"0.10","author"`, 1),
		"short sig":       strings.Replace(s, `"sig":"`, `"sig":"AAAA`, 1),
		"not json":        "envelope",
		"too large":       `{"a":"` + strings.Repeat("x", dag.MaxEnvelopeSize) + `"}`,
	}
	for name, in := range cases {
		if _, _, _, err := dag.DecodeEnvelope([]byte(in)); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("%s: err = %v, want schema", name, err)
		}
	}
}

func cutMember(s, key string) string {
	i := strings.Index(s, `"`+key+`":`)
	j := strings.Index(s[i:], `",`)
	return s[:i] + s[i+j+2:]
}

func TestEnvelopeBadSignature(t *testing.T) {
	e, _, _ := sealedBallot(t)
	e.TS = "2026-09-21T12:00:01Z" // changed after signing
	if err := e.VerifySignature(); dag.CodeOf(err) != dag.CodeBadSignature {
		t.Fatalf("err = %v, want bad_signature", err)
	}
	other, _ := dag.SignerFromSeed(seed(5))
	e2, _, _ := sealedBallot(t)
	e2.Author = other.Key()
	if err := e2.VerifySignature(); dag.CodeOf(err) != dag.CodeBadSignature {
		t.Fatalf("err = %v, want bad_signature", err)
	}
}

func TestSessionCreateRules(t *testing.T) {
	s, _ := dag.SignerFromSeed(seed(6))
	body := []byte(`{"label":"x"}`)
	e := &dag.Envelope{Type: dag.TxSessionCreate, Session: dag.Sum(body), Body: body, TS: "2026-01-01T00:00:00Z"}
	if _, _, err := e.Seal(s); err != nil {
		t.Fatal(err)
	}
	e.Session = dag.Sum([]byte("other"))
	if _, _, err := e.Seal(s); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("session.create with a session that is not its body's hash: %v", err)
	}
	e.Session = dag.Sum(body)
	e.Parents = []dag.ID{dag.Sum([]byte("p"))}
	if _, _, err := e.Seal(s); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("session.create with parents: %v", err)
	}
	b := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum(body), Parents: []dag.ID{dag.Sum([]byte("p")), dag.Sum([]byte("p"))}, Body: body, TS: "2026-01-01T00:00:00Z"}
	if _, _, err := b.Seal(s); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("duplicate parents: %v", err)
	}
}

func TestCodes(t *testing.T) {
	if len(dag.Codes()) != 40 {
		t.Fatalf("%d codes, the spec lists 40", len(dag.Codes()))
	}
	for _, c := range dag.Codes() {
		if c.String() != string(c) {
			t.Errorf("%q prints as %q", c, c.String())
		}
	}
	if s := dag.Code("made_up").String(); !strings.Contains(s, "unknown") {
		t.Errorf("unknown code prints as %q", s)
	}
	err := dag.Errorf(dag.CodeStaleMR, "mr %d", 3)
	if dag.CodeOf(err) != dag.CodeStaleMR || err.Error() != "stale_mr: mr 3" {
		t.Errorf("Errorf: %v", err)
	}
}

// DecodeSigned cuts the signed message from the canonical bytes; it must
// be exactly what encoding the envelope without its signature gives, for
// canonical input and for input that needed canonicalizing, and a batch
// fed through AddSigned must accept what Add accepts and refuse a
// tampered signature.
func TestPropDecodeSignedSigningBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := dagtest.Envelopes(dagtest.EnvelopeOptions{}).Draw(t, "envelope")
		in := s.Bytes
		if rapid.Bool().Draw(t, "spaced") {
			in = bytes.ReplaceAll(in, []byte(`,"`), []byte(" ,\n \""))
		}
		got, err := dag.DecodeSigned(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.SigningBytes(), s.Envelope.SigningBytes()) {
			t.Fatalf("cut %s\nwant %s", got.SigningBytes(), s.Envelope.SigningBytes())
		}
		if !bytes.Equal(got.Canonical, s.Bytes) || got.ID != s.ID {
			t.Fatalf("canonical or id differ from the sealed envelope")
		}
		v := dag.NewBatchVerifier()
		v.AddSigned(got)
		if ok, _ := v.Verify(); !ok {
			t.Fatal("AddSigned refused a valid signature")
		}
		bad := got
		env := *got.Envelope
		env.Sig = bytes.Clone(env.Sig)
		env.Sig[rapid.IntRange(0, 63).Draw(t, "byte")] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
		bad.Envelope = &env
		v.AddSigned(bad)
		if ok, _ := v.Verify(); ok {
			t.Fatal("AddSigned accepted a tampered signature")
		}
	})
}
