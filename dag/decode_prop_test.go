package dag_test

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// DecodeSigned reads canonical envelopes with a one-pass decoder and
// everything else with the general one (canonicalize, then read the
// members). On envelopes of every shape, sealed and then mangled, the
// result must be the reference decoder's: the same verdict, canonical
// bytes, id, fields and signed message. The one-pass decoder must accept
// exactly the valid canonical envelopes (else the ingest path would quietly
// be slow), and agree in everything with the general decoder, errors
// included.
func TestPropDecodeSigned(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := mangle(t, anyEnvelope().Draw(t, "envelope"))
		checkDecoders(t, in)
	})
}

// checkDecoders runs the differential checks of TestPropDecodeSigned on in.
func checkDecoders(t interface{ Fatalf(string, ...any) }, in []byte) {
	got, err := dag.DecodeSigned(in)
	ref, rerr := dagtest.NaiveDecode(in)
	gen, gerr := dag.DecodeGeneral(in)
	fast, fastOK := dag.DecodeCanonical(in)
	if (err == nil) != (rerr == nil) {
		t.Fatalf("DecodeSigned: %v\nreference: %v\ninput %q", err, rerr, in)
	}
	if fmt.Sprint(err) != fmt.Sprint(gerr) {
		t.Fatalf("DecodeSigned: %v\ngeneral: %v", err, gerr)
	}
	if err != nil {
		if dag.CodeOf(err) != dag.CodeSchema {
			t.Fatalf("error without code schema: %v", err)
		}
		if fastOK {
			t.Fatalf("the canonical decoder accepted what the general one refuses (%v): %q", err, in)
		}
		return
	}
	if fastOK != bytes.Equal(in, got.Canonical) {
		t.Fatalf("the canonical decoder's verdict is %v for %q", fastOK, in)
	}
	if !bytes.Equal(got.Canonical, ref.Canonical) || got.ID != ref.ID || got.ID != dag.Sum(got.Canonical) {
		t.Fatalf("canonical %s id %s\nreference %s id %s", got.Canonical, got.ID, ref.Canonical, ref.ID)
	}
	if !sameEnvelope(got.Envelope, &ref.Envelope) {
		t.Fatalf("envelope %+v\nreference %+v", *got.Envelope, ref.Envelope)
	}
	if !bytes.Equal(got.SigningBytes(), ref.Signing) || !bytes.Equal(got.Envelope.SigningBytes(), ref.Signing) {
		t.Fatalf("signing bytes %s\nreference %s", got.SigningBytes(), ref.Signing)
	}
	if !reflect.DeepEqual(got, gen) {
		t.Fatalf("DecodeSigned and the general decoder differ:\n%+v\n%+v", got, gen)
	}
	if fastOK && !reflect.DeepEqual(got, fast) {
		t.Fatalf("DecodeSigned and the canonical decoder differ:\n%+v\n%+v", got, fast)
	}
	// Sig and Parents share one allocation with the Envelope: appending to
	// them must not write over each other.
	e := got.Envelope
	parents, sig := slices.Clone(e.Parents), bytes.Clone(e.Sig)
	_ = append(e.Sig, 0xff, 0xff, 0xff)
	_ = append(e.Parents, dag.Sum(nil), dag.Sum(nil))
	if !slices.Equal(e.Parents, parents) || !bytes.Equal(e.Sig, sig) || !sameEnvelope(e, &ref.Envelope) {
		t.Fatalf("appending to Sig or Parents changed the envelope")
	}
}

// sameEnvelope compares every field, and whether Parents is nil.
func sameEnvelope(a, b *dag.Envelope) bool {
	return a.V == b.V && a.Type == b.Type && a.Session == b.Session && a.Author == b.Author &&
		reflect.DeepEqual(a.Parents, b.Parents) && bytes.Equal(a.Body, b.Body) && a.TS == b.TS &&
		bytes.Equal(a.Sig, b.Sig)
}

// anyEnvelope generates sealed envelopes of every shape the decoders
// branch on: session.create without parents, up to five parents, bodies
// with escapes, non-ASCII text, numbers and nesting, timestamps with
// fractions of a second.
func anyEnvelope() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		if rapid.Bool().Draw(t, "from dagtest") {
			return dagtest.Envelopes(dagtest.EnvelopeOptions{Types: []dag.TxType{dag.TxBallotCast, dag.TxBranchAppend}}).Draw(t, "sealed").Bytes
		}
		body, err := dag.Marshal(bodyObject(t))
		if err != nil {
			t.Fatalf("body: %v", err)
		}
		e := &dag.Envelope{Type: rapid.SampledFrom(dag.TxTypes()).Draw(t, "type"), Body: body, TS: dagtest.Timestamps().Draw(t, "ts")}
		if rapid.Bool().Draw(t, "fraction") {
			e.TS = strings.TrimSuffix(e.TS, "Z") + "." + rapid.StringMatching(`[0-9]{1,9}`).Draw(t, "ns") + "Z"
		}
		if e.Type == dag.TxSessionCreate {
			e.Session = dag.Sum(body)
		} else {
			e.Session = dag.Sum([]byte(rapid.String().Draw(t, "session")))
			n := rapid.IntRange(1, 5).Draw(t, "parents")
			for i := range n {
				e.Parents = append(e.Parents, dag.Sum(fmt.Appendf(nil, "p%d", i)))
			}
		}
		b, _, err := e.Seal(dagtest.Signers().Draw(t, "signer"))
		if err != nil {
			t.Fatalf("seal: %v", err)
		}
		return b
	})
}

// bodyObject generates bodies: objects of genValue's values (canon_test.go)
// and of texts that need escapes or are not ASCII.
func bodyObject(t *rapid.T) map[string]any {
	m := map[string]any{}
	for range rapid.IntRange(0, 4).Draw(t, "members") {
		var v any = rapid.SampledFrom([]string{"approve", `a"b\c`, "\x00\x1f\x7f", "é", "😀", "\u2028<&>", "/"}).Draw(t, "text")
		if rapid.Bool().Draw(t, "any value") {
			v = genValue(t, 1)
		}
		m[nfc(rapid.String().Draw(t, "key"))] = v
	}
	return m
}

// mangle applies one random change of the kinds that matter to a
// decoder: a bit flip anywhere, an escape or non-ASCII text in a string,
// white space, a duplicate or unknown member, members out of order, a
// byte inserted or deleted, truncation; or none.
func mangle(t *rapid.T, b []byte) []byte {
	b = bytes.Clone(b)
	at := func(label string) int { return rapid.IntRange(0, len(b)-1).Draw(t, label) }
	// strAt picks the position of a byte inside a string value: after a ":" or
	// "[" quote, before the closing one.
	strAt := func() int {
		for range 20 {
			i := at("in string")
			if i > 0 && b[i] != '"' && bytes.Count(b[:i], []byte(`"`))%2 == 1 {
				return i
			}
		}
		return at("anywhere")
	}
	switch rapid.IntRange(0, 12).Draw(t, "mangle") {
	case 0:
		return b
	case 1:
		b[at("flip")] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
	case 2: // a character written as an escape (never canonical)
		i := strAt()
		esc := rapid.SampledFrom([]string{`\u%04x`, `\u%04X`}).Draw(t, "esc")
		if b[i] == '/' && rapid.Bool().Draw(t, "solidus") {
			esc = `\/`
		}
		if !strings.Contains(esc, "%") {
			return append(b[:i], append([]byte(esc), b[i+1:]...)...)
		}
		return append(b[:i], append(fmt.Appendf(nil, esc, b[i]), b[i+1:]...)...)
	case 3: // non-ASCII text, NFC or not, or bytes that are not UTF-8
		i := strAt()
		s := rapid.SampledFrom([]string{"é", "e\u0301", "\u212b", "😀", "\xff", "\xc3", "\xed\xa0\x80", `\ud83d\ude00`, `\ud83d`, "\u2028"}).Draw(t, "text")
		return append(b[:i], append([]byte(s), b[i:]...)...)
	case 4: // white space
		i := at("ws")
		return append(b[:i], append([]byte(rapid.SampledFrom([]string{" ", "\n", "\t", "\r"}).Draw(t, "space")), b[i:]...)...)
	case 5: // a duplicate member, a known field again or an unknown one
		m := rapid.SampledFrom([]string{`"v":"0.10",`, `"author":"x",`, `"sig":"",`, `"x":1,`, `"parents":[],`}).Draw(t, "member")
		return append([]byte("{"+m), b[1:]...)
	case 6: // the first two members swapped: out of order
		if end := bytes.Index(b, []byte(`,"body":`)); end > 0 {
			author := string(b[1:end])
			rest := string(b[end+1:])
			if j := strings.Index(rest, `,"parents":`); j > 0 {
				return []byte("{" + rest[:j] + "," + author + rest[j:])
			}
		}
	case 7: // a byte inserted
		i := at("insert")
		c := rapid.SampledFrom([]byte{'"', '\\', ',', ']', '}', '[', '{', ':', 0, 0x1f, 0x7f, 0x80, 'A', '0'}).Draw(t, "byte")
		return append(b[:i], append([]byte{c}, b[i:]...)...)
	case 8: // a byte deleted
		i := at("delete")
		return append(b[:i], b[i+1:]...)
	case 9: // truncated
		return b[:at("truncate")]
	case 10: // a byte replaced inside a string
		b[strAt()] = rapid.SampledFrom([]byte{'"', '\\', 0, 0x1f, 0x7f, 0xc3, 'A', 'G', 'g', '-', '_', '+', '/', '='}).Draw(t, "byte")
	case 11: // a number for a string or a string for an array
		for _, k := range []string{`"v":`, `"ts":`, `"sig":`, `"parents":`, `"author":`} {
			if rapid.Bool().Draw(t, "this one") {
				if i := bytes.Index(b, []byte(k)); i >= 0 {
					return append(b[:i+len(k)], append([]byte(`1,"zz":`), b[i+len(k):]...)...)
				}
			}
		}
	case 12: // a parent repeated
		if i := bytes.Index(b, []byte(`"parents":["`)); i >= 0 {
			i += len(`"parents":[`)
			p := b[i : i+len(`"sha256:`)+65]
			return append(b[:i], append(append(bytes.Clone(p), ','), b[i:]...)...)
		}
	}
	return b
}
