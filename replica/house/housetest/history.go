package housetest

// This file generates random session histories for property tests: several
// authors act on partial views and sync now and then, so entries conflict
// and some are refused on purpose.

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// view is one author's partial knowledge while a history is generated: the
// transactions it has seen, admitted into its own House.
type view struct {
	h    *house.House
	seen map[dag.ID]bool
	bad  map[dag.ID]bool
	txs  []Tx // in the order seen
}

// History is a random session: several views act concurrently and sync now
// and then, so entries conflict; some actions are unauthorised or wrong on
// purpose.
type History struct {
	B     *Builder
	All   []Tx // in generation order (a causal order)
	views []*view
	mrEl  map[dag.ID][]dag.Key
}

func (hs *History) add(t *rapid.T, v *view, tx Tx) {
	hs.All = append(hs.All, tx)
	hs.deliver(v, tx)
}

func (hs *History) deliver(v *view, tx Tx) {
	if v.seen[tx.ID] {
		return
	}
	v.seen[tx.ID] = true
	v.txs = append(v.txs, tx)
	for _, p := range tx.Parents {
		if v.bad[p] {
			v.bad[tx.ID] = true
			return
		}
	}
	if err := v.h.Admit(tx.ID, tx.Env); err != nil {
		if dag.CodeOf(err) == "" {
			panic(err)
		}
		v.bad[tx.ID] = true
	}
}

// heads returns the view's admitted heads (entries no admitted entry lists
// as a parent), sorted.
func (v *view) heads() []dag.ID {
	child := map[dag.ID]bool{}
	for _, tx := range v.txs {
		if !v.bad[tx.ID] {
			for _, p := range tx.Parents {
				child[p] = true
			}
		}
	}
	var out []dag.ID
	for _, tx := range v.txs {
		if !v.bad[tx.ID] && !child[tx.ID] {
			out = append(out, tx.ID)
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// BranchOf returns the named branch of a state, or nil.
func BranchOf(st *house.State, name string) *house.BranchView {
	for i := range st.Branches {
		if st.Branches[i].Name == name {
			return &st.Branches[i]
		}
	}
	return nil
}

// GroupOf returns the group of a state with this id, or nil.
func GroupOf(st *house.State, id string) *house.GroupView {
	for i := range st.Groups {
		if st.Groups[i].ID == id {
			return &st.Groups[i]
		}
	}
	return nil
}

const nMembers = 8

func GenHistory(t *rapid.T) *History {
	rr := rapid.SampledFrom([]rules.Ref{
		Majority(house.MinRootNotice),
		Ref(rules.KindDesignatedApprovers, `{"approvers":"group:drafters","required":1}`, house.MinRootNotice),
		Ref(rules.KindAlwaysAllow, `{}`, house.MinRootNotice),
	}).Draw(t, "root rule")
	b := New(Options{RootRule: &rr})
	hs := &History{B: b, mrEl: map[dag.ID][]dag.Key{}}
	nv := rapid.IntRange(2, 3).Draw(t, "views")
	for i := 0; i < nv; i++ {
		hs.views = append(hs.views, &view{h: house.New(b.Session, b.Objects), seen: map[dag.ID]bool{}, bad: map[dag.ID]bool{}})
	}
	m0 := Member(0)
	v0 := hs.views[0]
	hs.add(t, v0, b.Create)
	hs.add(t, v0, b.GroupCreate(m0, "roster", Members(0, nMembers), Members(0, 2), v0.heads()...))
	hs.add(t, v0, b.GroupCreate(m0, "registrar", Members(0, 1), Members(0, 1), v0.heads()...))
	hs.add(t, v0, b.GroupCreate(Member(1), "drafters", Members(1, 4), Members(1, 3), v0.heads()...))
	hs.add(t, v0, b.BranchCreate(Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, AlwaysAllow(), Majority(-1), v0.heads()...))
	for _, v := range hs.views[1:] {
		for _, tx := range hs.All {
			hs.deliver(v, tx)
		}
	}
	steps := rapid.IntRange(5, 40).Draw(t, "steps")
	for s := 0; s < steps; s++ {
		v := hs.views[rapid.IntRange(0, nv-1).Draw(t, "view")]
		hs.step(t, v)
	}
	return hs
}

func (hs *History) step(t *rapid.T, v *view) {
	b := hs.B
	st := v.h.State()
	heads := v.heads()
	who := Member(rapid.IntRange(0, nMembers+1).Draw(t, "who")) // members 8 and 9 are outsiders
	action := rapid.IntRange(0, 12).Draw(t, "action")
	if rapid.IntRange(0, 3).Draw(t, "fitting") > 0 {
		// Mostly pick an author who may do it, so that the history goes
		// somewhere; the rest of the time anyone, outsiders included.
		switch action {
		case 2:
			who = Member(rapid.IntRange(0, 1).Draw(t, "admin"))
		case 3:
			who = Member(rapid.IntRange(1, 3).Draw(t, "drafter"))
		case 4, 5, 6, 7, 10, 11:
			who = Member(rapid.IntRange(0, nMembers-1).Draw(t, "member"))
		}
	}
	switch action {
	case 0: // sync with another view
		o := hs.views[rapid.IntRange(0, len(hs.views)-1).Draw(t, "peer")]
		for _, tx := range hs.All {
			if o.seen[tx.ID] {
				hs.deliver(v, tx)
			}
		}
	case 1: // group create (concurrent ids collide across views)
		id := fmt.Sprintf("g%d", rapid.IntRange(0, 2).Draw(t, "gid"))
		hs.add(t, v, b.GroupCreate(who, id, Members(0, rapid.IntRange(1, nMembers).Draw(t, "n")), []dag.Key{who.Key()}, heads...))
	case 2: // roster update, by an admin or not
		lo := rapid.IntRange(0, 2).Draw(t, "lo")
		hs.add(t, v, b.GroupUpdate(who, "roster", Members(lo, nMembers), Members(0, 2), heads...))
	case 3: // append to the draft branch
		br := BranchOf(st, "draft")
		if br == nil || len(br.Heads) != 1 {
			return
		}
		text := fmt.Sprintf("The period is %d days.", rapid.IntRange(31, 99).Draw(t, "days"))
		nid := fmt.Sprintf("/us/t1/s%d", rapid.IntRange(1, 3).Draw(t, "sec"))
		tx, _ := b.Append(who, "draft", br.Heads[0], []statute.Op{Replace(b.Trees[br.Heads[0]], nid, text)}, heads...)
		hs.add(t, v, tx)
	case 4: // open an MR from draft into root
		br, root, roster := BranchOf(st, "draft"), BranchOf(st, house.RootBranch), GroupOf(st, "roster")
		if br == nil || root == nil || roster == nil || len(br.Heads) != 1 || len(root.Heads) != 1 || root.MergeRule == nil {
			return
		}
		tx, id := b.Open(who, MR{Source: "draft", SourceHead: br.Heads[0], TargetHead: root.Heads[0], Members: roster.Members, Rule: *root.MergeRule}, heads...)
		hs.mrEl[id] = roster.Members
		hs.add(t, v, tx)
	case 5: // governance MR on draft: change its merge rule
		br, roster := BranchOf(st, "draft"), GroupOf(st, "roster")
		if br == nil || roster == nil || len(br.Heads) == 0 || br.GovernanceRule == nil {
			return
		}
		tx, id := b.Open(who, MR{Kind: "governance", Target: "draft", TargetHead: br.Heads[0], Members: roster.Members, Rule: *br.GovernanceRule,
			Set: map[string]any{"merge_rule": Majority(int64(rapid.IntRange(0, 5).Draw(t, "notice")))}}, heads...)
		hs.mrEl[id] = roster.Members
		hs.add(t, v, tx)
	case 6, 7, 10, 11: // ballots, sometimes superseding or equivocating
		if len(st.MRs) == 0 {
			return
		}
		mr := st.MRs[rapid.IntRange(0, len(st.MRs)-1).Draw(t, "mr")].ID
		choice := rapid.SampledFrom([]string{"approve", "approve", "reject", "abstain"}).Draw(t, "choice")
		var sup dag.ID
		if rapid.Bool().Draw(t, "supersede") {
			for i := len(v.txs) - 1; i >= 0; i-- {
				tx := v.txs[i]
				if tx.Env.Type == dag.TxBallotCast && tx.Env.Author == who.Key() && !v.bad[tx.ID] {
					sup = tx.ID
					break
				}
			}
		}
		hs.add(t, v, b.Ballot(who, mr, choice, sup, heads...))
	case 8, 12: // determination over the view's ballots, right or wrong
		if len(st.MRs) == 0 {
			return
		}
		m := st.MRs[rapid.IntRange(0, len(st.MRs)-1).Draw(t, "dmr")]
		var ballots []rules.Ballot
		var ids []dag.ID
		for _, tx := range v.txs {
			if tx.Env.Type != dag.TxBallotCast || v.bad[tx.ID] {
				continue
			}
			body, _ := rules.DecodeBallotBody(tx.Env.Body)
			if body.MR == m.ID && rapid.IntRange(0, 4).Draw(t, "take") > 0 {
				ballots = append(ballots, rules.Ballot{Tx: tx.ID, Author: tx.Env.Author, BallotBody: body})
				ids = append(ids, tx.ID)
			}
		}
		outcome := string(rapid.SampledFrom([]rules.Outcome{rules.Approved, rules.Rejected, rules.Pending}).Draw(t, "outcome"))
		if el := hs.mrEl[m.ID]; el != nil && rapid.IntRange(0, 3).Draw(t, "honest") > 0 {
			res, err := rules.Evaluate(m.Rule, el, m.ID, ballots, rules.Context{})
			if err == nil {
				outcome = string(res.IfClosed)
			}
		}
		hs.add(t, v, b.Determine(who, m.ID, ids, outcome, heads...))
	case 9:
		hs.add(t, v, b.KeyRegister(who, heads...))
	}
}
