package opinion

// This file decodes translations (30k §8, D63): passages in another
// language, each anchored to a verified quote of the source (a snapshot
// or an opinion). Translations are opinions: never authoritative, open
// to findings. The quotes themselves are verified by Check (D21); here
// each passage must name one of them, quoting the translation's source.

import (
	"encoding/json"

	"github.com/witan-dev/witan/dag"
)

// MaxPassage bounds a passage's text, in bytes (witan's limit).
const MaxPassage = 8192

// Translation is a decoded translation member.
type Translation struct {
	Language string    `json:"language"`
	Of       dag.ID    `json:"of"`
	Passages []Passage `json:"passages"`
}

// Passage is one translated passage: the index of the verified quote it
// translates, and the translated text.
type Passage struct {
	Quote int    `json:"quote"`
	Text  string `json:"text"`
}

type wireTranslation struct {
	Language *string `json:"language"`
	Of       *string `json:"of"`
	Passages []struct {
		Quote *int    `json:"quote"`
		Text  *string `json:"text"`
	} `json:"passages"`
}

func decodeTranslation(raw json.RawMessage) (*Translation, error) {
	var w wireTranslation
	if err := strict(raw, &w, "translation"); err != nil {
		return nil, err
	}
	if w.Language == nil || w.Of == nil || len(w.Passages) == 0 {
		return nil, schemaf("translation: language, of and at least one passage are required")
	}
	if !isLanguageTag(*w.Language) {
		return nil, schemaf("translation.language %q is not a BCP 47 language tag", dag.Trunc(*w.Language))
	}
	of, err := dag.ParseID(*w.Of)
	if err != nil {
		return nil, schemaf("translation.of: %v", err)
	}
	if len(w.Passages) > MaxList {
		return nil, schemaf("translation: more than %d passages", MaxList)
	}
	t := &Translation{Language: *w.Language, Of: of}
	for i, p := range w.Passages {
		if p.Quote == nil || p.Text == nil || *p.Text == "" || len(*p.Text) > MaxPassage {
			return nil, schemaf("translation.passages[%d]: quote and a text of 1 to %d bytes are required", i, MaxPassage)
		}
		t.Passages = append(t.Passages, Passage{Quote: *p.Quote, Text: *p.Text})
	}
	return t, nil
}

// isLanguageTag checks the shape of a BCP 47 tag: a primary subtag of 2
// to 8 letters, then subtags of 1 to 8 letters or digits, joined by "-",
// at most 35 bytes in all. (The registry of subtags is not consulted.)
func isLanguageTag(s string) bool {
	if len(s) == 0 || len(s) > 35 {
		return false
	}
	n, first := 0, true
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '-' {
			if n == 0 || n > 8 || (first && n < 2) {
				return false
			}
			n, first = 0, false
			continue
		}
		c := s[i]
		letter := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (first || c < '0' || c > '9') {
			return false
		}
		n++
	}
	return true
}

// checkTranslation anchors every passage to a quote of the source: its
// index names one of the opinion's quotes, and that quote is of node text
// in snapshot Of, or of the body of opinion Of. Code: quote_mismatch (a
// passage that is not an exact verified quote of the source).
func checkTranslation(o *Opinion) error {
	t := o.Translation
	for i, p := range t.Passages {
		if p.Quote < 0 || p.Quote >= len(o.Quotes) {
			return codef(dag.CodeQuoteMismatch, "translation.passages[%d]: quote %d is not one of the opinion's %d verified quotes", i, p.Quote, len(o.Quotes))
		}
		q := o.Quotes[p.Quote]
		if q.AsOf != t.Of && q.Object != t.Of {
			return codef(dag.CodeQuoteMismatch, "translation.passages[%d]: quote %d is not a quote of the source %s", i, p.Quote, t.Of)
		}
	}
	return nil
}
