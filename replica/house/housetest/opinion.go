package housetest

import (
	"time"

	"github.com/witan-dev/witan/dag"
)

// Advance moves the builder's clock: the next envelope's ts is d (plus
// one second) after the last one's.
func (b *Builder) Advance(d time.Duration) { b.t = b.t.Add(d) }

// Full is the disclosure every non-member kind owes (30k §8), declaring
// no funding, affiliation, AI assistance, stakes or foreign principal.
func Full() map[string]any {
	return map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{},
		"ai_assistance": "none", "stakes": []any{}, "foreign_principal": nil}
}

// OpinionBody is a plain opinion body on subject (type, id) by an author
// of kind, with the full disclosure for a non-member kind; extra members
// are set over it (a nil value deletes the member).
func OpinionBody(kind, subjectType, subjectID string, extra map[string]any) map[string]any {
	body := map[string]any{"subject": map[string]any{"type": subjectType, "id": subjectID}, "author_kind": kind,
		"on_behalf_of": nil, "stance": "neutral", "summary": "a view", "body": "Some words.", "proposes": []any{},
		"replies_to": nil, "evidence": []any{}}
	if kind != "member" {
		body["disclosure"] = Full()
	}
	for k, v := range extra {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	return body
}

// Opinion signs an opinion.publish with body.
func (b *Builder) Opinion(s *dag.Signer, body map[string]any, parents ...dag.ID) Tx {
	return b.Sign(s, dag.TxOpinionPublish, body, parents)
}
