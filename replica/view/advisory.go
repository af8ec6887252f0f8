package view

// This file holds the advisory flags of an eventual node (30K open point
// 7): checks the prompt states in checkpoint time, which is per replica,
// so they are recorded beside an MR and never refuse an entry or change
// derived state.
//
// D74 has two parts here. Admission refuses deadline_too_short in
// witnessed time (house, docs/deviations.md "Minimum window (D74)"): every
// replica holding the same entries admits the same MRs. The prompt's own
// words, 72 hours of checkpoint time after the checkpoint including
// mr.open, are judged as well, with this replica's checkpoints: where they
// fail for an admitted MR (this replica checkpointed the open late), the
// MR carries deadline_too_short as an advisory flag, never authoritative.

import (
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/rules"
)

// Advisory is one advisory flag on an MR: what a strong node would refuse,
// judged with this replica's checkpoint times. Never authoritative.
type Advisory struct {
	Code          dag.Code `json:"code"`
	Detail        string   `json:"detail"`
	Authoritative bool     `json:"authoritative"` // always false (D45)
}

// advisories returns v's advisory flags, opened being the checkpoint time
// of this replica's first checkpoint that includes the MR's open (none
// while no checkpoint does: nothing can be judged yet).
//
// D74 in the prompt's words: an on_deadline rule's deadline must be at
// least 72 hours of checkpoint time after the checkpoint including
// mr.open (rules.Rule.CheckWindow).
func advisories(v house.MRView, opened *time.Time) []Advisory {
	out := []Advisory{}
	if opened == nil {
		return out
	}
	r, err := rules.Compile(v.Rule)
	if err != nil {
		return out
	}
	if err := r.CheckWindow(*opened); err != nil {
		out = append(out, Advisory{Code: dag.CodeOf(err), Detail: dag.DetailOf(err)})
	}
	return out
}
