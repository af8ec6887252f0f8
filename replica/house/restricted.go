package house

// This file is restricted branches (30k §4 "Restricted branches
// (commit-then-reveal)", OQ-19; docs/restricted-branches.md): a
// restricted branch.append carries only a salted commitment
// sha256(salt || change id) and a declared size, so the log every peer
// holds never names the change; branch.reveal publishes changes with their
// salts, and every replica checks each against a commitment of the
// branch in the reveal's causal past (commitment_mismatch otherwise)
// before the change joins the Change DAG. An MR from the branch is
// refused (unrevealed_source) unless its source.head is a revealed head.
//
// Nothing here needs the restricted content before the reveal: every
// replica, whether its operator may read the branch or not, holds the
// same entries and derives the same state (the commitments, sizes and
// committing keys), and no replica derives anything from content it
// might hold on the side. The shared files reach this file through hooks
// marked "restricted hook".

import (
	"encoding/base64"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
)

// SaltSize is the size of a commitment's salt in bytes (30k §4: 32
// random bytes, base64url on the wire).
const SaltSize = 32

// MaxRevealChanges bounds the changes one branch.reveal publishes.
const MaxRevealChanges = 256

// MaxRestrictedSize bounds the size a restricted append may declare
// (what its reveal may attach): the node's object limits bound the
// reveal itself.
const MaxRestrictedSize = 1 << 32

// Commitment returns sha256(salt || change) where change is written as
// on the wire ("sha256:<64 hex>"), the commitment a restricted
// branch.append records (docs/restricted-branches.md, provisional bytes).
// It names no object.
func Commitment(salt []byte, change dag.ID) dag.ID {
	b := make([]byte, 0, len(salt)+71)
	b = append(b, salt...)
	b = append(b, change.String()...)
	return dag.Sum(b)
}

// Reveal is a branch.reveal body.
type Reveal struct {
	Branch  string
	Changes []Revealed
}

// Revealed is one change a branch.reveal publishes.
type Revealed struct {
	Commitment dag.ID
	Change     dag.ID
	Salt       []byte
}

func decodeCommitAppend(branch string, change, commitment *string, size *int64) (Append, error) {
	if change != nil {
		return Append{}, schemaf("branch.append: a restricted append carries commitment and size, never the change")
	}
	if commitment == nil || size == nil {
		return Append{}, schemaf("branch.append: a restricted append needs both commitment and size")
	}
	c, err := parseID(commitment, "commitment", true)
	if err != nil {
		return Append{}, err
	}
	if *size < 1 || *size > MaxRestrictedSize {
		return Append{}, schemaf("branch.append: size %d is not in 1..%d", *size, int64(MaxRestrictedSize))
	}
	return Append{Branch: branch, Commitment: c, Size: *size}, nil
}

// DecodeReveal decodes a branch.reveal body {branch, changes: [{commitment,
// change, salt}]}: at least one change, at most MaxRevealChanges, each
// commitment once, each salt SaltSize bytes in base64url without padding.
func DecodeReveal(b []byte) (*Reveal, error) {
	type item struct {
		Commitment *string `json:"commitment"`
		Change     *string `json:"change"`
		Salt       *string `json:"salt"`
	}
	var w struct {
		Branch  *string `json:"branch"`
		Changes *[]item `json:"changes"`
	}
	if err := strict(b, &w, "branch.reveal"); err != nil {
		return nil, err
	}
	if w.Branch == nil || w.Changes == nil {
		return nil, schemaf("branch.reveal: branch and changes are required")
	}
	if err := checkName(*w.Branch, "branch name"); err != nil {
		return nil, err
	}
	if n := len(*w.Changes); n == 0 || n > MaxRevealChanges {
		return nil, schemaf("branch.reveal: %d changes (1..%d)", n, MaxRevealChanges)
	}
	r := &Reveal{Branch: *w.Branch}
	for i, it := range *w.Changes {
		var x Revealed
		var err error
		if x.Commitment, err = parseID(it.Commitment, "branch.reveal: commitment", true); err != nil {
			return nil, err
		}
		if x.Change, err = parseID(it.Change, "branch.reveal: change", true); err != nil {
			return nil, err
		}
		if it.Salt == nil {
			return nil, schemaf("branch.reveal: changes[%d]: salt is required", i)
		}
		if x.Salt, err = base64.RawURLEncoding.Strict().DecodeString(*it.Salt); err != nil || len(x.Salt) != SaltSize {
			return nil, schemaf("branch.reveal: changes[%d]: salt is not %d bytes of base64url without padding", i, SaltSize)
		}
		for _, y := range r.Changes {
			if y.Commitment == x.Commitment {
				return nil, schemaf("branch.reveal: commitment %s is listed twice", x.Commitment)
			}
		}
		r.Changes = append(r.Changes, x)
	}
	return r, nil
}

// commitRec is one commitment recorded on a restricted branch.
type commitRec struct {
	commitment dag.ID
	gov        int32 // governance index of the restricted append
	author     dag.Key
	size       int64
	change     dag.ID // the revealed change; zero until revealed
}

// revealRec is what an admitted branch.reveal carries.
type revealRec struct {
	branch  string
	changes []revealedRec
}

type revealedRec struct {
	commitment dag.ID
	id         dag.ID
	rec        *changeRec
}

// rsAdm is what admission found for a branch.reveal: a restricted hook
// of admission.
type rsAdm struct {
	reveal *revealRec
}

func (r *branchReg) commitOf(c dag.ID) int {
	for i := range r.commits {
		if r.commits[i].commitment == c {
			return i
		}
	}
	return -1
}

// checkRevealedSource is the unrevealed_source rule of an MR whose
// source is the restricted branch r, as seen from the MR's causal past:
// something of the branch is revealed there, and source.head is one of
// its revealed heads. What the MR would merge is exactly source.head's
// ancestry, so it is public (no secret law, 30k §3); commitments made
// after that head and not revealed cannot reach the target through this
// MR, and do not block it (so an owner who never reveals cannot hold the
// branch hostage). docs/restricted-branches.md.
func (r *branchReg) checkRevealedSource(src HeadRef) error {
	revealed := false
	for _, c := range r.commits {
		revealed = revealed || c.change.Valid()
	}
	switch {
	case !revealed:
		return &dag.ProtocolError{Code: dag.CodeUnrevealedSource, Detail: "house: nothing of restricted branch " + src.Branch + " is revealed in the MR's causal past"}
	case !slices.Contains(r.heads, src.Head):
		return &dag.ProtocolError{Code: dag.CodeUnrevealedSource, Detail: "house: source.head " + src.Head.String() + " is not a revealed head of restricted branch " + src.Branch}
	}
	return nil
}

// restrictedAppend judges a restricted branch.append: the signer is a
// member of the owner group of an unprotected restricted branch, and the
// commitment is new on the branch. Its content is not judged: no one but
// the owners holds it before the reveal.
func (v *admission) restrictedAppend(a Append) error {
	br := v.st.branch(a.Branch)
	switch {
	case br == nil:
		return notAuth("branch %q does not exist (or is conflicted) in the causal past", a.Branch)
	case !br.cfg.restricted:
		return dag.Errorf(dag.CodeSchema, "house: branch %q is public: its appends carry the change, not a commitment", a.Branch)
	case br.cfg.protected:
		return notAuth("branch %q is protected: only approved MRs change its head", a.Branch)
	}
	owner := v.st.group(br.cfg.owner)
	if owner == nil || !owner.isMember(v.env.Author) {
		return notAuth("%s is not a member of owner group %q", v.env.Author, br.cfg.owner)
	}
	if br.commitOf(a.Commitment) >= 0 {
		return notAuth("commitment %s is already recorded on branch %q", a.Commitment, a.Branch)
	}
	v.app = a
	return nil
}

// branchReveal judges a branch.reveal: signed by a member of the owner
// group; each change's salt and id hash to a commitment of the branch in
// the reveal's causal past that is not revealed there yet; the change was
// authored by the key that committed to it; and, in the listed order,
// each change follows exactly the branch's revealed heads and its ops
// applied to its base give its result (as a public append).
func (v *admission) branchReveal() error {
	rv, err := DecodeReveal(v.env.Body)
	if err != nil {
		return err
	}
	br := v.st.branch(rv.Branch)
	switch {
	case br == nil:
		return notAuth("branch %q does not exist (or is conflicted) in the causal past", rv.Branch)
	case !br.cfg.restricted:
		return dag.Errorf(dag.CodeSchema, "house: branch %q is public: there is nothing to reveal", rv.Branch)
	}
	owner := v.st.group(br.cfg.owner)
	if owner == nil || !owner.isMember(v.env.Author) {
		return notAuth("%s is not a member of owner group %q", v.env.Author, br.cfg.owner)
	}
	heads := slices.Clone(br.heads)
	rec := &revealRec{branch: rv.Branch}
	local := map[dag.ID]*changeRec{}
	for _, x := range rv.Changes {
		i := br.commitOf(x.Commitment)
		if i < 0 {
			return dag.Errorf(dag.CodeCommitmentMismatch, "house: no restricted append of branch %q in the causal past commits to %s", rv.Branch, x.Commitment)
		}
		cm := br.commits[i]
		if cm.change.Valid() {
			return notAuth("commitment %s is already revealed in the causal past", x.Commitment)
		}
		if Commitment(x.Salt, x.Change) != x.Commitment {
			return dag.Errorf(dag.CodeCommitmentMismatch, "house: sha256(salt || %s) is not commitment %s", x.Change, x.Commitment)
		}
		raw, err := v.h.object(x.Change, "change")
		if err != nil {
			return err
		}
		c, _, id, err := statute.DecodeChange(raw)
		if err != nil {
			return err
		}
		if id != x.Change {
			return dag.Errorf(dag.CodeSchema, "house: change object is not canonical")
		}
		if c.Author != cm.author.String() {
			return notAuth("change %s is authored by %s, not by %s, who committed to it", id, c.Author, cm.author)
		}
		if !slices.Equal(sortedIDs(slices.Clone(c.Parents)), heads) {
			return dag.Errorf(dag.CodeStaleMR, "house: revealed change %s does not follow exactly the revealed heads of branch %q", id, rv.Branch)
		}
		var base *statute.Tree
		if p, ok := local[c.Parents[0]]; ok {
			base = p.tree
		} else if base, err = v.h.tree(c.Parents[0]); err != nil {
			return err
		}
		out, err := c.Verify(base)
		if err != nil {
			return err
		}
		cr := &changeRec{c: c, tree: out}
		local[id] = cr
		heads = []dag.ID{id}
		rec.changes = append(rec.changes, revealedRec{commitment: x.Commitment, id: id, rec: cr})
	}
	v.reveal = rec
	return nil
}

// commitReveal records the revealed changes in the Change DAG.
func (v *admission) commitReveal(gs *govStatic) {
	for _, x := range v.reveal.changes {
		if _, ok := v.h.changes[x.id]; !ok {
			v.h.changes[x.id] = x.rec
		}
	}
	gs.reveal = v.reveal
}

// applyCommit folds a restricted append into st: the commitment joins the
// branch's, kept sorted by commitment so that the register is a function
// of the set of appends.
func (h *House) applyCommit(st *govState, g int32, a Append) {
	old := st.branches[a.Branch]
	if old == nil || old.cfg == nil || old.commitOf(a.Commitment) >= 0 {
		return
	}
	r := *old
	r.commits = append(slices.Clone(old.commits), commitRec{commitment: a.Commitment, gov: g, author: h.gd[g].author, size: a.Size})
	slices.SortFunc(r.commits, func(x, y commitRec) int { return x.commitment.Compare(y.commitment) })
	st.branches[a.Branch] = &r
}

// applyReveal folds a branch.reveal into st: its commitments are marked
// revealed and its changes move the heads as appends do. A change that a
// concurrent reveal already revealed changes nothing again.
func (h *House) applyReveal(st *govState, rv *revealRec) {
	old := st.branches[rv.branch]
	if old == nil || old.cfg == nil {
		return
	}
	r := *old
	r.commits = slices.Clone(old.commits)
	for _, x := range rv.changes {
		i := r.commitOf(x.commitment)
		if i < 0 {
			continue // the commitment's append is conflicted away in this wider state
		}
		r.commits[i].change = x.id
		c := x.rec.c
		heads := make([]dag.ID, 0, len(r.heads)+1)
		for _, hd := range r.heads {
			if !slices.Contains(c.Parents, hd) {
				heads = append(heads, hd)
			}
		}
		r.heads = sortedIDs(append(heads, x.id))
	}
	st.branches[rv.branch] = &r
}

// CommitmentView is one commitment of a restricted branch as derived:
// what every peer learns of a restricted change (docs/restricted-branches.md).
type CommitmentView struct {
	Commitment dag.ID  `json:"commitment"`
	Size       int64   `json:"size"`
	Author     dag.Key `json:"author"`
	Tx         dag.ID  `json:"tx"`       // the restricted branch.append
	Revealed   *dag.ID `json:"revealed"` // the revealed change, null until revealed
}

func (h *House) commitViews(r *branchReg) []CommitmentView {
	out := make([]CommitmentView, 0, len(r.commits))
	for _, c := range r.commits {
		cv := CommitmentView{Commitment: c.commitment, Size: c.size, Author: c.author, Tx: h.ents[h.gov[c.gov]].id}
		if c.change.Valid() {
			id := c.change
			cv.Revealed = &id
		}
		out = append(out, cv)
	}
	return out
}

// IsCommitAppend reports whether body is a well-formed restricted
// branch.append (a commitment, no change): such an entry refers to no
// object, and a node must keep none that comes with it.
func IsCommitAppend(body []byte) bool {
	a, err := DecodeAppend(body)
	return err == nil && a.Commitment.Valid()
}
