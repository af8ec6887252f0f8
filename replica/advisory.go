package replica

// This file holds the advisory flags of an eventual node (30K open point
// 7): checks the prompt states in checkpoint time, which is per replica,
// so they would be recorded beside an MR and never refuse an entry or
// change derived state.
//
// None is emitted today. D74's deadline_too_short, the one flag there
// was, is now refused at admission in witnessed time, which every replica
// holding the same entries computes alike (house, docs/deviations.md):
// one reading of D74 for mr.open and contest.open. Notice (D42) and
// on_deadline deadlines stay advisory, recorded in each determination's
// evaluation (views.go).

import (
	"github.com/witan-dev/witan/dag"
)

// Advisory is one advisory flag on an MR: what a strong node would refuse,
// judged with this replica's checkpoint times. Never authoritative.
type Advisory struct {
	Code          dag.Code `json:"code"`
	Detail        string   `json:"detail"`
	Authoritative bool     `json:"authoritative"` // always false (D45)
}
