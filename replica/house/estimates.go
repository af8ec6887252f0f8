package house

// This file admits and lists cost estimates (30k D53, D69, D75): an
// estimate is judged against its causal past (the MR it costs must be
// opened there; the year and the regions it must cover are read from it),
// a determination or a contest's that approves a fiscal MR needs one in
// its causal past (fiscal notice), and the fact sheet and the views read
// the accepted ones. The member itself is decoded by replica/opinion
// (estimate.go); the views are replica/view's (estimates.go).

import (
	"slices"
	"strconv"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// estimateContext reads what an estimate on mr must cover from the
// estimate's causal past: the effective year (the MR's effective date,
// else, for on_merge, the year of the estimate's witnessed time: the MR
// cannot take effect before its estimate exists, docs/deviations.md),
// whether the MR's fact sheet lists a sunset, and the declared regions
// and densities.
func (v *admission) estimateContext(mr dag.ID) (opinion.EstimateContext, error) {
	h := v.h
	var c opinion.EstimateContext
	info := h.mrs[mr]
	if v.st.mrs[mr] == nil || info == nil {
		return c, dag.Errorf(dag.CodeUnknownParent, "house: estimate.mr %s is not an MR opened in the opinion's causal past", mr)
	}
	if eff := info.body.Effective; eff.Dated {
		c.EffectiveYear, _ = strconv.Atoi(eff.Date.String()[:4])
	} else {
		c.EffectiveYear = time.Unix(v.wit, 0).UTC().Year()
	}
	c.Sunsets = h.mrSunsets(info)
	if d := h.sessionDistricts(); d != nil {
		c.Regions, c.Densities = d.Values["region"], d.Values["density"]
		if c.Regions == nil {
			c.Regions = []string{}
		}
		if c.Densities == nil {
			c.Densities = []string{}
		}
	}
	return c, nil
}

// mrSunsets reports whether merge MR info's fact sheet lists a sunset
// (§6 item 6: a node of its patch carries a [[sunset:]] marker).
func (h *House) mrSunsets(info *mrInfo) bool {
	if info.patch == nil {
		return false
	}
	if s, ok := h.parts.sunsets[info.id]; ok {
		return s
	}
	target, err := h.tree(info.body.Target.Head)
	if err != nil {
		return false
	}
	fs, err := statute.Facts(statute.ReviewOf(target, info.patch), statute.Env{MR: info.id, Profile: h.profile}, statute.FactInputs{})
	s := err == nil && len(fs.Sunsets) > 0
	if h.parts.sunsets == nil {
		h.parts.sunsets = map[dag.ID]bool{}
	}
	h.parts.sunsets[info.id] = s
	return s
}

// estimatesInPast reports whether an accepted estimate on mr is in the
// causal past of an entry with these parents (fiscal notice, D53). An
// estimate signed by a key a rotation later makes invalid still counts
// here (admission reads the causal past only; the views above skip it).
func (h *House) estimatesInPast(mr dag.ID, parents []int32) bool {
	for _, ri := range h.parts.estimates[mr] {
		if len(h.ancestorsMissing(parents, []int32{h.ops.recs.at(ri).ent})) == 0 {
			return true
		}
	}
	return false
}

// checkContestFiscal is D53's fiscal notice for a contest: a
// contest.determine that approves a fiscal: true option is refused
// estimate_missing unless an accepted estimate on that option is in its
// causal past, as mr.determine is (causal_checks.go checkFiscal).
func (v *admission) checkContestFiscal(res rules.ContestResult) error {
	if res.IfClosed != rules.Approved {
		return nil
	}
	id, err := dag.ParseID(res.Winner)
	if err != nil {
		return nil // the status quo
	}
	info := v.h.mrs[id]
	if info == nil || !info.body.Fiscal {
		return nil
	}
	if v.h.estimateInPast != nil && v.h.estimateInPast(id, v.parents) {
		return nil
	}
	return dag.Errorf(dag.CodeEstimateMissing, "house: contest approves fiscal MR %s, which has no accepted estimate in the determination's causal past (D53)", id)
}

// Estimates returns every accepted estimate on mr, sorted by opinion id,
// as the fact sheet reads them (estimates, estimate_totals): all side by
// side, none official.
func (h *House) Estimates(mr dag.ID) []statute.Estimate {
	var out []statute.Estimate
	for _, ri := range h.parts.estimates[mr] {
		if h.opinionIgnored(ri) { // signed by a rotated key (D62, rotate.go)
			continue
		}
		rec := h.ops.recs.at(ri)
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil || o.Estimate == nil {
			continue
		}
		out = append(out, statute.Estimate{Opinion: rec.id, Outlays: opinion.Outlays(o.Estimate.ByYear), IfPermanent: opinion.Outlays(o.Estimate.IfPermanent)})
	}
	slices.SortFunc(out, func(a, b statute.Estimate) int { return a.Opinion.Compare(b.Opinion) })
	return out
}

// EstimateOpinions returns the ids of the accepted estimates on mr,
// sorted (the first one a checkpoint includes starts fiscal notice, D53).
func (h *House) EstimateOpinions(mr dag.ID) []dag.ID {
	var out []dag.ID
	for _, ri := range h.parts.estimates[mr] {
		if !h.opinionIgnored(ri) {
			out = append(out, h.ops.recs.at(ri).id)
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}
