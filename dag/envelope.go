package dag

import (
	"encoding/json"
	"fmt"
	"time"
)

// ProtocolVersion is the envelope version of 30k v0.13 ("v":"0.10").
const ProtocolVersion = "0.10"

// TxType is an envelope's "type" (30k §4).
type TxType string

// The transaction types of 30k §4.
const (
	TxSessionCreate    TxType = "session.create"
	TxGroupCreate      TxType = "group.create"
	TxGroupUpdate      TxType = "group.update"
	TxBranchCreate     TxType = "branch.create"
	TxBranchAppend     TxType = "branch.append"
	TxBranchReveal     TxType = "branch.reveal"
	TxMROpen           TxType = "mr.open"
	TxBallotCast       TxType = "ballot.cast"
	TxMRDetermine      TxType = "mr.determine"
	TxContestOpen      TxType = "contest.open"
	TxContestRank      TxType = "contest.rank"
	TxContestDetermine TxType = "contest.determine"
	TxKeyRegister      TxType = "key.register"
	TxKeyRotate        TxType = "key.rotate"
	TxOpinionPublish   TxType = "opinion.publish"
)

var txTypes = []TxType{
	TxSessionCreate, TxGroupCreate, TxGroupUpdate, TxBranchCreate,
	TxBranchAppend, TxBranchReveal, TxMROpen, TxBallotCast, TxMRDetermine,
	TxContestOpen, TxContestRank, TxContestDetermine, TxKeyRegister,
	TxKeyRotate, TxOpinionPublish,
}

// TxTypes returns every transaction type of 30k §4 in the spec's order.
func TxTypes() []TxType { return append([]TxType(nil), txTypes...) }

// Known reports whether t is one of the spec's transaction types.
func (t TxType) Known() bool {
	for _, k := range txTypes {
		if k == t {
			return true
		}
	}
	return false
}

// MaxEnvelopeSize bounds the canonical size of one envelope. Larger content
// travels as objects referenced by hash.
const MaxEnvelopeSize = 1 << 20

// MaxParents bounds an envelope's parents.
const MaxParents = 1024

// Envelope is the only write format of 30k §4. Its fields are the spec's;
// Body is the canonical JSON of the body object, left for the layer that
// knows the transaction type to decode.
//
// An Envelope from DecodeEnvelope has passed every check that needs no
// context: schema, canonical form, a known type, well-formed ids and key, an
// RFC 3339 UTC ts, parents (non-empty unless session.create, no duplicate),
// and for session.create that session is the hash of the body. Its
// signature is checked by VerifySignature or a BatchVerifier.
type Envelope struct {
	V       string
	Type    TxType
	Session ID
	Author  Key
	Parents []ID
	Body    json.RawMessage
	TS      string
	Sig     []byte
}

// wireEnvelope is the JSON shape; pointers tell "absent" from zero. It is
// filled by set, member by member, without reflection: decoding is on the
// ingest path, beside signature verification.
type wireEnvelope struct {
	V       *string          `json:"v"`
	Type    *string          `json:"type"`
	Session *string          `json:"session"`
	Author  *string          `json:"author"`
	Parents *[]string        `json:"parents"`
	Body    *json.RawMessage `json:"body"`
	TS      *string          `json:"ts"`
	Sig     *string          `json:"sig"`
}

// DecodeEnvelope decodes and checks an envelope from untrusted bytes, which
// need not be canonical. It returns the envelope, its canonical bytes and
// its tx id (the SHA-256 of those bytes, signature included). Every error
// is a *ProtocolError with code schema.
func DecodeEnvelope(b []byte) (*Envelope, []byte, ID, error) {
	if len(b) > MaxEnvelopeSize {
		return nil, nil, ID{}, schemaErr("envelope is %d bytes, more than %d", len(b), MaxEnvelopeSize)
	}
	canon, err := Canonicalize(b)
	if err != nil {
		return nil, nil, ID{}, err
	}
	var w wireEnvelope
	if err := members(canon, w.set); err != nil {
		return nil, nil, ID{}, err
	}
	e, err := w.envelope()
	if err != nil {
		return nil, nil, ID{}, err
	}
	return e, canon, Sum(canon), nil
}

func (w *wireEnvelope) set(key string, raw []byte) error {
	str := func(dst **string) error {
		v, ok := stringValue(raw)
		if !ok {
			return schemaErr("envelope: %s is not a string", key)
		}
		*dst = &v
		return nil
	}
	switch key {
	case "v":
		return str(&w.V)
	case "type":
		return str(&w.Type)
	case "session":
		return str(&w.Session)
	case "author":
		return str(&w.Author)
	case "ts":
		return str(&w.TS)
	case "sig":
		return str(&w.Sig)
	case "parents":
		a, ok := stringArray(raw)
		if !ok {
			return schemaErr("envelope: parents is not an array of strings")
		}
		if a == nil {
			a = []string{}
		}
		w.Parents = &a
	case "body":
		r := json.RawMessage(raw)
		w.Body = &r
	default:
		return schemaErr("envelope: unknown field %q", truncate(key))
	}
	return nil
}

func (w *wireEnvelope) envelope() (*Envelope, error) {
	switch {
	case w.V == nil:
		return nil, schemaErr("envelope: missing v")
	case w.Type == nil:
		return nil, schemaErr("envelope: missing type")
	case w.Session == nil:
		return nil, schemaErr("envelope: missing session")
	case w.Author == nil:
		return nil, schemaErr("envelope: missing author")
	case w.Parents == nil:
		return nil, schemaErr("envelope: missing parents")
	case w.Body == nil:
		return nil, schemaErr("envelope: missing body")
	case w.TS == nil:
		return nil, schemaErr("envelope: missing ts")
	case w.Sig == nil:
		return nil, schemaErr("envelope: missing sig")
	}
	e := &Envelope{V: *w.V, Type: TxType(*w.Type), TS: *w.TS, Body: *w.Body}
	var err error
	if e.Session, err = ParseID(*w.Session); err != nil {
		return nil, schemaErr("envelope: session: %v", err)
	}
	if e.Author, err = ParseKey(*w.Author); err != nil {
		return nil, schemaErr("envelope: author: %v", err)
	}
	if e.Sig, err = b64.DecodeString(*w.Sig); err != nil || len(e.Sig) != 64 {
		return nil, schemaErr("envelope: sig is not 64 bytes of base64url")
	}
	e.Parents = make([]ID, len(*w.Parents))
	for i, p := range *w.Parents {
		if e.Parents[i], err = ParseID(p); err != nil {
			return nil, schemaErr("envelope: parents[%d]: %v", i, err)
		}
	}
	return e, e.check(false)
}

// Check runs the context-free checks of DecodeEnvelope on e. Build
// envelopes in code, then Check (Seal does) before signing.
func (e *Envelope) Check() error { return e.check(true) }

// check runs the checks; checkBody is false when the body is already known
// to be canonical (it came out of a canonical envelope).
func (e *Envelope) check(checkBody bool) error {
	if e.V != ProtocolVersion {
		return schemaErr("envelope: v is %q, want %q", e.V, ProtocolVersion)
	}
	if !e.Type.Known() {
		return schemaErr("envelope: unknown type %q", e.Type)
	}
	if !e.Session.Valid() || !e.Author.Valid() {
		return schemaErr("envelope: zero session or author")
	}
	if len(e.Body) == 0 || e.Body[0] != '{' {
		return schemaErr("envelope: body is not an object")
	}
	if checkBody && !IsCanonical(e.Body) {
		return schemaErr("envelope: body is not canonical json")
	}
	if err := CheckTimestamp(e.TS); err != nil {
		return err
	}
	if e.Type == TxSessionCreate {
		if len(e.Parents) != 0 {
			return schemaErr("envelope: session.create has parents")
		}
		if want := Sum(e.Body); e.Session != want {
			return schemaErr("envelope: session.create's session is %s, the hash of its body is %s", e.Session, want)
		}
	} else if len(e.Parents) == 0 {
		return schemaErr("envelope: parents are empty (allowed only for session.create)")
	}
	if len(e.Parents) > MaxParents {
		return schemaErr("envelope: %d parents, more than %d", len(e.Parents), MaxParents)
	}
	for i, p := range e.Parents {
		if !p.Valid() {
			return schemaErr("envelope: zero parent id")
		}
		if i >= 16 {
			break // many parents: checked with a map below
		}
		for _, q := range e.Parents[:i] {
			if p == q {
				return schemaErr("envelope: duplicate parent %s", p)
			}
		}
	}
	if len(e.Parents) > 16 {
		seen := make(map[ID]struct{}, len(e.Parents))
		for _, p := range e.Parents {
			if _, dup := seen[p]; dup {
				return schemaErr("envelope: duplicate parent %s", p)
			}
			seen[p] = struct{}{}
		}
	}
	return nil
}

// CheckTimestamp checks that ts is an RFC 3339 time in UTC, written with
// "Z". Times are informational in 30k; this checks their form only.
func CheckTimestamp(ts string) error {
	if len(ts) < len("2006-01-02T15:04:05Z") || ts[len(ts)-1] != 'Z' {
		return schemaErr("ts %q is not RFC 3339 UTC (…Z)", truncate(ts))
	}
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		return schemaErr("ts %q: %v", truncate(ts), err)
	}
	return nil
}

// appendWithoutSig appends the canonical JSON of e without "sig", the
// message that is signed. Members are written in RFC 8785 order by hand:
// every value is a plain ASCII id, key or string, or the already canonical
// body.
func (e *Envelope) appendCanonical(dst []byte, withSig bool) []byte {
	dst = append(dst, `{"author":`...)
	dst = AppendString(dst, e.Author.String())
	dst = append(dst, `,"body":`...)
	dst = append(dst, e.Body...)
	dst = append(dst, `,"parents":[`...)
	for i, p := range e.Parents {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, p.String()...)
		dst = append(dst, '"')
	}
	dst = append(dst, `],"session":`...)
	dst = AppendString(dst, e.Session.String())
	if withSig {
		dst = append(dst, `,"sig":`...)
		dst = AppendString(dst, b64.EncodeToString(e.Sig))
	}
	dst = append(dst, `,"ts":`...)
	dst = AppendString(dst, e.TS)
	dst = append(dst, `,"type":`...)
	dst = AppendString(dst, string(e.Type))
	dst = append(dst, `,"v":`...)
	dst = AppendString(dst, e.V)
	return append(dst, '}')
}

// SigningBytes returns JCS(envelope without "sig"), the message the author
// signs after the domain DomainEnvelope.
func (e *Envelope) SigningBytes() []byte {
	return e.appendCanonical(make([]byte, 0, e.sizeHint()), false)
}

// Canonical returns the envelope's canonical JSON, signature included.
func (e *Envelope) Canonical() []byte { return e.appendCanonical(make([]byte, 0, e.sizeHint()), true) }

// sizeHint is an upper estimate of the canonical size, so that encoding
// allocates once.
func (e *Envelope) sizeHint() int {
	return 256 + len(e.Body) + len(e.TS) + len(e.Type) + 74*len(e.Parents)
}

// ID returns the tx id: the SHA-256 of Canonical.
func (e *Envelope) ID() ID { return Sum(e.Canonical()) }

// Seal checks e, signs it with s (setting Author and Sig) and returns its
// canonical bytes and tx id.
func (e *Envelope) Seal(s *Signer) ([]byte, ID, error) {
	e.Author = s.Key()
	if e.V == "" {
		e.V = ProtocolVersion
	}
	if err := e.Check(); err != nil {
		return nil, ID{}, err
	}
	e.Sig = s.Sign(DomainEnvelope, e.SigningBytes())
	b := e.Canonical()
	return b, Sum(b), nil
}

// VerifySignature checks e's signature under witan's rule (see Verify). A
// failure is a *ProtocolError with code bad_signature.
func (e *Envelope) VerifySignature() error {
	if !Verify(e.Author, DomainEnvelope, e.SigningBytes(), e.Sig) {
		return &ProtocolError{Code: CodeBadSignature, Detail: fmt.Sprintf("envelope signature by %s does not verify", e.Author)}
	}
	return nil
}

// MarshalJSON writes the envelope's canonical JSON.
func (e *Envelope) MarshalJSON() ([]byte, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	return e.Canonical(), nil
}

// UnmarshalJSON decodes with DecodeEnvelope.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	d, _, _, err := DecodeEnvelope(b)
	if err != nil {
		return err
	}
	*e = *d
	return nil
}
