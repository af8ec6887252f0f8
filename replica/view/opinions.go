package view

// This file serves the opinion layer (30k §8): opinions per session with
// their corrections and the replies of the members they check, the
// evaluation of their quotes and assertions with this replica's finality,
// and the stakes members declared on an MR. Opinions are never counted:
// nothing here reaches a tally.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/opinion"
)

// Opinion is one accepted opinion as this replica serves it. Verdicts
// inside Body are the author's, shown attributed to Author and never
// aggregated (D20).
type Opinion struct {
	ID         dag.ID          `json:"id"`
	Author     dag.Key         `json:"author"`
	AuthorKind string          `json:"author_kind"`
	OnBehalfOf *string         `json:"on_behalf_of"`
	Subject    opinion.Subject `json:"subject"`
	Stance     string          `json:"stance"`
	Summary    string          `json:"summary"`
	// Body is the opinion.publish body as signed (canonical JSON).
	Body               json.RawMessage `json:"body"`
	CorrectedBy        []dag.ID        `json:"corrected_by"`
	RepliesFromSubject []dag.ID        `json:"replies_from_subject"`
	// Affiliations shows, for each organization the disclosure lists,
	// the attesting key or "unattested" (D76; house opinion_members.go).
	Affiliations []opinion.Affiliation `json:"affiliations"`
	// ObserverReplies, on a complaint only (D79): the observer opinions
	// whose responds_to names it, sorted by id.
	ObserverReplies *[]dag.ID        `json:"observer_replies,omitempty"`
	Finality        replica.Finality `json:"finality"`
	Authoritative   bool             `json:"authoritative"` // always false (D45)
	// Ignored is "key_rotated" for an opinion signed by a member's key
	// that a key.rotate makes invalid for it (D62; docs/deviations.md,
	// "Key rotation"): shown, never taken as the member's. Omitted
	// otherwise.
	Ignored string `json:"ignored,omitempty"`
}

// IgnoredKeyRotated is Opinion.Ignored for an opinion a key rotation
// makes invalid.
const IgnoredKeyRotated = "key_rotated"

// OpinionFilter selects opinions: by subject id, author, author_kind.
type OpinionFilter = house.OpinionFilter

// MaxOpinionPage bounds a page of Opinions.
const MaxOpinionPage = 500

// Opinions returns a page of the session's opinions matching f, sorted by
// tx id, after the opinion after (zero: from the start). next is the last
// id of the page when more match, else zero.
func (r *Reader) Opinions(ctx context.Context, session dag.ID, f OpinionFilter, after dag.ID, limit int) (page []Opinion, next dag.ID, err error) {
	if limit <= 0 || limit > MaxOpinionPage {
		limit = MaxOpinionPage
	}
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, dag.ID{}, err
	}
	defer sp.Close()
	views, more := sp.House().Opinions(f, after, limit)
	page = make([]Opinion, 0, len(views))
	for _, v := range views {
		page = append(page, r.opinionOf(ctx, sp, v))
	}
	if more && len(page) > 0 {
		next = page[len(page)-1].ID
	}
	return page, next, nil
}

// Opinion returns one accepted opinion.
func (r *Reader) Opinion(ctx context.Context, session dag.ID, id dag.ID) (Opinion, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return Opinion{}, err
	}
	defer sp.Close()
	v, ok := sp.House().Opinion(id)
	if !ok {
		return Opinion{}, fmt.Errorf("replica: opinion %s: %w", id, dag.ErrNotFound)
	}
	return r.opinionOf(ctx, sp, v), nil
}

func (r *Reader) opinionOf(ctx context.Context, sp *replica.Session, v house.OpinionView) Opinion {
	o := Opinion{ID: v.ID, Author: v.Author, AuthorKind: v.Kind, Subject: v.Subject, Stance: v.Stance, Summary: v.Summary,
		Body: v.Body, CorrectedBy: v.CorrectedBy, RepliesFromSubject: v.RepliesFromSubject, Finality: sp.OpinionFinality(ctx, v.ID)}
	if v.Complaint {
		o.ObserverReplies = &v.ObserverReplies
	}
	if v.Ignored {
		o.Ignored = IgnoredKeyRotated
	}
	if v.OnBehalfOf != "" {
		g := "group:" + v.OnBehalfOf
		o.OnBehalfOf = &g
	}
	o.Affiliations, _ = sp.House().Affiliations(v.ID) // D76 (house opinion_members.go)
	return o
}

// EvaluationResult is one quote or assertion of an opinion evaluated
// against the record as this replica holds it now.
type EvaluationResult struct {
	Kind     string           `json:"kind"` // quote | assertion | evidence (a complaint's, D39)
	Index    int              `json:"index"`
	Result   string           `json:"result"` // holds | fails | undetermined
	Finality replica.Finality `json:"finality"`
}

// OpinionEvaluation is GET /opinions/{id}/evaluation.
type OpinionEvaluation struct {
	Opinion       dag.ID             `json:"opinion"`
	Results       []EvaluationResult `json:"results"`
	Authoritative bool               `json:"authoritative"` // always false (D45)
	Finality      replica.Finality   `json:"finality"`      // the least final of the results, or the opinion's own
	// Resolution is the resolution spec's evaluation (D31, markets.go);
	// absent when the opinion carries none.
	Resolution *ResolutionEval `json:"resolution,omitempty"`
}

// Evaluation evaluates an opinion's quotes and assertions (D22), each
// with its finality: final_advisory once the opinion and everything the
// result reads are in a checkpoint of this replica and the result reads
// no MR without an executed determination; undetermined is always
// provisional. It is recomputed on every call, so it follows the record.
func (r *Reader) Evaluation(ctx context.Context, session dag.ID, id dag.ID) (OpinionEvaluation, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return OpinionEvaluation{}, err
	}
	defer sp.Close()
	res, ok := sp.House().EvaluateOpinion(id)
	if !ok {
		return OpinionEvaluation{}, fmt.Errorf("replica: opinion %s: %w", id, dag.ErrNotFound)
	}
	own := sp.Finality(ctx, id)
	out := OpinionEvaluation{Opinion: id, Results: []EvaluationResult{}, Finality: own}
	for _, x := range res {
		f := own
		if x.Open || x.Result == opinion.Undetermined {
			f = replica.Provisional
		}
		for _, d := range x.Deps {
			if f == replica.FinalAdvisory && d.Valid() && sp.Finality(ctx, d) != replica.FinalAdvisory {
				f = replica.Provisional
			}
		}
		if f == replica.Provisional {
			out.Finality = replica.Provisional
		}
		out.Results = append(out.Results, EvaluationResult{Kind: x.Kind, Index: x.Index, Result: x.Result, Finality: f})
	}
	if v, ok := sp.House().Opinion(id); ok {
		if o, err := opinion.DecodeCanonical(v.Body); err == nil && o.Complaint != nil {
			for i, e := range o.Complaint.Evidence {
				if res, ok := evidenceResult(sp, e, own); ok {
					res.Index = i
					out.Results = append(out.Results, res)
					if res.Finality == replica.Provisional {
						out.Finality = replica.Provisional
					}
				}
			}
		}
	}
	return r.markets(ctx, sp, id, out) // resolution, forecast, ranking (markets.go)
}

// evidenceResult is a complaint's evidence item as this node judges it
// (D39): a receipt "holds" (its signature was verified when the
// complaint was admitted: an admitted complaint has none that fails),
// with the complaint's finality; a refusal-log reference to this node's
// own log "holds" when the log has that index, else "fails", and one to
// another node's log is "undetermined": the refusal log is node-local,
// so both are provisional (docs/deviations.md). An envelope is not
// judged (no result). r.mu is held.
func evidenceResult(sp *replica.Session, e opinion.ComplaintEvidence, own replica.Finality) (EvaluationResult, bool) {
	switch {
	case e.Receipt != nil:
		return EvaluationResult{Kind: "evidence", Result: opinion.Holds, Finality: own}, true
	case e.Refusal != nil:
		res := opinion.Undetermined
		if e.Refusal.Node == sp.Node() {
			res = opinion.Fails
			if sp.RefusalLogged(e.Refusal.Index) {
				res = opinion.Holds
			}
		}
		return EvaluationResult{Kind: "evidence", Result: res, Finality: replica.Provisional}, true
	}
	return EvaluationResult{}, false
}

// MemberStakes is a member's latest declared stakes on an MR (D32), next
// to their ballot.
type MemberStakes struct {
	Member  dag.Key         `json:"member"`
	Choice  *string         `json:"choice"` // the effective ballot's choice; null with no ballot or void
	Void    bool            `json:"void"`
	Stakes  []opinion.Stake `json:"stakes"`
	Opinion dag.ID          `json:"opinion"` // the opinion that declared them
}

// Stakes lists, for every member who declared stakes on MR mr, the latest
// declaration and the member's ballot, sorted by member. It costs
// O(declaring members), never O(ballots).
func (r *Reader) Stakes(ctx context.Context, session dag.ID, mr dag.ID) ([]MemberStakes, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	return stakesOf(sp.House(), mr), nil
}

func stakesOf(h *house.House, mr dag.ID) []MemberStakes {
	out := []MemberStakes{}
	for _, m := range h.Stakers(mr) {
		st, op, ok := h.Stakes(m, mr)
		if !ok {
			continue
		}
		choice, void := h.MemberChoice(m, mr)
		ms := MemberStakes{Member: m, Stakes: st, Opinion: op, Void: void}
		if choice != "" {
			ms.Choice = &choice
		}
		out = append(out, ms)
	}
	return out
}
