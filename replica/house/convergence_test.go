package house_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// view is one author's partial knowledge while a history is generated: the
// transactions it has seen, admitted into its own House.
type view struct {
	h    *house.House
	seen map[dag.ID]bool
	bad  map[dag.ID]bool
	txs  []ht.Tx // in the order seen
}

// history is a random session: several views act concurrently and sync now
// and then, so entries conflict; some actions are unauthorised or wrong on
// purpose.
type history struct {
	b      *ht.Builder
	all    []ht.Tx // in generation order (a causal order)
	views  []*view
	mrEl   map[dag.ID][]dag.Key
	nextID int
}

func (hs *history) add(t *rapid.T, v *view, tx ht.Tx) {
	hs.all = append(hs.all, tx)
	hs.deliver(v, tx)
}

func (hs *history) deliver(v *view, tx ht.Tx) {
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

func branchOf(st *house.State, name string) *house.BranchView {
	for i := range st.Branches {
		if st.Branches[i].Name == name {
			return &st.Branches[i]
		}
	}
	return nil
}

func groupOf(st *house.State, id string) *house.GroupView {
	for i := range st.Groups {
		if st.Groups[i].ID == id {
			return &st.Groups[i]
		}
	}
	return nil
}

const nMembers = 8

func genHistory(t *rapid.T) *history {
	rr := rapid.SampledFrom([]rules.Ref{
		ht.Majority(house.MinRootNotice),
		ht.Ref(rules.KindDesignatedApprovers, `{"approvers":"group:drafters","required":1}`, house.MinRootNotice),
		ht.Ref(rules.KindAlwaysAllow, `{}`, house.MinRootNotice),
	}).Draw(t, "root rule")
	b := ht.New(ht.Options{RootRule: &rr})
	hs := &history{b: b, mrEl: map[dag.ID][]dag.Key{}}
	nv := rapid.IntRange(2, 3).Draw(t, "views")
	for i := 0; i < nv; i++ {
		hs.views = append(hs.views, &view{h: house.New(b.Session, b.Objects), seen: map[dag.ID]bool{}, bad: map[dag.ID]bool{}})
	}
	m0 := ht.Member(0)
	v0 := hs.views[0]
	hs.add(t, v0, b.Create)
	hs.add(t, v0, b.GroupCreate(m0, "roster", ht.Members(0, nMembers), ht.Members(0, 2), v0.heads()...))
	hs.add(t, v0, b.GroupCreate(m0, "registrar", ht.Members(0, 1), ht.Members(0, 1), v0.heads()...))
	hs.add(t, v0, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 4), ht.Members(1, 3), v0.heads()...))
	hs.add(t, v0, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.Majority(-1), v0.heads()...))
	for _, v := range hs.views[1:] {
		for _, tx := range hs.all {
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

func (hs *history) step(t *rapid.T, v *view) {
	b := hs.b
	st := v.h.State()
	heads := v.heads()
	who := ht.Member(rapid.IntRange(0, nMembers+1).Draw(t, "who")) // members 8 and 9 are outsiders
	action := rapid.IntRange(0, 12).Draw(t, "action")
	if rapid.IntRange(0, 3).Draw(t, "fitting") > 0 {
		// Mostly pick an author who may do it, so that the history goes
		// somewhere; the rest of the time anyone, outsiders included.
		switch action {
		case 2:
			who = ht.Member(rapid.IntRange(0, 1).Draw(t, "admin"))
		case 3:
			who = ht.Member(rapid.IntRange(1, 3).Draw(t, "drafter"))
		case 4, 5, 6, 7, 10, 11:
			who = ht.Member(rapid.IntRange(0, nMembers-1).Draw(t, "member"))
		}
	}
	switch action {
	case 0: // sync with another view
		o := hs.views[rapid.IntRange(0, len(hs.views)-1).Draw(t, "peer")]
		for _, tx := range hs.all {
			if o.seen[tx.ID] {
				hs.deliver(v, tx)
			}
		}
	case 1: // group create (concurrent ids collide across views)
		id := fmt.Sprintf("g%d", rapid.IntRange(0, 2).Draw(t, "gid"))
		hs.add(t, v, b.GroupCreate(who, id, ht.Members(0, rapid.IntRange(1, nMembers).Draw(t, "n")), []dag.Key{who.Key()}, heads...))
	case 2: // roster update, by an admin or not
		lo := rapid.IntRange(0, 2).Draw(t, "lo")
		hs.add(t, v, b.GroupUpdate(who, "roster", ht.Members(lo, nMembers), ht.Members(0, 2), heads...))
	case 3: // append to the draft branch
		br := branchOf(st, "draft")
		if br == nil || len(br.Heads) != 1 {
			return
		}
		text := fmt.Sprintf("The period is %d days.", rapid.IntRange(31, 99).Draw(t, "days"))
		nid := fmt.Sprintf("/us/t1/s%d", rapid.IntRange(1, 3).Draw(t, "sec"))
		tx, _ := b.Append(who, "draft", br.Heads[0], []statute.Op{ht.Replace(b.Trees[br.Heads[0]], nid, text)}, heads...)
		hs.add(t, v, tx)
	case 4: // open an MR from draft into root
		br, root, roster := branchOf(st, "draft"), branchOf(st, house.RootBranch), groupOf(st, "roster")
		if br == nil || root == nil || roster == nil || len(br.Heads) != 1 || len(root.Heads) != 1 || root.MergeRule == nil {
			return
		}
		tx, id := b.Open(who, ht.MR{Source: "draft", SourceHead: br.Heads[0], TargetHead: root.Heads[0], Members: roster.Members, Rule: *root.MergeRule}, heads...)
		hs.mrEl[id] = roster.Members
		hs.add(t, v, tx)
	case 5: // governance MR on draft: change its merge rule
		br, roster := branchOf(st, "draft"), groupOf(st, "roster")
		if br == nil || roster == nil || len(br.Heads) == 0 || br.GovernanceRule == nil {
			return
		}
		tx, id := b.Open(who, ht.MR{Kind: "governance", Target: "draft", TargetHead: br.Heads[0], Members: roster.Members, Rule: *br.GovernanceRule,
			Set: map[string]any{"merge_rule": ht.Majority(int64(rapid.IntRange(0, 5).Draw(t, "notice")))}}, heads...)
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

// replay delivers txs to a fresh House in the given order, holding back
// entries whose parents have not arrived (the store's pending set) and
// refusing the children of refused entries (quarantine).
type fataler interface{ Fatal(args ...any) }

func replay(t fataler, b *ht.Builder, order []ht.Tx) (*house.House, []dag.ID) {
	h := house.New(b.Session, b.Objects)
	state := map[dag.ID]int{} // 1 admitted, 2 refused
	var waiting []ht.Tx
	try := func(tx ht.Tx) bool {
		if state[tx.ID] != 0 {
			return true
		}
		for _, p := range tx.Parents {
			switch state[p] {
			case 0:
				return false
			case 2:
				state[tx.ID] = 2
				return true
			}
		}
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			if dag.CodeOf(err) == "" {
				t.Fatal(err)
			}
			state[tx.ID] = 2
		} else {
			state[tx.ID] = 1
		}
		return true
	}
	for _, tx := range order {
		waiting = append(waiting, tx)
		for progress := true; progress; {
			progress = false
			rest := waiting[:0]
			for _, w := range waiting {
				if try(w) {
					progress = true
				} else {
					rest = append(rest, w)
				}
			}
			waiting = rest
		}
	}
	var refused []dag.ID
	for id, s := range state {
		if s == 2 {
			refused = append(refused, id)
		}
	}
	slices.SortFunc(refused, dag.ID.Compare)
	return h, refused
}

func stateHash(t fataler, h *house.House) (dag.ID, []byte) {
	st := h.State()
	b, err := st.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return dag.Sum(b), b
}

// TestConvergence: random histories with concurrent views, conflicts and
// invalid entries, delivered to several replicas in random orders with
// duplicates, give identical state hashes and identical refusal sets; and
// the incremental state equals the full derivation.
func TestConvergence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hs := genHistory(t)
		var want dag.ID
		var wantJSON []byte
		var wantRefused []dag.ID
		for r := 0; r < 3; r++ {
			order := slices.Clone(hs.all)
			perm := rapid.Permutation(order).Draw(t, fmt.Sprintf("order%d", r))
			dups := rapid.SliceOfN(rapid.IntRange(0, len(perm)-1), 0, 5).Draw(t, fmt.Sprintf("dups%d", r))
			for _, d := range dups {
				perm = append(perm, perm[d])
			}
			h, refused := replay(t, hs.b, perm)
			got, js := stateHash(t, h)
			if r == 0 {
				want, wantJSON, wantRefused = got, js, refused
				continue
			}
			if got != want {
				t.Fatalf("replica %d state differs:\n%s\nwant\n%s", r, js, wantJSON)
			}
			if !slices.Equal(refused, wantRefused) {
				t.Fatalf("replica %d refused %v, want %v", r, refused, wantRefused)
			}
		}
		full, refused, pending, err := house.Derive(hs.b.Session, ht.Input(hs.all...), hs.b.Objects)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) > 0 {
			t.Fatalf("pending after full derivation: %v", pending)
		}
		got, js := stateHash(t, full)
		if got != want {
			t.Fatalf("full derivation differs from incremental:\n%s\nwant\n%s", js, wantJSON)
		}
		ids := make([]dag.ID, len(refused))
		for i, r := range refused {
			ids[i] = r.ID
		}
		if !slices.Equal(ids, wantRefused) {
			t.Fatalf("full derivation refused %v, incremental %v", ids, wantRefused)
		}
	})
}
