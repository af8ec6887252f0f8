package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/witan-dev/witan/dag"
)

// ErrSchema is wrapped by every *dag.ProtocolError with code schema that
// this package returns, so callers can tell a malformed rule reference or
// ballot body (errors.Is(err, ErrSchema)) from an unknown or unsupported
// rule kind (dag.CodeOf(err)).
var ErrSchema = errors.New("rules: malformed input")

func schemaf(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "rules: " + fmt.Sprintf(format, args...), Err: ErrSchema}
}

// Ref is a rule reference as it appears on the wire (30k §4):
//
//	{"kind":"...","version":1,"params":{},"min_notice":int|null,"text_ref":"sha256:..."}
//
// A Ref is only data; Compile checks it against the kind's parameters and
// turns it into a Rule that can be evaluated.
type Ref struct {
	// Kind names the rule kind, for example "threshold_vote".
	Kind string
	// Version is the kind's version; witan knows version 1 of each kind.
	Version int64
	// Params is the kind's parameters, a JSON object in canonical form.
	Params json.RawMessage
	// MinNotice is the notice period in seconds (D42), or nil for none.
	MinNotice *int64
	// TextRef names the plain-language statute text of the rule.
	TextRef dag.ID
}

// ParseRef decodes a rule reference from JSON. The text must satisfy
// witan's canonical-JSON profile (dag.Canonicalize: valid UTF-8, NFC, no
// duplicate keys, integers only within ±(2^53-1)); it need not already be
// canonical. Every member of the shape above is required except
// min_notice, which may be null or absent; unknown members are refused.
// Errors carry code schema. ParseRef does not look at the kind: Compile
// does.
func ParseRef(b []byte) (Ref, error) {
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return Ref{}, schemaf("rule reference: %v", err)
	}
	f, err := object(canon, "rule reference")
	if err != nil {
		return Ref{}, err
	}
	if err := f.only("kind", "version", "params", "min_notice", "text_ref"); err != nil {
		return Ref{}, err
	}
	var r Ref
	if r.Kind, err = f.str("kind", true); err != nil {
		return Ref{}, err
	}
	if r.Kind == "" {
		return Ref{}, schemaf("rule reference: empty kind")
	}
	v, err := f.uint("version", true)
	if err != nil {
		return Ref{}, err
	}
	if v < 1 {
		return Ref{}, schemaf("rule reference: version must be at least 1")
	}
	r.Version = int64(v)
	p, ok := f.raw["params"]
	if !ok {
		return Ref{}, schemaf("rule reference: params missing")
	}
	if len(p) == 0 || p[0] != '{' {
		return Ref{}, schemaf("rule reference: params must be an object")
	}
	r.Params = append(json.RawMessage(nil), p...)
	if f.present("min_notice") {
		n, err := f.uint("min_notice", false)
		if err != nil {
			return Ref{}, err
		}
		n64 := int64(n)
		r.MinNotice = &n64
	}
	s, err := f.str("text_ref", true)
	if err != nil {
		return Ref{}, err
	}
	if r.TextRef, err = dag.ParseID(s); err != nil {
		return Ref{}, schemaf("rule reference: text_ref: %v", err)
	}
	return r, nil
}

// MarshalJSON writes r in canonical JSON (RFC 8785), with min_notice null
// when it is unset. Note that json.Marshal HTML-escapes what a Marshaler
// returns ("&" becomes "\u0026"); call MarshalJSON itself, or
// dag.Canonicalize the result, when the bytes must be canonical.
func (r Ref) MarshalJSON() ([]byte, error) {
	if !r.TextRef.Valid() {
		return nil, schemaf("rule reference: zero text_ref")
	}
	params := r.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	w := struct {
		Kind      string          `json:"kind"`
		MinNotice *int64          `json:"min_notice"`
		Params    json.RawMessage `json:"params"`
		TextRef   dag.ID          `json:"text_ref"`
		Version   int64           `json:"version"`
	}{r.Kind, r.MinNotice, params, r.TextRef, r.Version}
	return dag.Marshal(w)
}

// UnmarshalJSON implements json.Unmarshaler with ParseRef.
func (r *Ref) UnmarshalJSON(b []byte) error {
	p, err := ParseRef(b)
	if err != nil {
		return err
	}
	*r = p
	return nil
}

// fields is one decoded JSON object whose text already passed the
// canonical-JSON profile, so it has no duplicate keys and every number in
// it is an integer literal.
type fields struct {
	what string
	raw  map[string]json.RawMessage
}

func object(b []byte, what string) (fields, error) {
	if len(b) == 0 || b[0] != '{' {
		return fields{}, schemaf("%s must be a JSON object", what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fields{}, schemaf("%s: %v", what, err)
	}
	return fields{what: what, raw: m}, nil
}

// only refuses members other than the named ones. It reports the smallest
// unknown key so that the error does not depend on map order.
func (f fields) only(keys ...string) error {
	bad := ""
	for k := range f.raw {
		known := false
		for _, want := range keys {
			if k == want {
				known = true
				break
			}
		}
		if !known && (bad == "" || k < bad) {
			bad = k
		}
	}
	if bad != "" {
		return schemaf("%s: unknown member %q", f.what, bad)
	}
	return nil
}

// present reports whether key is there and not null.
func (f fields) present(key string) bool {
	v, ok := f.raw[key]
	return ok && string(v) != "null"
}

func (f fields) str(key string, required bool) (string, error) {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		if required {
			return "", schemaf("%s: %s missing", f.what, key)
		}
		return "", nil
	}
	if v[0] != '"' {
		return "", schemaf("%s: %s must be a string", f.what, key)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", schemaf("%s: %s: %v", f.what, key, err)
	}
	return s, nil
}

// uint reads a non-negative integer. The canonical profile already bounds
// it by 2^53-1.
func (f fields) uint(key string, required bool) (uint64, error) {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		if required {
			return 0, schemaf("%s: %s missing", f.what, key)
		}
		return 0, nil
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || n > dag.MaxSafeInteger {
		return 0, schemaf("%s: %s must be a non-negative integer, got %.40s", f.what, key, v)
	}
	return n, nil
}

func (f fields) time(key string) (time.Time, error) {
	s, err := f.str(key, true)
	if err != nil {
		return time.Time{}, err
	}
	if err := dag.CheckTimestamp(s); err != nil {
		return time.Time{}, schemaf("%s: %s: %v", f.what, key, err)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, schemaf("%s: %s: %v", f.what, key, err)
	}
	return t.UTC(), nil
}
