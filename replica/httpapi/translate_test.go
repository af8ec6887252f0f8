package httpapi_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestTranslationsHTTP (D63; S19's translation part): a member translates
// section 1 of the seed into Spanish, each passage anchored to a verified
// quote of the snapshot, and another translates that member's opinion
// body. A passage whose quote is not an exact quote of the source text,
// one naming no quote, and one anchored to a quote of another source are
// refused quote_mismatch; a malformed language tag schema. Every
// translation is served authoritative: false.
func TestTranslationsHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{Simulation: true}, 5)
	b := s.b
	seed := b.Seed.Hash().String()
	quote := func(text string) map[string]any {
		return map[string]any{"as_of": seed, "nid": "/us/t1/s1", "text": text}
	}
	translation := func(language, of string, quotes []any, passages ...any) map[string]any {
		return ht.OpinionBody("member", "change", b.Genesis.String(), map[string]any{"quotes": quotes,
			"translation": map[string]any{"language": language, "of": of, "passages": passages}})
	}
	passage := func(q int, text string) map[string]any { return map[string]any{"quote": q, "text": text} }

	// quote_mismatch: the quoted text is not exactly in section 1 ("31").
	n.refuse(t, b.Opinion(ht.Member(3), translation("es", seed, []any{quote("The period is 31 days.")}, passage(0, "El plazo es de 31 días.")), s.last), dag.CodeQuoteMismatch)
	// ... a passage naming a quote the opinion does not have.
	n.refuse(t, b.Opinion(ht.Member(3), translation("es", seed, []any{quote("The period is 30 days.")}, passage(1, "El plazo es de 30 días.")), s.last), dag.CodeQuoteMismatch)
	// schema: a language that is not a BCP 47 tag; no passage.
	n.refuse(t, b.Opinion(ht.Member(3), translation("Spanish please", seed, []any{quote("The period is 30 days.")}, passage(0, "El plazo es de 30 días.")), s.last), dag.CodeSchema)
	n.refuse(t, b.Opinion(ht.Member(3), translation("es", seed, []any{quote("The period is 30 days.")}), s.last), dag.CodeSchema)

	// Accepted: the section's text, in Spanish (Mexico).
	es := b.Opinion(ht.Member(3), translation("es-MX", seed, []any{quote("The period is 30 days."), quote("30 days")},
		passage(0, "El plazo es de 30 días."), passage(1, "30 días")), s.last)
	s.do(t, n, es)
	o := n.getMap(t, "/opinions/"+es.ID.String(), nil)
	if o["authoritative"] != false || field(o, "body", "translation", "language") != "es-MX" || o["simulation"] != true {
		t.Fatalf("translation served as %v", o)
	}

	// A translation of an opinion: quotes of its body ({object, text}).
	stmt := b.Opinion(ht.Member(2), ht.OpinionBody("member", "change", b.Genesis.String(), map[string]any{"body": "We support a thirty-day period."}), s.last)
	s.do(t, n, stmt)
	ofStmt := []any{map[string]any{"object": stmt.ID.String(), "text": "a thirty-day period"}}
	s.do(t, n, b.Opinion(ht.Member(4), translation("fr", stmt.ID.String(), ofStmt, passage(0, "une période de trente jours")), s.last))
	// quote_mismatch: a passage anchored to a quote of another source (the
	// snapshot) than the translated opinion.
	n.refuse(t, b.Opinion(ht.Member(4), translation("fr", stmt.ID.String(), []any{quote("The period is 30 days.")}, passage(0, "Le délai est de 30 jours.")), s.last), dag.CodeQuoteMismatch)
	// ... and a quote that is not in the opinion's body.
	n.refuse(t, b.Opinion(ht.Member(4), translation("fr", stmt.ID.String(), []any{map[string]any{"object": stmt.ID.String(), "text": "a forty-day period"}}, passage(0, "une période de quarante jours")), s.last), dag.CodeQuoteMismatch)
}
