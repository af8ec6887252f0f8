package replica

// This file holds the advisory flags of an eventual node (30K open point
// 7): checks the prompt states in checkpoint time, which is per replica,
// so they are recorded beside an MR and never refuse an entry or change
// derived state.

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
// of this replica's first checkpoint that includes the MR's open (nil
// while none does: nothing can be judged yet).
//
// D74: an on_deadline rule's deadline must be at least 72 hours of
// checkpoint time after the checkpoint including mr.open, else
// deadline_too_short (rules.Rule.CheckWindow).
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
