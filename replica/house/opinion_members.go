package house

// This file admits and records the opinion members beyond the opinion
// layer's first part (replica/opinion members.go): affiliation
// attestations (D76), jurisdiction choices (D73), feasibility (D70), and
// cost estimates (D53, D69, D75; their checks and lists are estimates.go).
// Each is judged against the opinion's causal past only, so every replica
// accepts the same opinions; what they feed (the fact sheet's estimates
// and estimate_totals, fiscal notice) is read from the records here.

import (
	"cmp"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/statute"
)

// partsState is the House's record of those members.
type partsState struct {
	// estimates lists, per MR, the records of accepted estimates on it
	// (indexes into ops.recs), in admission order.
	estimates map[dag.ID][]int32
	// sunsets caches, per merge MR, whether its fact sheet lists a sunset.
	sunsets map[dag.ID]bool
	// districts is the session's decoded district table (D72), once read.
	districts     *Districts
	districtsRead bool
	// attests lists, per attested key and organization, the records of
	// accepted attestations (D76).
	attests map[attestKey][]int32
	// affiliated holds the records whose disclosure lists affiliations,
	// so that a page of opinions decodes only those bodies.
	affiliated map[int32]bool
	// feasible lists, per MR, the records of accepted feasibility
	// opinions on it (D70).
	feasible map[dag.ID][]int32
	// choices lists the records of accepted jurisdiction choices (D73).
	choices []int32
	// exchanges lists, per MR, the records of accepted exchanges on it
	// (D67), in admission order.
	exchanges map[dag.ID][]int32
}

type attestKey struct {
	key dag.Key
	org string
}

// checkParts judges the served members of o at its causal point. Codes:
// unknown_parent (an estimate's MR is not opened in the causal past),
// estimate_incomplete, attestation_invalid.
func (v *admission) checkParts(o *opinion.Opinion) error {
	if err := opinion.CheckParts(o, v.env.Author); err != nil {
		return err
	}
	if e := o.Estimate; e != nil {
		c, err := v.estimateContext(e.MR)
		if err != nil {
			return err
		}
		if err := opinion.CheckEstimate(e, c); err != nil {
			return err
		}
	}
	if f := o.Feasibility; f != nil {
		if v.st.mrs[f.MR] == nil || v.h.mrs[f.MR] == nil {
			return dag.Errorf(dag.CodeUnknownParent, "house: feasibility.mr %s is not an MR opened in the opinion's causal past", f.MR)
		}
	}
	if x := o.Exchange; x != nil {
		if err := v.checkExchange(x); err != nil {
			return err
		}
	}
	if o.JurisdictionChoice != nil {
		if _, ok := v.h.jurisdictionOf(v.env.Author); !ok {
			return dag.Errorf(dag.CodeNotAuthorized, "house: jurisdiction_choice: the signer is not the key the session names for any jurisdiction (D73)")
		}
	}
	return nil
}

// checkJurisdictionKeys: the keys a session names for its jurisdictions
// (D73) are well formed, each names one jurisdiction, and only a research
// (simulation) session names them.
func checkJurisdictionKeys(s *SessionBody) error {
	seen := map[dag.Key]bool{}
	for _, j := range s.Jurisdictions {
		if j.Key == "" {
			continue
		}
		if !s.Simulation {
			return schemaf("session.create: only a research session (simulation: true) names jurisdiction keys (D73)")
		}
		k, err := dag.ParseKey(j.Key)
		if err != nil || k.String() != j.Key {
			return schemaf("session.create: jurisdiction %q: key %q is not ed25519:<key>", dag.Trunc(j.Code), dag.Trunc(j.Key))
		}
		if seen[k] {
			return schemaf("session.create: key %s is named for two jurisdictions", j.Key)
		}
		seen[k] = true
	}
	return nil
}

// jurisdictionOf returns the jurisdiction code whose key is k.
func (h *House) jurisdictionOf(k dag.Key) (string, bool) {
	if h.body == nil {
		return "", false
	}
	for _, j := range h.body.Jurisdictions {
		if j.Key != "" && j.Key == k.String() {
			return j.Code, true
		}
	}
	return "", false
}

// ChoiceOpinions returns the ids of the accepted jurisdiction choices.
func (h *House) ChoiceOpinions() []dag.ID {
	out := make([]dag.ID, 0, len(h.parts.choices))
	for _, ri := range h.parts.choices {
		out = append(out, h.ops.recs.at(ri).id)
	}
	return out
}

// OptIns returns the recorded jurisdiction choices (D73) for /law, in
// the order of their opinions' ts, then id: statute's optedIn lets the
// later of two choices with one effective date win.
func (h *House) OptIns() []statute.OptIn {
	recs := slices.Clone(h.parts.choices)
	slices.SortFunc(recs, func(a, b int32) int {
		ra, rb := h.ops.recs.at(a), h.ops.recs.at(b)
		if ra.ts != rb.ts {
			return cmp.Compare(ra.ts, rb.ts)
		}
		return ra.id.Compare(rb.id)
	})
	var out []statute.OptIn
	for _, ri := range recs {
		if h.opinionIgnored(ri) {
			continue
		}
		rec := h.ops.recs.at(ri)
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil || o.JurisdictionChoice == nil {
			continue
		}
		code, ok := h.jurisdictionOf(rec.author)
		eff, err := statute.ParseDate(o.JurisdictionChoice.Effective)
		if !ok || err != nil {
			continue
		}
		out = append(out, statute.OptIn{Jurisdiction: code, Program: o.JurisdictionChoice.Program, In: o.JurisdictionChoice.Choice == "opt_in", Effective: eff})
	}
	return out
}

// sessionDistricts is the session's district table, nil without one.
func (h *House) sessionDistricts() *Districts {
	p := &h.parts
	if !p.districtsRead && h.body != nil {
		p.districtsRead = true
		if h.body.Districts.Valid() {
			if raw, err := h.object(h.body.Districts, "district table"); err == nil {
				p.districts, _ = DecodeDistricts(raw)
			}
		}
	}
	return p.districts
}

// commitParts records the served members of an accepted opinion (record
// ri).
func (h *House) commitParts(ri int32, o *opinion.Opinion) {
	p := &h.parts
	if e := o.Estimate; e != nil {
		if p.estimates == nil {
			p.estimates = map[dag.ID][]int32{}
		}
		p.estimates[e.MR] = append(p.estimates[e.MR], ri)
		h.estimateInPast = h.estimatesInPast
	}
	if a := o.Attest; a != nil {
		if p.attests == nil {
			p.attests = map[attestKey][]int32{}
		}
		k := attestKey{a.Key, a.Organization}
		p.attests[k] = append(p.attests[k], ri)
	}
	if o.JurisdictionChoice != nil {
		p.choices = append(p.choices, ri)
	}
	if d := o.Disclosure; d != nil && len(d.Affiliations) > 0 {
		if p.affiliated == nil {
			p.affiliated = map[int32]bool{}
		}
		p.affiliated[ri] = true
	}
	if x := o.Exchange; x != nil {
		if p.exchanges == nil {
			p.exchanges = map[dag.ID][]int32{}
		}
		p.exchanges[x.MR] = append(p.exchanges[x.MR], ri)
	}
	if f := o.Feasibility; f != nil {
		if p.feasible == nil {
			p.feasible = map[dag.ID][]int32{}
		}
		p.feasible[f.MR] = append(p.feasible[f.MR], ri)
	}
}

// Affiliations returns, for each organization opinion id's disclosure
// lists, the key attesting its signer for it or "unattested" (D76), as of
// the record's date: the UTC date of the largest witnessed time of any
// admitted entry, so every replica holding the same entries shows the
// same. ok is false for an unknown opinion.
func (h *House) Affiliations(id dag.ID) ([]opinion.Affiliation, bool) {
	ri, ok := h.ops.byID[id]
	if !ok {
		return nil, false
	}
	if !h.parts.affiliated[ri] {
		return []opinion.Affiliation{}, true
	}
	rec := h.ops.recs.at(ri)
	o, err := opinion.DecodeCanonical(rec.body)
	if err != nil || o.Disclosure == nil || len(o.Disclosure.Affiliations) == 0 {
		return []opinion.Affiliation{}, true
	}
	var recs []opinion.AttestRecord
	for _, org := range o.Disclosure.Affiliations {
		for _, ai := range h.parts.attests[attestKey{rec.author, org}] {
			if h.opinionIgnored(ai) {
				continue
			}
			ar := h.ops.recs.at(ai)
			ao, err := opinion.DecodeCanonical(ar.body)
			if err != nil || ao.Attest == nil {
				continue
			}
			r := opinion.AttestRecord{Opinion: ar.id, Attester: ar.author, TS: ar.ts, Attest: *ao.Attest}
			if ao.Disclosure != nil {
				r.Disclosed = ao.Disclosure.Affiliations
			}
			recs = append(recs, r)
		}
	}
	today := time.Unix(h.cs().maxWit, 0).UTC().Format("2006-01-02")
	return opinion.Affiliations(rec.author, o.Disclosure.Affiliations, recs, today), true
}

// Feasibility returns every accepted feasibility opinion on mr (D70),
// sorted by opinion id, as the checks (effective_before_feasible) and the
// fact sheet (feasibility) read them: side by side, never blocking.
func (h *House) Feasibility(mr dag.ID) []statute.Feasibility {
	var out []statute.Feasibility
	for _, ri := range h.parts.feasible[mr] {
		if h.opinionIgnored(ri) {
			continue
		}
		rec := h.ops.recs.at(ri)
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil || o.Feasibility == nil {
			continue
		}
		d, err := statute.ParseDate(o.Feasibility.Earliest)
		if err != nil {
			continue
		}
		out = append(out, statute.Feasibility{Opinion: rec.id, Nodes: o.Feasibility.Nodes, Earliest: d})
	}
	slices.SortFunc(out, func(a, b statute.Feasibility) int { return a.Opinion.Compare(b.Opinion) })
	return out
}

// checkExchange judges an exchange (D67) at the opinion's causal point:
// only a research (simulation) session admits one (schema); its MR must
// be opened and its offered change known in the causal past, as every
// object a body names (unknown_parent); its prior, when set, must be an
// accepted exchange on the same MR in the causal past (unknown_parent if
// no such opinion is there, schema if it is one about another MR or no
// exchange at all).
func (v *admission) checkExchange(x *opinion.Exchange) error {
	h := v.h
	if !h.Simulation() {
		return schemaf("exchange: only a research session (simulation: true) records exchanges (D67)")
	}
	if v.st.mrs[x.MR] == nil || h.mrs[x.MR] == nil {
		return dag.Errorf(dag.CodeUnknownParent, "house: exchange.mr %s is not an MR opened in the opinion's causal past", x.MR)
	}
	if _, known := h.changes[x.Offer]; !known {
		if _, err := h.object(x.Offer, "exchange offer"); err != nil {
			return err
		}
	}
	if !x.Prior.Valid() {
		return nil
	}
	ri, ok := h.ops.byID[x.Prior]
	if !ok || len(h.ancestorsMissing(v.parents, []int32{h.ops.recs.at(ri).ent})) > 0 {
		return dag.Errorf(dag.CodeUnknownParent, "house: exchange.prior %s is not an opinion in the causal past", x.Prior)
	}
	p, err := opinion.DecodeCanonical(h.ops.recs.at(ri).body)
	if err != nil || p.Exchange == nil || p.Exchange.MR != x.MR {
		return schemaf("exchange.prior %s is not an exchange on MR %s", x.Prior, x.MR)
	}
	return nil
}

// ExchangeRecord is one accepted exchange (D67) as the views list it.
type ExchangeRecord struct {
	Opinion dag.ID
	Author  dag.Key
	opinion.Exchange
}

// Exchanges returns the accepted exchanges on mr in chain order: each
// exchange after its prior, exchanges answering the same one (or first
// offers) by opinion id. Every replica holding the same entries lists the
// same.
func (h *House) Exchanges(mr dag.ID) []ExchangeRecord {
	var all []ExchangeRecord
	for _, ri := range h.parts.exchanges[mr] {
		if h.opinionIgnored(ri) {
			continue
		}
		rec := h.ops.recs.at(ri)
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil || o.Exchange == nil {
			continue
		}
		all = append(all, ExchangeRecord{Opinion: rec.id, Author: rec.author, Exchange: *o.Exchange})
	}
	slices.SortFunc(all, func(a, b ExchangeRecord) int { return a.Opinion.Compare(b.Opinion) })
	answers := map[dag.ID][]ExchangeRecord{}
	known := map[dag.ID]bool{}
	for _, x := range all {
		known[x.Opinion] = true
	}
	var roots []ExchangeRecord
	for _, x := range all {
		if x.Prior.Valid() && known[x.Prior] {
			answers[x.Prior] = append(answers[x.Prior], x)
		} else {
			roots = append(roots, x)
		}
	}
	out := make([]ExchangeRecord, 0, len(all))
	var walk func(x ExchangeRecord)
	walk = func(x ExchangeRecord) {
		out = append(out, x)
		for _, a := range answers[x.Opinion] {
			walk(a)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}
