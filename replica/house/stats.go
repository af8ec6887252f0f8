package house

// This file describes the binding record to the metric registry of 30k
// §8 (D35): per MR, its opener, the group owning its source branch, its
// live tally, the members with an effective ballot, whether it merged.
// Opinions are never read.

import (
	"encoding/json"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// StatsRecord describes every MR of the House for the metric registry.
// cp maps an entry to the 1-based index of the caller's first checkpoint
// that includes it (0: none), for checkpoints_to_determination.
func (h *House) StatsRecord(cp func(dag.ID) uint64) *opinion.StatsRecord {
	st := h.global()
	owners := map[string]string{}
	for name, b := range st.branches {
		if c := h.branchView(name, b); c.Owner != "" {
			owners[name] = c.Owner
		}
	}
	rec := &opinion.StatsRecord{Voted: map[dag.Key]uint64{}}
	for _, id := range h.MRs() {
		if st.mrs[id] == nil {
			continue
		}
		v := h.mrView(st, id)
		m := opinion.MRStats{ID: id, Merged: v.Status == "merged"}
		if len(v.OpenedBy) > 0 {
			first := slices.MinFunc(v.OpenedBy, dag.ID.Compare)
			if k, _, ok := h.authorOf(first); ok {
				m.Opener = k
			}
			if cp != nil {
				m.OpenCP = cp(first)
			}
		}
		if v.Source != nil {
			m.Group = owners[v.Source.Branch]
		} else {
			m.Group = owners[v.Target.Branch]
		}
		t := v.Live.Tally
		m.Electorate, m.Approve, m.Reject, m.Abstain = t.Electorate, t.Approve, t.Reject, t.Abstain
		if t.RuleShare != nil {
			m.RuleShare, _ = json.Marshal(t.RuleShare)
		}
		for _, d := range v.Determinations {
			if d.Executed {
				m.Decided = true
				if cp != nil {
					m.DetCP = cp(d.Tx)
				}
			}
		}
		if in, ok := h.PollInputs(id); ok {
			seen := map[dag.Key]bool{}
			for _, b := range in.Ballots {
				if seen[b.Author] {
					continue
				}
				seen[b.Author] = true
				if c, void := h.MemberChoice(b.Author, id); c != "" && !void {
					rec.Voted[b.Author]++
				}
			}
		}
		rec.MRs = append(rec.MRs, m)
	}
	return rec
}
