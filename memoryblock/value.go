package memoryblock

import (
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/witan-dev/witan/dag"
)

// Presence is the state of one field in a block. Omitted, null and empty
// are three different things: omission is a permission decision (or the
// writer said nothing), null is a value the writer chose, and an empty
// string, array or object is content. Code that reads a block asks for the
// presence, never for a zero value.
type Presence uint8

const (
	// Omitted: the key is absent. It is the zero Presence.
	Omitted Presence = iota
	// Null: the key is present with the JSON value null.
	Null
	// Present: the key is present with a value other than null, which may
	// be empty ("", [] or {}).
	Present
)

func (p Presence) String() string {
	switch p {
	case Omitted:
		return "omitted"
	case Null:
		return "null"
	case Present:
		return "present"
	}
	return "presence(" + strconv.Itoa(int(p)) + ")"
}

// Value is the content of one field other than lineage: a JSON value in
// canonical form (witan's profile: RFC 8785, NFC strings, integers only),
// with its Presence. The zero Value is Omitted. Values are immutable and
// comparable with ==.
type Value struct {
	presence Presence
	json     string // canonical JSON; "null" when Null, "" when Omitted
}

// NullValue returns the Value that is present and null.
func NullValue() Value { return Value{presence: Null, json: "null"} }

// Text returns the Value that is the JSON string s. s must be valid UTF-8 in
// Unicode NFC; anything else is an *Error with code BLOCK_MALFORMED (witan
// never normalises text it did not write: that would change what was said).
func Text(s string) (Value, error) {
	if !utf8.ValidString(s) {
		return Value{}, errorf(CodeBlockMalformed, "", "text is not valid UTF-8")
	}
	if !norm.NFC.IsNormalString(s) {
		return Value{}, errorf(CodeBlockMalformed, "", "text %s is not Unicode NFC", quote(s))
	}
	return Value{presence: Present, json: string(dag.AppendString(nil, s))}, nil
}

// Int returns the Value that is the JSON integer n. |n| must be at most
// dag.MaxSafeInteger.
func Int(n int64) (Value, error) {
	if n > dag.MaxSafeInteger || n < -dag.MaxSafeInteger {
		return Value{}, errorf(CodeBlockMalformed, "", "integer %d is outside ±(2^53-1)", n)
	}
	return Value{presence: Present, json: strconv.FormatInt(n, 10)}, nil
}

// ParseValue returns the Value whose JSON text is raw, in canonical form.
// The JSON null gives the Null value. raw must be JSON under witan's
// profile (see dag.Canonicalize); anything else is an *Error with code
// BLOCK_MALFORMED.
func ParseValue(raw []byte) (Value, error) {
	c, err := dag.Canonicalize(raw)
	if err != nil {
		return Value{}, &Error{Code: CodeBlockMalformed, Detail: "value: " + err.Error(), Err: err}
	}
	return valueOfCanonical(string(c)), nil
}

// valueOfCanonical wraps text already known to be canonical.
func valueOfCanonical(c string) Value {
	if c == "null" {
		return NullValue()
	}
	return Value{presence: Present, json: c}
}

// MustText is Text for constants and tests; it panics on error.
func MustText(s string) Value { return must(Text(s)) }

// MustValue is ParseValue for constants and tests; it panics on error.
func MustValue(raw string) Value { return must(ParseValue([]byte(raw))) }

func must(v Value, err error) Value {
	if err != nil {
		panic(err)
	}
	return v
}

// Presence reports whether v is omitted, null or present.
func (v Value) Presence() Presence { return v.presence }

// IsOmitted reports whether v is Omitted.
func (v Value) IsOmitted() bool { return v.presence == Omitted }

// IsNull reports whether v is present and null.
func (v Value) IsNull() bool { return v.presence == Null }

// IsPresent reports whether v is present and not null.
func (v Value) IsPresent() bool { return v.presence == Present }

// IsEmpty reports whether v is present and empty: "", [] or {}. An empty
// value is content, not omission.
func (v Value) IsEmpty() bool {
	return v.presence == Present && (v.json == `""` || v.json == "[]" || v.json == "{}")
}

// JSON returns v's canonical JSON text: nil when v is Omitted (there is no
// text for an absent key), "null" when it is Null.
func (v Value) JSON() []byte {
	if v.presence == Omitted {
		return nil
	}
	return []byte(v.json)
}

// AsText returns the string v holds, and false when v is not a JSON string.
func (v Value) AsText() (string, bool) {
	if v.presence != Present || v.json == "" || v.json[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal([]byte(v.json), &s); err != nil {
		return "", false // unreachable for canonical text
	}
	return s, true
}

// String returns v's JSON text, or "<omitted>" for an omitted value.
func (v Value) String() string {
	if v.presence == Omitted {
		return "<omitted>"
	}
	return v.json
}

// Parents is the lineage field: the block hashes of the blocks a block
// descends from. Like every field it is omitted, null, or present; a
// present lineage may be empty (a root). Only a present lineage names
// parents. The zero Parents is Omitted. Parents values are immutable and
// comparable with ==.
type Parents struct {
	presence Presence
	digests  string // the parents' SHA-256 digests, 32 bytes each, in order
}

// MaxParents bounds how many parents one lineage may name.
const MaxParents = 1024

// ParentsOf returns the present lineage naming ids, in the order given. An
// empty list is a present, empty lineage (a root block). Every id must be
// valid (non-zero), none may repeat, and there may be at most MaxParents;
// otherwise the error is an *Error with code BLOCK_MALFORMED.
func ParentsOf(ids ...dag.ID) (Parents, error) {
	if len(ids) > MaxParents {
		return Parents{}, errorf(CodeBlockMalformed, Lineage, "lineage names %d parents, more than %d", len(ids), MaxParents)
	}
	var b strings.Builder
	b.Grow(len(ids) * sha256.Size)
	seen := make(map[dag.ID]struct{}, len(ids))
	for i, id := range ids {
		if !id.Valid() {
			return Parents{}, errorf(CodeBlockMalformed, Lineage, "lineage[%d] is the zero id", i)
		}
		if _, dup := seen[id]; dup {
			return Parents{}, errorf(CodeBlockMalformed, Lineage, "lineage names %s twice", id)
		}
		seen[id] = struct{}{}
		d := id.Digest()
		b.Write(d[:])
	}
	return Parents{presence: Present, digests: b.String()}, nil
}

// MustParents is ParentsOf for constants and tests; it panics on error.
func MustParents(ids ...dag.ID) Parents {
	p, err := ParentsOf(ids...)
	if err != nil {
		panic(err)
	}
	return p
}

// NullParents returns the lineage that is present and null.
func NullParents() Parents { return Parents{presence: Null} }

// Presence reports whether the lineage is omitted, null or present.
func (p Parents) Presence() Presence { return p.presence }

// Len returns how many parents the lineage names (0 unless present).
func (p Parents) Len() int { return len(p.digests) / sha256.Size }

// At returns the i-th parent, 0 <= i < Len.
func (p Parents) At(i int) dag.ID {
	var d [sha256.Size]byte
	copy(d[:], p.digests[i*sha256.Size:])
	return dag.IDFromDigest(d)
}

// IDs returns the parents in lineage order: nil unless the lineage is
// present, and a non-nil empty slice for a present, empty lineage.
func (p Parents) IDs() []dag.ID {
	if p.presence != Present {
		return nil
	}
	out := make([]dag.ID, p.Len())
	for i := range out {
		out[i] = p.At(i)
	}
	return out
}

// Value returns the lineage as a field Value: a JSON array of
// "sha256:<hex>" strings when present.
func (p Parents) Value() Value {
	switch p.presence {
	case Null:
		return NullValue()
	case Present:
		return Value{presence: Present, json: string(p.appendJSON(nil))}
	}
	return Value{}
}

func (p Parents) appendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i := 0; i < p.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, p.At(i).String()...)
		dst = append(dst, '"')
	}
	return append(dst, ']')
}

// String returns the lineage's JSON text, or "<omitted>".
func (p Parents) String() string { return p.Value().String() }
