package opinion

// This file checks the member names of a canonical body in one pass: every
// object key must be, exactly, one of the names the schema uses
// (wireKeys), except inside the members whose values are decoded on their
// own (skipKeys). With encoding/json's DisallowUnknownFields this makes
// decoding case-sensitive: every name in wireKeys is lower case, so a key
// that is in the set and that json matches to a field case-insensitively
// is that field's exact name. It replaces a reflective walk that cost
// more than the rest of the decoding (docs/replica.md, "Opinions beside
// S11").

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// wireKeys are every member name of the opinion.publish schema
// (wireOpinion and the types it holds); TestWireKeys checks the list
// against the types.
var wireKeys = map[string]bool{
	"subject": true, "type": true, "id": true, "author_kind": true, "on_behalf_of": true, "disclosure": true,
	"operator": true, "tool": true, "principal": true, "funding": true, "source": true, "kind": true,
	"affiliations": true, "ai_assistance": true, "stakes": true, "direction": true, "venue": true, "size_band": true,
	"foreign_principal": true, "country": true, "relationship": true, "stance": true, "summary": true, "body": true,
	"proposes": true, "replies_to": true, "evidence": true, "uri": true, "hash": true, "quotes": true, "as_of": true,
	"nid": true, "object": true, "text": true, "findings": true, "target": true, "claim": true, "quote": true,
	"verdict": true, "rationale": true, "assertion": true, "related_quotes": true, "corrects": true, "method": true,
	"inputs": true, "formalization": true, "language": true, "language_version": true, "anchors": true, "rule": true,
	"terms": true, "mirror": true, "source_uri": true, "archived": true, "said_at": true,
	"attest": true, "complaint": true, "estimate": true, "exchange": true, "feasibility": true, "forecast": true,
	"jurisdiction_choice": true, "ranking": true, "resolution": true, "responds_to": true, "translation": true,
}

// skipKeys are the members whose values are not checked here: an
// assertion is decoded by DecodeAssertion, the members this node does not
// serve are only noted.
var skipKeys = map[string]bool{
	"assertion": true, "attest": true, "complaint": true, "estimate": true, "exchange": true, "feasibility": true,
	"forecast": true, "jurisdiction_choice": true, "ranking": true, "resolution": true, "responds_to": true, "translation": true,
}

// keyScan walks canonical JSON (no whitespace).
type keyScan struct {
	b []byte
	i int
}

func checkKeys(b []byte) error {
	s := keyScan{b: b}
	if err := s.value(true, 0); err != nil {
		return err
	}
	if s.i != len(b) {
		return fmt.Errorf("trailing bytes")
	}
	return nil
}

func (s *keyScan) value(check bool, depth int) error {
	if depth > 64 {
		return fmt.Errorf("nested too deep")
	}
	if s.i >= len(s.b) {
		return fmt.Errorf("unexpected end")
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return nil
		}
		for {
			start := s.i + 1
			if err := s.str(); err != nil {
				return err
			}
			key := s.b[start : s.i-1]
			if check && !wireKeys[string(key)] {
				return fmt.Errorf("unknown member %q", dag.Trunc(string(key)))
			}
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return fmt.Errorf("expected ':'")
			}
			s.i++
			if err := s.value(check && !skipKeys[string(key)], depth+1); err != nil {
				return err
			}
			if s.i >= len(s.b) {
				return fmt.Errorf("unexpected end")
			}
			c := s.b[s.i]
			s.i++
			if c == '}' {
				return nil
			}
			if c != ',' {
				return fmt.Errorf("expected ',' or '}'")
			}
		}
	case '[':
		s.i++
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.value(check, depth+1); err != nil {
				return err
			}
			if s.i >= len(s.b) {
				return fmt.Errorf("unexpected end")
			}
			c := s.b[s.i]
			s.i++
			if c == ']' {
				return nil
			}
			if c != ',' {
				return fmt.Errorf("expected ',' or ']'")
			}
		}
	case '"':
		return s.str()
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', ']', '}':
				return nil
			}
			s.i++
		}
		return nil
	}
}

// str skips a string starting at s.i, leaving s.i after its closing quote.
func (s *keyScan) str() error {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return fmt.Errorf("expected a string")
	}
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return nil
		}
	}
	return fmt.Errorf("unterminated string")
}
