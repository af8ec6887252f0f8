package dag_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

// rfc8785Dir is the RFC 8785 reference data, kept in the repository (see
// its README for the source and licence).
const rfc8785Dir = "testdata/rfc8785"

func TestRFC8785ReferenceData(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join(rfc8785Dir, "input", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("RFC 8785 reference data not found at %s: %v", rfc8785Dir, err)
	}
	for _, in := range inputs {
		name := filepath.Base(in)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(rfc8785Dir, "output", name))
			if err != nil {
				t.Fatal(err)
			}
			hexWant, err := os.ReadFile(filepath.Join(rfc8785Dir, "outhex", strings.TrimSuffix(name, ".json")+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := dag.CanonicalizeRFC8785(src)
			if err != nil {
				t.Fatalf("CanonicalizeRFC8785: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("canonical form differs\n got: %s\nwant: %s", got, want)
			}
			hb, err := hex.DecodeString(strings.Join(strings.Fields(string(hexWant)), ""))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, hb) {
				t.Errorf("canonical bytes differ from outhex")
			}
			// Canonical output is a fixed point.
			again, err := dag.CanonicalizeRFC8785(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("not idempotent: %v", err)
			}
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	cases := []struct{ name, in string }{
		{"duplicate key", `{"a":1,"a":2}`},
		{"duplicate key after escape", `{"a":1,"\u0061":2}`},
		{"duplicate key unsorted", `{"b":1,"a":2,"b":3}`},
		{"invalid utf-8", "{\"a\":\"\xff\"}"},
		{"truncated utf-8", "\"\xe2\x82\""},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00"`},
		{"high surrogate then letter", `"\ud800\u0041"`},
		{"not NFC", "\"e\u0301\""},
		{"not NFC key", "{\"e\u0301\":1}"},
		{"fraction", `{"a":1.5}`},
		{"exponent", `{"a":1e3}`},
		{"integer zero fraction", `{"a":1.0}`},
		{"too large", `9007199254740992`},
		{"too small", `-9007199254740992`},
		{"minus zero", `-0`},
		{"leading zero", `01`},
		{"plus", `+1`},
		{"trailing comma", `[1,]`},
		{"trailing data", `{} {}`},
		{"unterminated", `{"a":1`},
		{"empty", ``},
		{"bare word", `nul`},
		{"control in string", "\"a\x01\""},
		{"bad escape", `"\x"`},
		{"single quotes", `{'a':1}`},
		{"too deep", strings.Repeat("[", dag.MaxDepth+1) + strings.Repeat("]", dag.MaxDepth+1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := dag.Canonicalize([]byte(c.in))
			if err == nil {
				t.Fatalf("Canonicalize(%q) succeeded, want a schema error", c.in)
			}
			if got := dag.CodeOf(err); got != dag.CodeSchema {
				t.Fatalf("code = %q, want schema (err %v)", got, err)
			}
			if !errors.Is(err, dag.ErrNotCanonical) {
				t.Errorf("error does not wrap ErrNotCanonical: %v", err)
			}
		})
	}
}

func TestCanonicalizeAccepts(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":[true,false,null]}`, `{"a":[true,false,null],"b":1}`},
		{" { \"a\" : \"\\u00e9\\/\" } ", `{"a":"é/"}`},
		{`"\u001F\u000a"`, `"\u001f\n"`},
		{`9007199254740991`, `9007199254740991`},
		{`-9007199254740991`, `-9007199254740991`},
		{`"\ud83d\ude00"`, `"😀"`},
		{"{\"\U0001F600\":1,\"\ufb01\":2}", "{\"\U0001F600\":1,\"\ufb01\":2}"}, // UTF-16 order: surrogates before U+FB01
		{`[]`, `[]`},
		{`{}`, `{}`},
		{strings.Repeat("[", dag.MaxDepth) + strings.Repeat("]", dag.MaxDepth), strings.Repeat("[", dag.MaxDepth) + strings.Repeat("]", dag.MaxDepth)},
	}
	for _, c := range cases {
		got, err := dag.Canonicalize([]byte(c.in))
		if err != nil {
			t.Errorf("Canonicalize(%q): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonicalize(%q) = %s, want %s", c.in, got, c.want)
		}
		if !dag.IsCanonical(got) {
			t.Errorf("IsCanonical(%s) = false for canonical output", got)
		}
		if c.in != c.want && dag.IsCanonical([]byte(c.in)) {
			t.Errorf("IsCanonical(%q) = true for non-canonical input", c.in)
		}
	}
}

// jsonValue generates JSON values within witan's profile: integers in the
// safe range, NFC strings (any Unicode after normalisation), nested objects
// and arrays.
func jsonValue() *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any { return genValue(t, 0) })
}

func genValue(t *rapid.T, depth int) any {
	kind := rapid.IntRange(0, 6).Draw(t, "kind")
	if depth > 3 && kind >= 5 {
		kind = 4
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		return rapid.Int64Range(-dag.MaxSafeInteger, dag.MaxSafeInteger).Draw(t, "int")
	case 3, 4:
		return nfc(rapid.String().Draw(t, "str"))
	case 5:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		a := make([]any, n)
		for i := range a {
			a[i] = genValue(t, depth+1)
		}
		return a
	default:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		m := make(map[string]any, n)
		for i := 0; i < n; i++ {
			m[nfc(rapid.String().Draw(t, "key"))] = genValue(t, depth+1)
		}
		return m
	}
}

// encodeLoosely writes v as valid but non-canonical JSON: members in a
// drawn order, white space, and escapes JCS would not write.
func encodeLoosely(t *rapid.T, v any) string {
	var b strings.Builder
	var enc func(v any)
	ws := func() {
		b.WriteString(rapid.SampledFrom([]string{"", " ", "\n", "\t "}).Draw(t, "ws"))
	}
	enc = func(v any) {
		ws()
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			keys = sortedKeys(keys)
			perm := rapid.Permutation(keys).Draw(t, "order")
			b.WriteByte('{')
			for i, k := range perm {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k) // escapes <, >, & as \u003c...: legal, not canonical
				b.Write(kb)
				ws()
				b.WriteByte(':')
				enc(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				enc(e)
			}
			b.WriteByte(']')
		default:
			vb, _ := json.Marshal(x)
			b.Write(vb)
		}
		ws()
	}
	enc(v)
	return b.String()
}

func TestPropCanonicalIdempotentAndOrderFree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := jsonValue().Draw(t, "value")
		a := encodeLoosely(t, v)
		b := encodeLoosely(t, v)
		ca, err := dag.Canonicalize([]byte(a))
		if err != nil {
			t.Fatalf("Canonicalize(%q): %v", a, err)
		}
		cb, err := dag.Canonicalize([]byte(b))
		if err != nil {
			t.Fatalf("Canonicalize(%q): %v", b, err)
		}
		if !bytes.Equal(ca, cb) {
			t.Fatalf("key order or white space changed the canonical form:\n%s\n%s", ca, cb)
		}
		again, err := dag.Canonicalize(ca)
		if err != nil || !bytes.Equal(again, ca) {
			t.Fatalf("not idempotent: %s -> %s (%v)", ca, again, err)
		}
		if !dag.IsCanonical(ca) {
			t.Fatalf("IsCanonical false on canonical %s", ca)
		}
		// The fast path must agree with the reference library.
		ref, err := jcs.Transform([]byte(a))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ref, ca) {
			t.Fatalf("differs from gowebpki/jcs:\n ours %s\n jcs  %s", ca, ref)
		}
	})
}

func TestPropAppendStringMatchesJCS(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := nfc(rapid.String().Draw(t, "s"))
		got := dag.AppendString(nil, s)
		raw, _ := json.Marshal(s)
		want, err := jcs.Transform(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, jcs %s", s, got, want)
		}
	})
}

func TestHashJSON(t *testing.T) {
	id, b, err := dag.HashJSON(map[string]any{"b": 2, "a": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a":"x","b":2}` {
		t.Fatalf("canonical %s", b)
	}
	if id != dag.Sum(b) {
		t.Fatal("id is not the hash of the canonical bytes")
	}
	if _, _, err := dag.HashJSON(map[string]any{"f": 0.5}); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("a float hashed: %v", err)
	}
}
