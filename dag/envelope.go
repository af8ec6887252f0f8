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

// MaxEntryObjects bounds the objects that travel with one entry: the
// objects its body names, and those they name, that a replica needs to
// admit it (a session.create's seed snapshot and its nodes, a change and
// the nodes it adds). sync's wire carries at most this many with an item
// (sync.MaxItemObjects), so an entry that needs more could never reach a
// peer; a replica refuses a client's session.create that names more.
const MaxEntryObjects = 256

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

// wireEnvelope holds the raw JSON values of an envelope's members, slices
// of the canonical bytes (nil when absent). It is filled by set, member by
// member, without reflection and without allocating: decoding is on the
// ingest path, beside signature verification.
type wireEnvelope struct {
	v, typ, session, author, parents, body, ts, sig []byte
}

// DecodeEnvelope decodes and checks an envelope from untrusted bytes, which
// need not be canonical. It returns the envelope, its canonical bytes and
// its tx id (the SHA-256 of those bytes, signature included). Every error
// is a *ProtocolError with code schema.
func DecodeEnvelope(b []byte) (*Envelope, []byte, ID, error) {
	s, err := DecodeSigned(b)
	if err != nil {
		return nil, nil, ID{}, err
	}
	return s.Envelope, s.Canonical, s.ID, nil
}

// SignedEnvelope is an envelope as DecodeSigned returns it: with its
// canonical bytes, its tx id, and where in those bytes its signature is,
// so that the bytes the signature covers are cut from the canonical form
// instead of being encoded again. It describes Canonical: a change made
// to Envelope afterwards is not reflected in SigningBytes.
type SignedEnvelope struct {
	Envelope  *Envelope
	Canonical []byte
	ID        ID
	cut       [2]int // Canonical[cut[0]:cut[1]] is the "sig" member and one comma beside it
}

// DecodeSigned is DecodeEnvelope for the ingest path: the same checks and
// errors, and a result that also gives the signed message cheaply
// (SigningBytes, BatchVerifier.AddSigned).
func DecodeSigned(b []byte) (SignedEnvelope, error) {
	if len(b) > MaxEnvelopeSize {
		return SignedEnvelope{}, schemaErr("envelope is %d bytes, more than %d", len(b), MaxEnvelopeSize)
	}
	if s, ok := decodeCanonical(b); ok {
		return s, nil
	}
	return decodeGeneral(b)
}

// decodeGeneral is DecodeSigned for any spelling of an envelope:
// canonicalize, then read the members. It is the only decoder that refuses
// (decodeCanonical gives up on anything unusual and leaves the verdict and
// its wording to decodeGeneral).
func decodeGeneral(b []byte) (SignedEnvelope, error) {
	canon, err := Canonicalize(b)
	if err != nil {
		return SignedEnvelope{}, err
	}
	var w wireEnvelope
	if err := members(canon, w.set); err != nil {
		return SignedEnvelope{}, err
	}
	e, err := w.envelope()
	if err != nil {
		return SignedEnvelope{}, err
	}
	return SignedEnvelope{Envelope: e, Canonical: canon, ID: Sum(canon), cut: sigCut(canon, w.sig)}, nil
}

// sigCut returns the span of the "sig" member in canon, whose value is
// raw, a subslice of canon (members hands out such subslices), together
// with the comma that separates it from its neighbour. Canonical JSON has
// no whitespace, so the member is `"sig":` and the value; removing it with
// one comma leaves the canonical form of the other members, which is what
// the signature covers (30k §4).
func sigCut(canon, raw []byte) [2]int {
	start := cap(canon) - cap(raw) // raw = canon[start:end]
	end := start + len(raw)
	key := start - len(`"sig":`)
	if key > 1 { // a member before it: take the comma before
		return [2]int{key - 1, end}
	}
	if end < len(canon) && canon[end] == ',' { // the first member: take the comma after
		return [2]int{key, end + 1}
	}
	return [2]int{key, end}
}

// AppendSigningBytes appends the bytes the signature covers to dst: the
// canonical JSON of the envelope without "sig" (Envelope.SigningBytes),
// cut from Canonical.
func (s SignedEnvelope) AppendSigningBytes(dst []byte) []byte {
	return append(append(dst, s.Canonical[:s.cut[0]]...), s.Canonical[s.cut[1]:]...)
}

// SigningBytes returns the bytes the signature covers (see
// AppendSigningBytes).
func (s SignedEnvelope) SigningBytes() []byte {
	return s.AppendSigningBytes(make([]byte, 0, len(s.Canonical)-(s.cut[1]-s.cut[0])))
}

func (w *wireEnvelope) set(key, raw []byte) error {
	switch string(key) {
	case "v":
		w.v = raw
	case "type":
		w.typ = raw
	case "session":
		w.session = raw
	case "author":
		w.author = raw
	case "ts":
		w.ts = raw
	case "sig":
		w.sig = raw
	case "parents":
		w.parents = raw
	case "body":
		w.body = raw
	default:
		return schemaErr("envelope: unknown field %q", truncate(string(key)))
	}
	return nil
}

func (w *wireEnvelope) envelope() (*Envelope, error) {
	for _, m := range []struct {
		name string
		raw  []byte
	}{{"v", w.v}, {"type", w.typ}, {"session", w.session}, {"author", w.author}, {"parents", w.parents}, {"body", w.body}, {"ts", w.ts}, {"sig", w.sig}} {
		if m.raw == nil {
			return nil, schemaErr("envelope: missing %s", m.name)
		}
	}
	str := func(name string, raw []byte) ([]byte, error) {
		v, ok := stringBytes(raw)
		if !ok {
			return nil, schemaErr("envelope: %s is not a string", name)
		}
		return v, nil
	}
	e := &Envelope{Body: json.RawMessage(w.body)}
	v, err := str("v", w.v)
	if err != nil {
		return nil, err
	}
	if string(v) == ProtocolVersion {
		e.V = ProtocolVersion
	} else {
		e.V = string(v)
	}
	t, err := str("type", w.typ)
	if err != nil {
		return nil, err
	}
	e.Type = knownTxType(t)
	ts, err := str("ts", w.ts)
	if err != nil {
		return nil, err
	}
	e.TS = string(ts)
	sess, err := str("session", w.session)
	if err != nil {
		return nil, err
	}
	if e.Session, err = parseIDBytes(sess); err != nil {
		return nil, schemaErr("envelope: session: %v", err)
	}
	author, err := str("author", w.author)
	if err != nil {
		return nil, err
	}
	if e.Author, err = parseKeyBytes(author); err != nil {
		return nil, schemaErr("envelope: author: %v", err)
	}
	sig, err := str("sig", w.sig)
	if err != nil {
		return nil, err
	}
	e.Sig = make([]byte, 64)
	if len(sig) != 86 {
		return nil, schemaErr("envelope: sig is not 64 bytes of base64url")
	}
	if n, err := b64.Decode(e.Sig, sig); err != nil || n != 64 {
		return nil, schemaErr("envelope: sig is not 64 bytes of base64url")
	}
	if e.Parents, err = idArray(w.parents); err != nil {
		return nil, err
	}
	return e, e.check(false)
}

// knownTxType returns t as the spec's constant when it is one (no
// allocation), else as a new string (check refuses it).
func knownTxType(t []byte) TxType {
	for _, k := range txTypes {
		if string(k) == string(t) {
			return k
		}
	}
	return TxType(t)
}

// idArray parses raw, a validated JSON array, as an array of ids.
func idArray(raw []byte) ([]ID, error) {
	if len(raw) < 2 || raw[0] != '[' {
		return nil, schemaErr("envelope: parents is not an array of strings")
	}
	n := 0
	for _, c := range raw {
		if c == ',' {
			n++
		}
	}
	out := make([]ID, 0, n+1)
	s := scanner{b: raw, prof: profileRFC8785, i: 1}
	for {
		if s.i >= len(raw) {
			return nil, schemaErr("envelope: parents is not an array of strings")
		}
		switch raw[s.i] {
		case ']':
			return out, nil
		case ',':
			s.i++
			continue
		case '"':
			v, _, err := s.strBytes()
			if err != nil {
				return nil, err
			}
			id, err := parseIDBytes(v)
			if err != nil {
				return nil, schemaErr("envelope: parents[%d]: %v", len(out), err)
			}
			out = append(out, id)
		default:
			return nil, schemaErr("envelope: parents is not an array of strings")
		}
	}
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
	if plainUTC(ts) {
		return nil
	}
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		return schemaErr("ts %q: %v", truncate(ts), err)
	}
	return nil
}

// plainUTC reports whether ts is a real date and time written
// "2006-01-02T15:04:05Z", with or without a fraction of a second
// (".5", ".123456789", any number of digits). time.Parse reads exactly this
// form on its own fast path and accepts it, so CheckTimestamp need not call
// it; for anything else it does.
func plainUTC(ts string) bool {
	if len(ts) < len("2006-01-02T15:04:05Z") || ts[len(ts)-1] != 'Z' || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' {
		return false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(ts[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		uint(num(11, 2)) > 23 || uint(num(14, 2)) > 59 || uint(num(17, 2)) > 59 {
		return false
	}
	frac := ts[len("2006-01-02T15:04:05") : len(ts)-1] // between the seconds and "Z"
	if len(frac) == 0 {
		return true
	}
	if len(frac) < 2 || frac[0] != '.' {
		return false
	}
	return allDigits(frac[1:])
}

// allDigits reports whether s is all decimal digits.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// daysIn returns the number of days of month (1 to 12) in year, of the
// proleptic Gregorian calendar, as package time counts them.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
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
