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
		key := string(b[start : s.i-1])
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
func (w *wireOpinion) set(key string, raw []byte) error {
	switch key {
	case "subject":
		if isNull(raw) {
			return nil
		}
		if sub, ok := fastSubject(raw); ok {
			w.Subject = sub
			return nil
		}
		return sub(raw, &w.Subject)
	case "author_kind":
		return optString(raw, &w.AuthorKind, key)
	case "on_behalf_of":
		return optString(raw, &w.OnBehalfOf, key)
	case "stance":
		return optString(raw, &w.Stance, key)
	case "summary":
		return optString(raw, &w.Summary, key)
	case "body":
		return optString(raw, &w.Body, key)
	case "replies_to":
		return optString(raw, &w.RepliesTo, key)
	case "corrects":
		return optString(raw, &w.Corrects, key)
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
		return fmt.Errorf("unknown member %q", trunc(key))
	}
	return nil
}

// optString reads a JSON string (or null) in place when it has no escape.
func optString(raw []byte, dst **string, key string) error {
	if isNull(raw) {
		*dst = nil
		return nil
	}
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		s := string(raw[1 : len(raw)-1])
		*dst = &s
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	*dst = &s
	return nil
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
func fastSubject(raw []byte) (*Subject, bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"id":"`))
	if !ok {
		return nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return nil, false
	}
	id := rest[:i]
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`","type":"`))
	if !ok || len(rest) < 2 || !bytes.HasSuffix(rest, []byte(`"}`)) {
		return nil, false
	}
	typ := rest[:len(rest)-2]
	if bytes.IndexByte(typ, '"') >= 0 || bytes.IndexByte(typ, '\\') >= 0 {
		return nil, false
	}
	return &Subject{ID: string(id), Type: string(typ)}, true
}
