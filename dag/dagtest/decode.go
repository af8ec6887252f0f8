package dagtest

// A deliberately plain reference decoder for signed envelopes.

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
)

// NaiveDecoded is what NaiveDecode finds in an envelope.
type NaiveDecoded struct {
	Envelope  dag.Envelope
	Canonical []byte
	ID        dag.ID
	Signing   []byte // the canonical envelope without "sig"
}

// NaiveDecode is the reference dag.DecodeSigned is held against (by dag's
// tests and the fuzz targets in fuzz/): the rules of 30k §4 spelled out
// with dag.Canonicalize, encoding/json and the exported parsers, as plainly
// as possible and with no care for speed. Errors are dag.ProtocolErrors
// whose codes a decoder must match; the details are the reference's own.
func NaiveDecode(in []byte) (NaiveDecoded, error) {
	var r NaiveDecoded
	fail := func(detail string) (NaiveDecoded, error) {
		return NaiveDecoded{}, &dag.ProtocolError{Code: dag.CodeSchema, Detail: "reference: " + detail}
	}
	if len(in) > dag.MaxEnvelopeSize {
		return fail("too large")
	}
	canon, err := dag.Canonicalize(in)
	if err != nil {
		return NaiveDecoded{}, err
	}
	var m map[string]json.RawMessage
	if canon[0] != '{' || json.Unmarshal(canon, &m) != nil {
		return fail("not an object")
	}
	fields := []string{"v", "type", "session", "author", "parents", "body", "ts", "sig"}
	for k := range m {
		if !slices.Contains(fields, k) {
			return fail("unknown field " + k)
		}
	}
	for _, f := range fields {
		if m[f] == nil {
			return fail("missing " + f)
		}
	}
	str := func(raw json.RawMessage) (string, bool) {
		var s string
		return s, raw[0] == '"' && json.Unmarshal(raw, &s) == nil
	}
	e := &r.Envelope
	v, ok1 := str(m["v"])
	typ, ok2 := str(m["type"])
	ts, ok3 := str(m["ts"])
	session, ok4 := str(m["session"])
	author, ok5 := str(m["author"])
	sig, ok6 := str(m["sig"])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return fail("a member that must be a string is not")
	}
	e.V, e.Type, e.TS = v, dag.TxType(typ), ts
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
		return fail("ts is not RFC 3339 UTC")
	}
	if e.Session, err = dag.ParseID(session); err != nil {
		return NaiveDecoded{}, err
	}
	if e.Author, err = dag.ParseKey(author); err != nil {
		return NaiveDecoded{}, err
	}
	// The signature has one spelling: what RawURLEncoding writes for 64 bytes.
	if e.Sig, err = base64.RawURLEncoding.DecodeString(sig); err != nil || len(e.Sig) != 64 || base64.RawURLEncoding.EncodeToString(e.Sig) != sig {
		return fail("sig is not 64 bytes of base64url")
	}
	var parents []json.RawMessage
	if m["parents"][0] != '[' || json.Unmarshal(m["parents"], &parents) != nil {
		return fail("parents is not an array")
	}
	e.Parents = []dag.ID{}
	for _, raw := range parents {
		s, ok := str(raw)
		if !ok {
			return fail("a parent is not a string")
		}
		id, err := dag.ParseID(s)
		if err != nil {
			return NaiveDecoded{}, err
		}
		e.Parents = append(e.Parents, id)
	}
	e.Body = m["body"]
	if err := e.Check(); err != nil {
		return NaiveDecoded{}, err
	}
	delete(m, "sig")
	unsigned, err := json.Marshal(m)
	if err != nil {
		return fail(err.Error())
	}
	if r.Signing, err = dag.Canonicalize(unsigned); err != nil {
		return fail("the envelope without sig does not canonicalize: " + err.Error())
	}
	r.Canonical, r.ID = canon, dag.Sum(canon)
	return r, nil
}
