package house

// This file holds read-only accessors for the shell (package replica):
// what the House already derived, handed out so that the shell need not
// derive it again. Nothing here changes the House, and nothing returned
// may be modified by the caller: trees, patches, changes and bodies are
// the House's own, shared with later derivations.

import (
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Change returns a change of the session's Change DAG as this House
// recorded it: the genesis change, every change appended to a branch,
// and every merge change a determination executed, with the parents it
// really has (for a merge executed on a moved target head, the head it
// was executed on, not the MR's open-time head). A change this House
// never recorded is (nil, false).
func (h *House) Change(id dag.ID) (*statute.Change, bool) {
	c, ok := h.changes[id]
	if !ok {
		return nil, false
	}
	return c.c, true
}

// Patch returns the patch derived when merge MR mr opened (30k §6 item
// 2): ops that take the snapshot of the MR's open-time target head to the
// merged snapshot, which is Patch.Result. A governance MR, or an MR this
// House never admitted, has none.
func (h *House) Patch(mr dag.ID) (*statute.Patch, bool) {
	info := h.mrs[mr]
	if info == nil || info.patch == nil {
		return nil, false
	}
	return info.patch, true
}

// MRBody returns the decoded body of an admitted MR (its first admitted
// open: a body opened again concurrently is the same body).
func (h *House) MRBody(mr dag.ID) (*MR, bool) {
	info := h.mrs[mr]
	if info == nil {
		return nil, false
	}
	return info.body, true
}

// SessionBody returns the decoded session.create body, or nil before
// one was admitted.
func (h *House) SessionBody() *SessionBody { return h.body }

// Profile returns the session's text profile, or nil before
// session.create was admitted.
func (h *House) Profile() *statute.Profile { return h.profile }

// PollInputs is what an MR's live poll folds: its rule, its electorate
// (frozen at open, narrowed only by concurrent opens), the ballots it
// counts and the facts it is evaluated with. Folding Ballots into
// rules.NewPoll(Rule, Electorate, mr) gives the live tally.
type PollInputs struct {
	Rule       *rules.Rule
	Electorate *rules.Electorate
	// Ballots are the MR's counted ballots in the order they were
	// admitted; ballots cast after the MR closed in their causal past
	// are not among them.
	Ballots []rules.Ballot
	Facts   rules.Facts
	// ApproverWrites are, for a designated_approvers rule, the
	// group.create/group.update entries that defined the approvers group
	// at the MR's opens (the intersection of their members is the
	// electorate).
	ApproverWrites []dag.ID
}

// PollInputs returns the inputs of MR mr's live poll, or false for an MR
// this House never admitted. It costs O(ballots of the MR).
func (h *House) PollInputs(mr dag.ID) (PollInputs, bool) {
	info := h.mrs[mr]
	if info == nil {
		return PollInputs{}, false
	}
	in := PollInputs{Rule: info.rule, Electorate: info.el, Facts: info.facts, Ballots: make([]rules.Ballot, 0, len(info.cast)),
		ApproverWrites: slices.Clone(info.approverWrites)}
	for _, i := range info.cast {
		b := h.ballots.at(i)
		if b.ignored || b.rotIgnored { // rotIgnored: a rotated key's (D62), not counted
			continue
		}
		in.Ballots = append(in.Ballots, rules.Ballot{Tx: h.ents[b.ent].id, Author: b.author, BallotBody: b.body})
	}
	return in, true
}

// ChoiceVoid marks, in Choices, a member whose ballots void each other.
const ChoiceVoid uint8 = 255

// Choices returns MR mr's live-poll electorate and, for each member by
// position in it, the member's effective choice: 0 for no counted ballot,
// uint8(rules.Approve|Reject|Abstain), or ChoiceVoid. The electorate is
// frozen (it may be read without the House); the choices are a copy. It
// costs O(electorate), no lookups: the Popolo export (D30) walks every MR
// with it. False for an MR this House never admitted.
func (h *House) Choices(mr dag.ID) (*rules.Electorate, []uint8, bool) {
	info := h.mrs[mr]
	if info == nil || info.poll == nil {
		return nil, nil, false
	}
	el := info.poll.Electorate()
	out := make([]uint8, el.Len())
	for i := range out {
		c, void, ok := info.poll.MemberAt(i)
		switch {
		case !ok:
		case void:
			out[i] = ChoiceVoid
		default:
			out[i] = uint8(c)
		}
	}
	return el, out, true
}
