package view

// This file serves 30k §8 "Resolutions, forecasts, and rankings" (D31,
// D34, D35, D50): GET /stats as of a cut of the record, a ranking's
// recomputation, and this node's own report on a resolution spec. The
// judgements are replica/opinion's (pure); this file finds the record as
// of a cut and labels finality. Reports of other listed nodes are
// fetched by the HTTP door (replica/httpapi), never here.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/opinion"
)

// Report sources of a resolution's node reports.
const (
	ReportSelf        = "self"        // this node's own evaluation
	ReportPeer        = "peer"        // fetched from the listed node over HTTP
	ReportUnreachable = "unreachable" // no report could be had
)

// NodeReport is one listed node's report on a resolution's assertion.
type NodeReport struct {
	Node   dag.Key `json:"node"`
	Source string  `json:"source"` // self | peer | unreachable
	// Consistency is the node's declared consistency (capability
	// document); null when unknown.
	Consistency *string `json:"consistency"`
	// Assertion is holds, fails or undetermined, and Finality the
	// finality it was reported at; both null when unreachable.
	Assertion *string           `json:"assertion"`
	Finality  *replica.Finality `json:"finality"`
}

// ResolutionEval is a resolution spec's evaluation (D31).
type ResolutionEval struct {
	Result           string           `json:"result"` // resolved_true | resolved_false | unresolved | unsatisfiable
	Conflicting      bool             `json:"conflicting"`
	RequiredFinality string           `json:"required_finality"`
	MinAgree         int              `json:"min_agree"`
	Reports          []NodeReport     `json:"reports"` // one per listed node, in the spec's order
	Finality         replica.Finality `json:"finality"`
	// opinionFinal: the opinion itself is in a checkpoint of this replica.
	opinionFinal bool
}

// Recompute decides Result from Reports (opinion.Resolve) and labels its
// finality: final_advisory for resolved_* and unsatisfiable once the
// opinion is in a checkpoint of this replica, else provisional. Callers
// that replace reports (with a peer's) call it again.
func (e *ResolutionEval) Recompute() {
	spec := &opinion.Resolution{Finality: e.RequiredFinality, MinAgree: e.MinAgree}
	reps := make([]opinion.Report, 0, len(e.Reports))
	for _, r := range e.Reports {
		spec.Nodes = append(spec.Nodes, r.Node)
		x := opinion.Report{Node: r.Node, Reached: r.Source != ReportUnreachable && r.Assertion != nil && r.Finality != nil}
		if r.Consistency != nil {
			x.Consistency = *r.Consistency
		}
		if x.Reached {
			x.Result, x.Finality = *r.Assertion, string(*r.Finality)
		}
		reps = append(reps, x)
	}
	e.Result, e.Conflicting = opinion.Resolve(spec, reps)
	e.Finality = replica.Provisional
	if e.opinionFinal && e.Result != opinion.Unresolved {
		e.Finality = replica.FinalAdvisory
	}
}

// markets completes an opinion's evaluation with its resolution (this
// node's own report; others unreachable until the door fills them), its
// forecast (already among the results) and its ranking (recomputed as of
// its cut). Under r.mu.
func (r *Reader) markets(ctx context.Context, sp *replica.Session, id dag.ID, out OpinionEvaluation) (OpinionEvaluation, error) {
	v, ok := sp.House().Opinion(id)
	if !ok {
		return out, nil
	}
	o, err := opinion.DecodeCanonical(v.Body)
	if err != nil {
		return out, err
	}
	own := sp.Finality(ctx, id)
	kept := out.Results[:0]
	for _, x := range out.Results {
		if x.Kind != "resolution_assertion" {
			kept = append(kept, x)
			continue
		}
		res := o.Resolution
		e := &ResolutionEval{RequiredFinality: res.Finality, MinAgree: res.MinAgree, Reports: []NodeReport{}, opinionFinal: own == replica.FinalAdvisory}
		self := sp.Node()
		for _, k := range res.Nodes {
			nr := NodeReport{Node: k, Source: ReportUnreachable}
			if k == self {
				c, a, f := "eventual", x.Result, x.Finality
				nr = NodeReport{Node: k, Source: ReportSelf, Consistency: &c, Assertion: &a, Finality: &f}
			}
			e.Reports = append(e.Reports, nr)
		}
		e.Recompute()
		out.Resolution = e
		kept = append(kept, EvaluationResult{Kind: "resolution", Index: 0, Result: e.Result, Finality: e.Finality})
	}
	out.Results = kept
	if rk := o.Ranking; rk != nil {
		res, fin := opinion.Undetermined, replica.Provisional
		if rk.Session == sp.House().Session() {
			rec, f, err := r.recordAsOf(ctx, sp, rk.AsOf)
			switch {
			case err == nil:
				res, fin = opinion.EvaluateRanking(rk, rec), f
				if own != replica.FinalAdvisory {
					fin = replica.Provisional
				}
			case !errors.Is(err, dag.ErrNotFound):
				return out, err
			}
		}
		out.Results = append(out.Results, EvaluationResult{Kind: "ranking", Index: 0, Result: res, Finality: fin})
	}
	out.Finality = own
	for _, x := range out.Results {
		if x.Finality != replica.FinalAdvisory {
			out.Finality = replica.Provisional
		}
	}
	return out, nil
}

// cpIndex returns the 1-based index of sp's first checkpoint that
// includes entry id, or 0.
func (r *Reader) cpIndex(ctx context.Context, sp *replica.Session) func(dag.ID) uint64 {
	return func(id dag.ID) uint64 {
		pos := sp.Position(ctx, id)
		if pos == 0 {
			return 0
		}
		i := sort.Search(len(sp.Checkpoints()), func(i int) bool { return sp.Checkpoints()[i].Size >= pos })
		if i == len(sp.Checkpoints()) {
			return 0
		}
		return uint64(i + 1)
	}
}

// recordAsOf returns the binding record as of cut asOf: one of this
// replica's checkpoint roots (the log prefix it covers; final_advisory),
// or the id of an accepted entry (its causal past, itself included, open
// point 13; the entry's finality). dag.ErrNotFound when asOf is neither.
// The record as of a cut other than the whole log is re-derived by
// admitting the cut's entries, in log order, into a new House. Under
// r.mu.
func (r *Reader) recordAsOf(ctx context.Context, sp *replica.Session, asOf dag.ID) (*opinion.StatsRecord, replica.Finality, error) {
	var ids []dag.ID
	fin := replica.FinalAdvisory
	found := false
	for i := len(sp.Checkpoints()) - 1; i >= 0; i-- {
		if sp.Checkpoints()[i].Root == asOf {
			ids, found = sp.Log()[:sp.Checkpoints()[i].Size], true
			break
		}
	}
	if !found && !sp.House().Has(asOf) {
		return nil, "", fmt.Errorf("replica: as_of %s is neither a checkpoint root of this replica nor an accepted entry: %w", asOf, dag.ErrNotFound)
	}
	if !found {
		fin = sp.Finality(ctx, asOf)
	}
	// A cut's entries never change, and the checkpoint indexes its
	// record holds change only with the checkpoints.
	key := cutKey{space: sp.Name(), cut: asOf, cps: len(sp.Checkpoints())}
	if rec, ok := r.cuts.get(key); ok {
		return rec, fin, nil
	}
	if !found {
		past, err := causalPast(ctx, sp, asOf)
		if err != nil {
			return nil, "", err
		}
		for _, id := range sp.Log() {
			if past[id] {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == len(sp.Log()) {
		return sp.House().StatsRecord(r.cpIndex(ctx, sp)), fin, nil
	}
	h := house.New(sp.House().Session(), sp.Objects())
	for _, id := range ids {
		e, err := sp.Get(ctx, id)
		if err != nil {
			return nil, "", err
		}
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil {
			return nil, "", fmt.Errorf("replica: stored entry %s: %w", id, err)
		}
		if err := h.Admit(id, env); err != nil {
			return nil, "", fmt.Errorf("replica: re-deriving as of %s: %s no longer admits: %w", asOf, id, err)
		}
	}
	rec := h.StatsRecord(r.cpIndex(ctx, sp))
	r.cuts.put(key, rec)
	return rec, fin, nil
}

// maxCuts bounds the records cutCache keeps (each O(MRs + members)).
const maxCuts = 8

type cutKey struct {
	space string
	cut   dag.ID
	cps   int
}

// cutCache keeps the records of the last maxCuts cuts re-derived, so that
// asking the same ranking or /stats again does not re-derive a House.
// Under r.mu.
type cutCache struct {
	keys []cutKey
	recs map[cutKey]*opinion.StatsRecord
}

func (c *cutCache) get(k cutKey) (*opinion.StatsRecord, bool) {
	rec, ok := c.recs[k]
	return rec, ok
}

func (c *cutCache) put(k cutKey, rec *opinion.StatsRecord) {
	if c.recs == nil {
		c.recs = map[cutKey]*opinion.StatsRecord{}
	}
	if _, ok := c.recs[k]; ok {
		return
	}
	if len(c.keys) == maxCuts {
		delete(c.recs, c.keys[0])
		c.keys = c.keys[1:]
	}
	c.keys = append(c.keys, k)
	c.recs[k] = rec
}

// causalPast returns the entries in id's causal past, id included.
func causalPast(ctx context.Context, sp *replica.Session, id dag.ID) (map[dag.ID]bool, error) {
	past := map[dag.ID]bool{}
	stack := []dag.ID{id}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if past[x] {
			continue
		}
		past[x] = true
		e, err := sp.Get(ctx, x)
		if err != nil {
			return nil, err
		}
		stack = append(stack, e.Parents...)
	}
	return past, nil
}

// Stat is one metric's value (GET /stats, D35).
type Stat struct {
	Metric string `json:"metric"`
	Scope  string `json:"scope"`
	// AsOf is the cut: a checkpoint root of this replica or an entry id;
	// null when the node has no checkpoint and answers over its whole
	// record now.
	AsOf  *dag.ID       `json:"as_of"`
	Value opinion.Value `json:"value"`
	// Shares, for an MR's approve_share or approve_of_electorate, shows
	// both shares and the one the MR's rule uses side by side (D50).
	Shares        *Shares          `json:"shares,omitempty"`
	Finality      replica.Finality `json:"finality"`
	Authoritative bool             `json:"authoritative"` // always false (D45)
}

// Shares are D50's three shares of one MR's tally.
type Shares struct {
	ApproveOfCast       opinion.Value   `json:"approve_of_cast"`
	ApproveOfElectorate opinion.Value   `json:"approve_of_electorate"`
	RuleShare           json.RawMessage `json:"rule_share"` // null for a rule with none (always_allow)
}

// Stats computes metric for scope as of cut asOf (zero: this replica's
// latest checkpoint, or the whole record now, provisional, when it has
// none). Codes: metric_unknown, schema (a scope the metric does not
// have); dag.ErrNotFound for an unknown cut or MR. An MR-scope value is
// provisional while the MR has no executed determination in the cut: its
// tally is still live.
func (r *Reader) Stats(ctx context.Context, session dag.ID, metric, scope string, asOf dag.ID) (Stat, error) {
	if _, err := opinion.ScopesOf(metric); err != nil {
		return Stat{}, err
	}
	sc, err := opinion.ParseScope(scope)
	if err != nil {
		return Stat{}, err
	}
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return Stat{}, err
	}
	defer sp.Close()
	if !asOf.Valid() && len(sp.Checkpoints()) > 0 {
		asOf = sp.Checkpoints()[len(sp.Checkpoints())-1].Root
	}
	var rec *opinion.StatsRecord
	fin := replica.Provisional
	if asOf.Valid() {
		if rec, fin, err = r.recordAsOf(ctx, sp, asOf); err != nil {
			return Stat{}, err
		}
	} else {
		rec = sp.House().StatsRecord(r.cpIndex(ctx, sp))
	}
	v, err := opinion.Stat(rec, metric, sc)
	if errors.Is(err, opinion.ErrNoSuchMR) {
		return Stat{}, fmt.Errorf("replica: MR %s in the record as of the cut: %w", sc.ID, dag.ErrNotFound)
	}
	if err != nil {
		return Stat{}, err
	}
	var shares *Shares
	if sc.Type == "mr" {
		for _, m := range rec.MRs {
			if m.ID.String() != sc.ID {
				continue
			}
			if !executedIn(m) {
				fin = replica.Provisional
			}
			if metric == "approve_share" || metric == "approve_of_electorate" {
				shares = &Shares{ApproveOfCast: opinion.Value{Num: m.Approve, Den: m.Approve + m.Reject, Frac: true},
					ApproveOfElectorate: opinion.Value{Num: m.Approve, Den: m.Electorate, Frac: true}, RuleShare: m.RuleShare}
				if shares.RuleShare == nil {
					shares.RuleShare = json.RawMessage("null")
				}
			}
		}
	}
	if v.Null {
		fin = replica.Provisional
	}
	out := Stat{Metric: metric, Scope: scope, Value: v, Shares: shares, Finality: fin}
	if asOf.Valid() {
		out.AsOf = &asOf
	}
	return out, nil
}

// executedIn: the MR has an executed determination in the record.
func executedIn(m opinion.MRStats) bool { return m.Merged || m.Decided }

// RefreshResolution recomputes the resolution after its reports changed
// (the door filled in peers' reports), with the results entry and the
// evaluation's finality that follow from it.
func (ev *OpinionEvaluation) RefreshResolution() {
	e := ev.Resolution
	if e == nil {
		return
	}
	e.Recompute()
	ev.Finality = replica.Provisional
	if e.opinionFinal {
		ev.Finality = replica.FinalAdvisory
	}
	for i := range ev.Results {
		x := &ev.Results[i]
		if x.Kind == "resolution" {
			x.Result, x.Finality = e.Result, e.Finality
		}
		if x.Finality != replica.FinalAdvisory {
			ev.Finality = replica.Provisional
		}
	}
}
