package httpapi

// This file serves the opinion layer of 30k §8: GET /opinions (paged,
// filtered by subject, author and author_kind), GET /opinions/{id},
// GET /opinions/{id}/evaluation, the optional schema.org ClaimReview
// rendering of an opinion's findings, and the node's opinion policy: a
// per-key rate limit on what this node accepts from its HTTP clients
// (D18, D51). The limit never touches what peers' logs contain, so it
// can never make two replicas derive different state
// (docs/http-api.md, "Opinion policy and sync").

import (
	"fmt"
	"net/http"
	"strconv"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/view"
)

// OpinionPolicy is the node's opinion_policy: witan accepts every
// opinion the protocol admits (no author kind is refused by policy).
const OpinionPolicy = "open"

// OpinionLimit is a per-signing-key rate limit on the opinions this node
// accepts from its HTTP clients. The zero value is no limit. Keys are
// never grouped by any disclosure field, group, affiliation or stance
// (D51): each key has its own budget.
type OpinionLimit struct {
	// PerKey opinions accepted per key per Window; 0 is no limit.
	PerKey int
	// Window is the length of the fixed windows the budget renews in
	// (default one hour).
	Window time.Duration
	// Now is the clock (time.Now if nil); tests set it.
	Now func() time.Time
}

// describe is the capability document's opinion_rate_limit.
func (l OpinionLimit) describe() string {
	if l.PerKey <= 0 {
		return "none: every opinion the protocol admits is accepted from HTTP clients; peers' entries are never limited"
	}
	return fmt.Sprintf("at most %d opinions per signing key per %s from HTTP clients (rate_limited, 429), counted on accepted opinions; keys are never grouped by disclosure, group, affiliation or stance; peers' entries are never limited", l.PerKey, l.window())
}

func (l OpinionLimit) window() time.Duration {
	if l.Window <= 0 {
		return time.Hour
	}
	return l.Window
}

// limiter counts accepted opinions per key in the current fixed window.
// Its memory is bounded by the keys that had an opinion accepted in one
// window (each an aged, registered key or a member).
type limiter struct {
	l       OpinionLimit
	mu      gosync.Mutex
	start   time.Time
	counts  map[dag.Key]int
	limited uint64 // submissions refused rate_limited since start
}

func (lm *limiter) now() time.Time {
	if lm.l.Now != nil {
		return lm.l.Now()
	}
	return time.Now()
}

// roll starts a new window when the current one is over. Under mu.
func (lm *limiter) roll() {
	now := lm.now()
	w := lm.l.window()
	if lm.counts == nil || now.Sub(lm.start) >= w || now.Before(lm.start) {
		lm.start, lm.counts = now.Truncate(w), map[dag.Key]int{}
	}
}

// allow reports whether key may submit one more opinion now.
func (lm *limiter) allow(k dag.Key) bool {
	if lm.l.PerKey <= 0 {
		return true
	}
	lm.mu.Lock()
	defer lm.mu.Unlock()
	lm.roll()
	if lm.counts[k] >= lm.l.PerKey {
		lm.limited++
		return false
	}
	return true
}

// took counts an accepted opinion of key.
func (lm *limiter) took(k dag.Key) {
	if lm.l.PerKey <= 0 {
		return
	}
	lm.mu.Lock()
	defer lm.mu.Unlock()
	lm.roll()
	lm.counts[k]++
}

func (lm *limiter) refused() uint64 {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	return lm.limited
}

// OpinionsAnswer is GET /opinions's answer.
type OpinionsAnswer struct {
	sessionLabels
	Opinions      []view.Opinion   `json:"opinions"`
	Next          *string          `json:"next"` // the cursor of the next page, null at the end
	Authoritative bool             `json:"authoritative"`
	Finality      replica.Finality `json:"finality"`
}

func (s *Server) opinions(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := view.OpinionFilter{Subject: q.Get("subject"), Kind: q.Get("kind"), SubjectType: q.Get("subject_type")}
	if a := q.Get("author"); a != "" {
		k, err := dag.ParseKey(a)
		if err != nil {
			return problemf(dag.CodeSchema, "author: %v", err)
		}
		f.Author = k
	}
	var after dag.ID
	if c := q.Get("after"); c != "" {
		if after, err = dag.ParseID(c); err != nil {
			return problemf(dag.CodeSchema, "after: %v", err)
		}
	}
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > view.MaxOpinionPage {
			return problemf(dag.CodeSchema, "limit: 1 to %d", view.MaxOpinionPage)
		}
		limit = n
	}
	page, next, err := s.view.Opinions(ctx, space, f, after, limit)
	if err != nil {
		return err
	}
	a := OpinionsAnswer{sessionLabels: s.labels(ctx, space), Opinions: page, Finality: replica.FinalAdvisory}
	for _, o := range page {
		if o.Finality != replica.FinalAdvisory {
			a.Finality = replica.Provisional
		}
	}
	if len(page) == 0 {
		a.Finality = replica.Provisional
	}
	if next.Valid() {
		n := next.String()
		a.Next = &n
	}
	return writeJSON(w, a)
}

// OpinionAnswer is GET /opinions/{id}'s answer.
type OpinionAnswer struct {
	sessionLabels
	view.Opinion
}

func (s *Server) opinion(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	o, err := s.view.Opinion(ctx, space, id)
	if err != nil {
		return err
	}
	return writeJSON(w, OpinionAnswer{sessionLabels: s.labels(ctx, space), Opinion: o})
}

// EvaluationAnswer is GET /opinions/{id}/evaluation's answer.
type EvaluationAnswer struct {
	sessionLabels
	view.OpinionEvaluation
}

func (s *Server) evaluation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	ev, err := s.view.Evaluation(ctx, space, id)
	if err != nil {
		return err
	}
	if ev.Resolution != nil && r.URL.Query().Get("reports") != "self" {
		s.fillReports(ctx, space.String(), id, &ev) // resolution.go
	}
	return writeJSON(w, EvaluationAnswer{sessionLabels: s.labels(ctx, space), OpinionEvaluation: ev})
}

// claimReview renders an opinion's findings as schema.org ClaimReview
// objects (D20): claimReviewed = the claim, reviewRating.alternateName =
// the verdict, itemReviewed = the target, author = the signing key. The
// JSON of §8 stays normative; this is an optional view.
func (s *Server) claimReview(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	o, err := s.view.Opinion(ctx, space, id)
	if err != nil {
		return err
	}
	d, err := opinion.Decode(o.Body)
	if err != nil {
		return err
	}
	reviews := []map[string]any{}
	for i, f := range d.Findings {
		claim := ""
		if f.ClaimQuote >= 0 {
			claim = d.Quotes[f.ClaimQuote].Text
		}
		if f.ClaimText != nil {
			claim = *f.ClaimText
		}
		reviews = append(reviews, map[string]any{
			"@context": "https://schema.org", "@type": "ClaimReview",
			"@id":           fmt.Sprintf("%s#finding-%d", o.ID, i),
			"claimReviewed": claim,
			"reviewRating":  map[string]any{"@type": "Rating", "alternateName": f.Verdict},
			"itemReviewed":  map[string]any{"@type": "Claim", "identifier": f.Target.ID, "additionalType": f.Target.Type},
			"author":        map[string]any{"@type": "Thing", "identifier": o.Author.String()},
			"reviewBody":    f.Rationale,
		})
	}
	l := s.labels(ctx, space)
	return writeJSON(w, map[string]any{"session": l.Session, "simulation": l.Simulation, "opinion": o.ID,
		"claim_reviews": reviews, "authoritative": false, "finality": o.Finality})
}

// rateLimit answers whether an envelope submitted over HTTP may go on:
// only opinion.publish is limited, per signing key.
func (s *Server) rateLimit(e *dag.Envelope) (dag.Key, bool, error) {
	if e.Type != dag.TxOpinionPublish {
		return dag.Key{}, false, nil
	}
	if !s.lim.allow(e.Author) {
		return e.Author, true, problemf(dag.CodeRateLimited, "%s has had %d opinions accepted by this node in the current %s window (opinion_rate_limit)",
			e.Author, s.lim.l.PerKey, s.lim.l.window())
	}
	return e.Author, true, nil
}
