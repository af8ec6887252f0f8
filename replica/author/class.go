package author

// This file is the classroom family: the few steps a class takes, each
// planned first (what will be signed, and what it does, computed without
// signing) and sealed second, so that a page or a command line can show
// the plan to the member and sign exactly what was shown. witan's
// classroom page and witan mr open / mr close use it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Plain-language texts of the class template's two rules: a rule's text
// travels with the session (30k §5), and these are what a class reads.
var (
	ClassMajorityText = []byte("A proposal to change the class rules passes when more than half of the whole class approves it, " +
		"and at least half of the class has voted. It passes as soon as enough approvals are in, and fails as soon as " +
		"that can no longer happen. (threshold_vote: num 1, den 2, cmp gt, basis electorate, quorum 1/2, closing on_threshold; " +
		"a notice of 72 hours, which a classroom laptop treats as advisory.)")
	ClassTwoThirdsText = []byte("A change to how the class rules are changed passes when at least two thirds of the whole class " +
		"approves it, and at least half of the class has voted. (threshold_vote: num 2, den 3, cmp gte, basis electorate, " +
		"quorum 1/2, closing on_threshold.)")
)

// ClassSeed is the class template's seed statute: three short sections a
// class can amend.
func ClassSeed() *statute.Tree {
	sec := func(n int, heading, text string) statute.NodeSpec {
		return statute.NodeSpec{NID: fmt.Sprintf("/us/t1/s%d", n), Kind: "section", Heading: heading, Text: text}
	}
	return statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{{
		NID: "/us/t1", Kind: "title", Heading: "Class rules", Children: []statute.NodeSpec{
			sec(1, "Homework", "Homework is due 7 days after it is set."),
			sec(2, "Phones", "Phones stay in bags during lessons."),
			sec(3, "Class meetings", "The class meets every Monday to review these rules."),
		}}}})
}

// ClassSession returns the template's session.create: an education
// session (so a simulation) on ClassSeed, whose root rule is a majority
// of the class with the 72 hours of notice D42 requires and whose root
// governance rule is two thirds (D38), both texts attached. registrar is
// the registrar group's id: the one part of the body StartClass makes
// unique, since the session's id is the hash of its body and two classes
// of the same name must not be one session.
func ClassSession(label, registrar string) (Session, error) {
	if strings.TrimSpace(label) == "" {
		label = "Class rules"
	}
	maj, err := Majority(house.MinRootNotice, dag.Sum(ClassMajorityText))
	if err != nil {
		return Session{}, err
	}
	two, err := TwoThirds(dag.Sum(ClassTwoThirdsText))
	if err != nil {
		return Session{}, err
	}
	return Session{Label: label, Seed: ClassSeed(), Simulation: true, Education: true, Registrar: registrar, Roster: "roster",
		RootRule: maj, RootGovernanceRule: two, Texts: [][]byte{ClassMajorityText, ClassTwoThirdsText}}, nil
}

// StartClass signs the three transactions that start a class from the
// template: the session.create, and the roster and registrar groups with
// the teacher (this author) as their one member and admin. Each names the
// one before as its parent; submit them in order. The registrar group's
// id carries 48 random bits, so every class is a session of its own.
func (a *Author) StartClass(ctx context.Context, label string) ([]Tx, error) {
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	s, err := ClassSession(label, "registrar-"+hex.EncodeToString(nonce[:]))
	if err != nil {
		return nil, err
	}
	create, err := a.SessionCreate(ctx, s)
	if err != nil {
		return nil, err
	}
	me := []dag.Key{a.Key()}
	roster, err := a.GroupCreate(ctx, create.Made, Group{ID: "roster", Members: me, Admins: me}, []dag.ID{create.ID})
	if err != nil {
		return nil, err
	}
	reg, err := a.GroupCreate(ctx, create.Made, Group{ID: s.Registrar, Members: me, Admins: me}, []dag.ID{roster.ID})
	if err != nil {
		return nil, err
	}
	return []Tx{create, roster, reg}, nil
}

// group returns the group id of st, or nil.
func stateGroup(st *house.State, id string) *house.GroupView {
	for i := range st.Groups {
		if st.Groups[i].ID == id {
			return &st.Groups[i]
		}
	}
	return nil
}

func stateBranch(st *house.State, name string) *house.BranchView {
	for i := range st.Branches {
		if st.Branches[i].Name == name {
			return &st.Branches[i]
		}
	}
	return nil
}

// Enrol returns the roster group with keys added (sorted, without
// repeats), for a GroupUpdate signed by a roster admin; added lists the
// keys that were not members yet.
func Enrol(st *house.State, keys []dag.Key) (g Group, added []dag.Key, err error) {
	r := stateGroup(st, "roster")
	if r == nil || len(r.Members) == 0 {
		return Group{}, nil, errors.New("author: the session has no roster group (or it is conflicted)")
	}
	members := slices.Clone(r.Members)
	for _, k := range keys {
		if !slices.Contains(members, k) {
			members = append(members, k)
			added = append(added, k)
		}
	}
	sortKeys(members)
	admins := slices.Clone(r.Admins)
	sortKeys(admins)
	return Group{ID: r.ID, Members: members, Admins: admins}, added, nil
}

func sortKeys(ks []dag.Key) {
	slices.SortFunc(ks, func(a, b dag.Key) int { return strings.Compare(a.String(), b.String()) })
}

// Amendment is a member's proposal to set the text of one section of the
// law in force: what PlanAmendment turns into an MR.
type Amendment struct {
	NID     string
	Text    string
	Summary string // the proposer's own words (optional)
}

// AmendPlan is an amendment planned and not signed: everything the
// transactions will carry that does not depend on the signature or the
// time, so the member sees the diff and the MR's id before signing, and
// Amend signs exactly that.
type AmendPlan struct {
	Session dag.ID
	Author  dag.Key
	// Group is the author's drafting group (DraftGroup), created first when
	// NewGroup.
	Group    string
	NewGroup bool
	// Branch is the amendment's branch, forked from the root's head.
	Branch  string
	LawHead dag.ID
	Law     *statute.Tree
	Ops     []statute.Op
	Message string
	// Change is the id of the change the branch.append carries, Result
	// the law it makes.
	Change dag.ID
	Result *statute.Tree
	// MR is the merge request, MRID its id.
	MR   MR
	MRID dag.ID
	// Diff is the change as people read it (statute.Diff.Unified).
	Diff string
	// rules of the branch: the root's, whose texts the session holds.
	mergeRule, govRule rules.Ref
}

// DraftGroup is the id of key's drafting group: a group of one, which
// owns the branches key drafts on.
func DraftGroup(key dag.Key) string {
	s := strings.TrimPrefix(key.String(), "ed25519:")
	return "drafts-" + s[:min(len(s), 12)]
}

// PlanAmendment plans the MR that sets am.NID's text in the law law (the
// root's text at head lawHead, as GET /law serves it) in session state
// st, proposed by key: a branch of its own from the root's head (owned by
// key's drafting group, created if it does not exist), one change on it,
// and an MR into the root under the root's merge rule, whose electorate
// is the roster now.
func PlanAmendment(st *house.State, law *statute.Tree, lawHead dag.ID, key dag.Key, am Amendment) (*AmendPlan, error) {
	root := stateBranch(st, house.RootBranch)
	switch {
	case root == nil || len(root.Heads) != 1:
		return nil, errors.New("author: the root branch has no single head")
	case root.Heads[0] != lawHead:
		return nil, fmt.Errorf("author: the law given is at %s, the root's head is %s", lawHead, root.Heads[0])
	case root.MergeRule == nil || root.GovernanceRule == nil:
		return nil, errors.New("author: the root branch's rules are not known")
	}
	roster := stateGroup(st, "roster")
	if roster == nil || !slices.Contains(roster.Members, key) {
		return nil, fmt.Errorf("author: %s is not in the roster: only members propose amendments", key)
	}
	n, ok := law.Get(am.NID)
	if !ok {
		return nil, fmt.Errorf("author: the law has no section %s", am.NID)
	}
	text := strings.TrimSpace(am.Text)
	if text == n.Text {
		return nil, fmt.Errorf("author: the new text of %s is the text in force", am.NID)
	}
	op, err := Replace(law, am.NID, text)
	if err != nil {
		return nil, err
	}
	ops := []statute.Op{op}
	res, err := statute.Apply(law, ops)
	if err != nil {
		return nil, err
	}
	p := &AmendPlan{Session: st.Session, Author: key, Group: DraftGroup(key), LawHead: lawHead, Law: law, Ops: ops, Result: res,
		mergeRule: *root.MergeRule, govRule: *root.GovernanceRule}
	p.Message = am.Summary
	if p.Message == "" {
		p.Message = "Set the text of " + am.NID
	}
	if g := stateGroup(st, p.Group); g == nil {
		p.NewGroup = true
	} else if !slices.Contains(g.Admins, key) {
		return nil, fmt.Errorf("author: group %q exists and %s is not its admin", p.Group, key)
	}
	ch := &statute.Change{Base: law.Hash(), Ops: ops, Result: res.Hash(), Parents: []dag.ID{lawHead}, Message: p.Message, Author: key.String()}
	b, err := ch.Canonical()
	if err != nil {
		return nil, err
	}
	p.Change = dag.Sum(b)
	p.Branch = "amend-" + strings.TrimPrefix(p.Change.String(), "sha256:")[:12]
	if stateBranch(st, p.Branch) != nil {
		return nil, fmt.Errorf("author: branch %q exists: this amendment has been proposed already", p.Branch)
	}
	members := slices.Clone(roster.Members)
	p.MR = MR{Source: p.Branch, SourceHead: p.Change, Target: house.RootBranch, TargetHead: lawHead, Members: members,
		Rule: *root.MergeRule, Summary: am.Summary}
	if _, p.MRID, err = MRBody(st.Session, p.MR); err != nil {
		return nil, err
	}
	p.Diff = statute.Compare(law, res).Unified()
	return p, nil
}

// Amend signs the plan's transactions: the drafting group (if new), the
// branch, the change and the MR, each the parent of the next, the first
// with parents. The MR's id is the plan's MRID.
func (a *Author) Amend(ctx context.Context, p *AmendPlan, parents []dag.ID) ([]Tx, error) {
	if a.Key() != p.Author {
		return nil, fmt.Errorf("author: the plan is %s's, the signer is %s", p.Author, a.Key())
	}
	var out []Tx
	next := func(tx Tx, err error) error {
		if err != nil {
			return err
		}
		out = append(out, tx)
		parents = []dag.ID{tx.ID}
		return nil
	}
	me := []dag.Key{a.Key()}
	if p.NewGroup {
		if err := next(a.GroupCreate(ctx, p.Session, Group{ID: p.Group, Members: me, Admins: me}, parents)); err != nil {
			return nil, err
		}
	}
	if err := next(a.BranchCreate(ctx, p.Session, Branch{Name: p.Branch, Owner: p.Group, SourceBranch: house.RootBranch,
		SourceChange: p.LawHead, MergeRule: p.mergeRule, GovernanceRule: p.govRule}, parents)); err != nil {
		return nil, err
	}
	tx, app, err := a.BranchAppend(ctx, p.Session, Change{Branch: p.Branch, Parent: p.LawHead, Base: p.Law, Ops: p.Ops, Message: p.Message}, parents)
	if err != nil {
		return nil, err
	}
	if app.Change != p.Change {
		return nil, fmt.Errorf("author: the change signed is %s, the plan's %s", app.Change, p.Change)
	}
	next(tx, nil)
	open, err := a.MROpen(ctx, p.Session, p.MR, parents)
	if err != nil {
		return nil, err
	}
	if open.Made != p.MRID {
		return nil, fmt.Errorf("author: the MR signed is %s, the plan's %s", open.Made, p.MRID)
	}
	return append(out, open), nil
}

// ErrNothingToClose is returned by PlanClose when the rule allows no
// determination yet: the outcome of closing now would be pending.
var ErrNothingToClose = errors.New("the rule allows no determination yet: closing now would leave it pending")

// PlanClose is the determination of mr that the rule allows over exactly
// ballots (every ballot cast on it that the closer holds, in log order):
// the outcome of closing the poll now, res.IfClosed, from the tally over
// those same ballots. It refuses when the tally counted another number of
// ballots (one arrived between the reads: read again) or when the outcome
// would be pending.
func PlanClose(mr dag.ID, res rules.Result, ballots []dag.ID) (Determination, error) {
	if uint64(len(ballots)) != res.Tally.Ballots {
		return Determination{}, fmt.Errorf("the tally counted %d ballots and the log holds %d: a ballot arrived while reading; try again", res.Tally.Ballots, len(ballots))
	}
	if res.IfClosed == rules.Pending || res.IfClosed == "" {
		return Determination{}, ErrNothingToClose
	}
	return Determination{MR: mr, Ballots: slices.Clone(ballots), Outcome: string(res.IfClosed)}, nil
}
