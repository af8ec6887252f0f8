package opinion

// The fast path of DecodeCanonical: the top level of a canonical body is
// split member by member without reflection; strings, null, empty arrays
// and a subject of the usual shape are read in place, and only the
// members that hold more (a disclosure, quotes, findings, ...) go through
// encoding/json. The result is the same wireOpinion the reference decoder
// (decodeReference) builds; TestFastDecode checks both on every vector
// and on fuzzed bodies.

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// fastWire fills a wireOpinion from a canonical body.
func fastWire(b []byte) (*wireOpinion, error) {
	w := &wireOpinion{}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("not an object")
	}
	s := keyScan{b: b, i: 1}
	if b[1] == '}' {
		if len(b) != 2 {
			return nil, fmt.Errorf("trailing bytes")
		}
		return w, nil
	}
	for {
		start := s.i + 1
		if err := s.str(); err != nil {
			return nil, err
		}
		// The name stays bytes: set switches on string(key), which
		// Go compares without a copy (a string here cost an allocation
		// per member, 6 of an opinion's ~21 in a derivation).
		key := b[start : s.i-1]
		if s.i >= len(b) || b[s.i] != ':' {
			return nil, fmt.Errorf("expected ':'")
		}
		s.i++
		vs := s.i
		if err := s.value(false, 1); err != nil {
			return nil, err
		}
		if err := w.set(key, b[vs:s.i]); err != nil {
			return nil, err
		}
		if s.i >= len(b) {
			return nil, fmt.Errorf("unexpected end")
		}
		c := b[s.i]
		s.i++
		if c == '}' {
			break
		}
		if c != ',' {
			return nil, fmt.Errorf("expected ',' or '}'")
		}
	}
	if s.i != len(b) {
		return nil, fmt.Errorf("trailing bytes")
	}
	return w, nil
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// set decodes one top-level member.
func (w *wireOpinion) set(key []byte, raw []byte) error {
	switch string(key) {
	case "subject":
		if isNull(raw) {
			return nil
		}
		if fastSubject(raw, &w.subj) {
			w.Subject = &w.subj
			return nil
		}
		return sub(raw, &w.Subject)
	case "author_kind":
		return optEnum(raw, &w.AuthorKind, &w.strs[0], "author_kind", AuthorKinds)
	case "on_behalf_of":
		return optString(raw, &w.OnBehalfOf, &w.strs[1], "on_behalf_of")
	case "stance":
		return optEnum(raw, &w.Stance, &w.strs[2], "stance", Stances)
	case "summary":
		return optString(raw, &w.Summary, &w.strs[3], "summary")
	case "body":
		return optString(raw, &w.Body, &w.strs[4], "body")
	case "replies_to":
		return optString(raw, &w.RepliesTo, &w.strs[5], "replies_to")
	case "corrects":
		return optString(raw, &w.Corrects, &w.strs[6], "corrects")
	case "proposes":
		return list(raw, &w.Proposes)
	case "evidence":
		return list(raw, &w.Evidence)
	case "quotes":
		return list(raw, &w.Quotes)
	case "findings":
		return list(raw, &w.Findings)
	case "disclosure":
		return sub(raw, &w.Disclosure)
	case "method":
		return sub(raw, &w.Method)
	case "formalization":
		return sub(raw, &w.Formalization)
	case "mirror":
		return sub(raw, &w.Mirror)
	case "attest":
		w.Attest = raw
	case "complaint":
		w.Complaint = raw
	case "estimate":
		w.Estimate = raw
	case "exchange":
		w.Exchange = raw
	case "feasibility":
		w.Feasibility = raw
	case "forecast":
		w.Forecast = raw
	case "jurisdiction_choice":
		w.JurisdictionChoice = raw
	case "ranking":
		w.Ranking = raw
	case "resolution":
		w.Resolution = raw
	case "responds_to":
		w.RespondsTo = raw
	case "translation":
		w.Translation = raw
	default:
		return fmt.Errorf("unknown member %q", dag.Trunc(string(key)))
	}
	return nil
}

// optString reads a JSON string (or null) into *into and points *dst at
// it. A string without escapes is copied out of the body without
// encoding/json. (It once shared the body's memory through
// unsafe.String; measured end to end that saved nothing: S11 derivation
// with 100k opinions at 200k envelopes, 2026-12-01, load ~25, 4
// derivations each, 121k ballots/cpu-s with unsafe against 155k with the
// copies, 6 more allocations an opinion. So no unsafe here.)
func optString(raw []byte, dst **string, into *string, key string) error {
	if isNull(raw) {
		*dst = nil
		return nil
	}
	if len(raw) > 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		*into = string(raw[1 : len(raw)-1])
		*dst = into
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	*dst = into
	return nil
}

// optEnum is optString for a member whose usual values are the names in
// set: such a value is the set's own string, not a copy of the body's
// bytes (one allocation fewer per member). Any other value is read as
// optString reads it, and judged later as before.
func optEnum(raw []byte, dst **string, into *string, key string, set []string) error {
	if len(raw) > 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		if s, ok := known(raw[1:len(raw)-1], set); ok {
			*into = s
			*dst = into
			return nil
		}
	}
	return optString(raw, dst, into, key)
}

// known returns the name in set equal to b, without copying b.
func known(b []byte, set []string) (string, bool) {
	for _, s := range set {
		if string(b) == s {
			return s, true
		}
	}
	return "", false
}

// list decodes an array member; "[]" without encoding/json.
func list[T any](raw []byte, dst *[]T) error {
	switch string(raw) {
	case "null":
		*dst = nil
		return nil
	case "[]":
		*dst = []T{}
		return nil
	}
	return sub(raw, dst)
}

// sub decodes a nested value strictly: known names only, exact case.
func sub(raw []byte, v any) error {
	if err := checkKeys(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// fastSubject reads {"id":"…","type":"…"} (canonical member order) with
// no escapes.
func fastSubject(raw []byte, into *Subject) bool {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"id":"`))
	if !ok {
		return false
	}
	i := bytes.IndexByte(rest, '"')
	if i <= 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return false
	}
	id := rest[:i]
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`","type":"`))
	if !ok || len(rest) < 3 || !bytes.HasSuffix(rest, []byte(`"}`)) {
		return false
	}
	typ := rest[:len(rest)-2]
	if bytes.IndexByte(typ, '"') >= 0 || bytes.IndexByte(typ, '\\') >= 0 {
		return false
	}
	t, ok := known(typ, SubjectTypes)
	if !ok {
		t = string(typ)
	}
	into.ID, into.Type = string(id), t
	return true
}
