package badgerstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

func roundTrip(t interface {
	Helper()
	Fatalf(string, ...any)
}, data []byte) []byte {
	t.Helper()
	p := pack(nil, data)
	got, err := unpack(nil, p)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("unpack(pack(%q)) = %q, %v", data, got, err)
	}
	if n := unpackedSize(p); n != len(data) {
		t.Fatalf("unpackedSize = %d, want %d", n, len(data))
	}
	if want := packEveryQuote(data); !bytes.Equal(p, want) {
		t.Fatalf("pack(%q) = %q, trying every quote gives %q", data, p, want)
	}
	return p
}

// packEveryQuote is pack without its shortcuts: every quote is tried as
// the start of a token. pack must write the same bytes (what stores hold
// reads the same whichever wrote it).
func packEveryQuote(data []byte) []byte {
	if hasControl(data) {
		return append([]byte{packRaw}, data...)
	}
	dst := []byte{packJSON}
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		if n := packToken(&dst, data, i, last); n > 0 {
			last = i + n
			i = last - 1
		}
	}
	return append(dst, data[last:]...)
}

// Signed envelopes pack to about three quarters of their size and back.
func TestPackEnvelopes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := dagtest.Envelopes(dagtest.EnvelopeOptions{}).Draw(t, "envelope")
		p := roundTrip(t, s.Bytes)
		// session, author, sig and at least one parent are tokens
		// (one byte of header)
		if saved := len(s.Bytes) - len(p); saved < 40+20+23+40-1 {
			t.Fatalf("packing saved %d bytes of %d", saved, len(s.Bytes))
		}
	})
}

// Strings that look like ids, keys or signatures but would not come back
// byte for byte stay text; anything with a control byte is stored raw.
func TestPackEdgeCases(t *testing.T) {
	id := dag.Sum([]byte("x")).String()
	s, _ := dag.SignerFromSeed(bytes.Repeat([]byte{1}, 32))
	key := s.Key().String()
	sig := s.Sign(dag.DomainEnvelope, []byte("m"))
	sigText := `"` + strings.TrimRight(b64.EncodeToString(sig), "=") + `"`
	for _, c := range []struct {
		name   string
		data   string
		tokens int
	}{
		{"id", `["` + id + `"]`, 1},
		{"upper-case hex", `["` + strings.ToUpper(id[:9]) + id[9:] + `"]`, 0},
		{"upper-case hex digit", `["` + id[:70] + "A" + `"]`, 0},
		{"short id", `["` + id[:70] + `"]`, 0},
		{"id at the end, unterminated", `"` + id, 0},
		{"key", `{"author":"` + key + `"}`, 1},
		{"key with non-zero trailing bits", `{"author":"` + key[:len(key)-1] + "B" + `"}`, -1},
		{"sig", `{"sig":` + sigText + `}`, 1},
		{"sig-shaped string elsewhere", `{"x":` + sigText + `}`, 0},
		{"two ids back to back", `"` + id + `""` + id + `"`, 2},
		{"control byte", "\x01" + `"` + id + `"`, 0},
		{"empty", ``, 0},
		{"only a quote", `"`, 0},
	} {
		p := roundTrip(t, []byte(c.data))
		tokens := 0
		if p[0] == packJSON {
			for i := 1; i < len(p); i++ {
				switch p[i] {
				case tokID, tokKey:
					tokens, i = tokens+1, i+32
				case tokSig:
					tokens, i = tokens+1, i+64
				}
			}
		}
		if c.tokens >= 0 && tokens != c.tokens {
			t.Errorf("%s: %d tokens, want %d", c.name, tokens, c.tokens)
		}
	}
}

func TestUnpackRefusesMalformed(t *testing.T) {
	for _, p := range [][]byte{nil, {0x02}, {packJSON, tokID, 1, 2}, {packJSON, tokKey}, {packJSON, tokSig, 0}, {packJSON, 0x04}} {
		if _, err := unpack(nil, p); err == nil {
			t.Errorf("unpack(%x) accepted", p)
		}
	}
}

func FuzzPack(f *testing.F) {
	f.Add([]byte(`{"a":"` + dag.Sum(nil).String() + `"}`))
	f.Add([]byte(`"sig":"` + strings.Repeat("A", 86) + `"`))
	f.Add([]byte(`"ed25519:` + strings.Repeat("A", 43) + `"`))
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data) })
}

// BenchmarkPack: packing and unpacking one signed envelope (ns/op per
// envelope).
func BenchmarkPack(b *testing.B) {
	s, _ := dag.SignerFromSeed(bytes.Repeat([]byte{3}, 32))
	e := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum([]byte("s")), Parents: []dag.ID{dag.Sum([]byte("p")), dag.Sum([]byte("q"))},
		Body: []byte(`{"choice":"approve","mr":"` + dag.Sum([]byte("mr")).String() + `","supersedes":null,"weight":3}`), TS: "2026-09-21T12:00:00Z"}
	data, _, err := e.Seal(s)
	if err != nil {
		b.Fatal(err)
	}
	p := pack(nil, data)
	b.Run("pack", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			buf = pack(buf[:0], data)
		}
	})
	b.Run("unpack", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			buf, _ = unpack(buf[:0], p)
		}
	})
}

// hasControl agrees with a byte-by-byte loop, for every position and value
// of the one byte that differs.
func TestHasControl(t *testing.T) {
	for n := 0; n < 20; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte{'a'}, n)
				b[at] = byte(c)
				if got, want := hasControl(b), c < 0x20; got != want {
					t.Fatalf("hasControl(%q) = %v", b, got)
				}
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOf(rapid.Byte()).Draw(t, "b")
		if got, want := hasControl(b), slicesContainsBelow(b, 0x20); got != want {
			t.Fatalf("hasControl(%x) = %v", b, got)
		}
	})
}

func slicesContainsBelow(b []byte, v byte) bool {
	for _, c := range b {
		if c < v {
			return true
		}
	}
	return false
}
