package house_test

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// admitAll admits txs in order and returns the codes of the refused ones
// (by tx id); refused entries' children are refused as the store would.
func admitAll(t *testing.T, h *house.House, txs ...ht.Tx) map[dag.ID]dag.Code {
	t.Helper()
	bad := map[dag.ID]dag.Code{}
	for _, tx := range txs {
		quarantined := false
		for _, p := range tx.Parents {
			if _, ok := bad[p]; ok {
				quarantined = true
			}
		}
		if quarantined {
			bad[tx.ID] = dag.CodeUnknownParent
			continue
		}
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			c := dag.CodeOf(err)
			if c == "" {
				t.Fatalf("admit %s: %v", tx.Env.Type, err)
			}
			bad[tx.ID] = c
		}
	}
	return bad
}

// world is a small session: ten roster members, a drafters group owning an
// unprotected branch "draft" with one amendment, and an MR merging it into
// the root.
type world struct {
	b                       *ht.Builder
	create, roster, reg     ht.Tx
	drafters, branch, amend ht.Tx
	change                  dag.ID
}

func newWorld(t *testing.T, o ht.Options) *world {
	t.Helper()
	b := ht.New(o)
	w := &world{b: b, create: b.Create}
	m0 := ht.Member(0)
	w.roster = b.GroupCreate(m0, "roster", ht.Members(0, 10), ht.Members(0, 1), w.create.ID)
	w.reg = b.GroupCreate(m0, "registrar", ht.Members(0, 1), ht.Members(0, 1), w.roster.ID)
	w.drafters = b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), w.reg.ID)
	w.branch = b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), w.drafters.ID)
	w.amend, w.change = b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Seed, "/us/t1/s1", "The period is 45 days.")}, w.branch.ID)
	return w
}

func (w *world) prefix() []ht.Tx {
	return []ht.Tx{w.create, w.roster, w.reg, w.drafters, w.branch, w.amend}
}

func TestAdmitLinearAmendment(t *testing.T) {
	w := newWorld(t, ht.Options{})
	b := w.b
	_ = b
	h := house.New(b.Session, b.Objects)
	if bad := admitAll(t, h, w.prefix()...); len(bad) > 0 {
		t.Fatalf("refused: %v", bad)
	}
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "45 days"}, w.amend.ID)
	txs := []ht.Tx{open}
	var ballots []dag.ID
	prev := open.ID
	for i := 0; i < 7; i++ {
		choice := "approve"
		if i == 6 {
			choice = "reject"
		}
		bt := b.Ballot(ht.Member(i), mr, choice, dag.ID{}, prev)
		txs = append(txs, bt)
		ballots = append(ballots, bt.ID)
		prev = bt.ID
	}
	wrong := b.Determine(ht.Member(3), mr, ballots, "rejected", prev)
	det := b.Determine(ht.Member(3), mr, ballots, "approved", prev)
	late := b.Ballot(ht.Member(8), mr, "reject", dag.ID{}, det.ID)
	txs = append(txs, wrong, det, late)
	bad := admitAll(t, h, txs...)
	if len(bad) != 1 || bad[wrong.ID] != dag.CodeNotAuthorized {
		t.Fatalf("refused %v, want only the wrong determination (not_authorized)", bad)
	}
	v, ok := h.MR(mr)
	if !ok || v.Status != house.StatusMerged || v.Merge == nil {
		t.Fatalf("MR view %+v", v)
	}
	st := h.State()
	var root house.BranchView
	for _, br := range st.Branches {
		if br.Name == house.RootBranch {
			root = br
		}
	}
	if len(root.Heads) != 1 || root.Heads[0] != *v.Merge {
		t.Fatalf("root heads %v, want the merge change %s", root.Heads, v.Merge)
	}
	tree, _ := h.Tree(root.Heads[0])
	if n, _ := tree.Get("/us/t1/s1"); n.Text != "The period is 45 days." {
		t.Fatalf("root text %q", n.Text)
	}
	if v.Live.Tally.Approve != 6 || v.Live.Tally.Reject != 1 {
		t.Fatalf("live tally %+v: the late ballot must be ignored", v.Live.Tally)
	}
}

// TestContradictoryDetermination: two valid determinations of one MR made
// on partitions that saw different ballots (members 4 and 5 voted on both
// sides) disagree; neither executes and the MR is flagged. A determination
// whose causal past holds both settles it only by listing every ballot
// they listed (witan's answer to OQ-3).
func TestContradictoryDetermination(t *testing.T) {
	w := newWorld(t, ht.Options{})
	b := w.b
	h := house.New(b.Session, b.Objects)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, w.amend.ID)
	side := func(from, to int, choice string) (txs []ht.Tx, ids []dag.ID) {
		prev := open.ID
		for i := from; i < to; i++ {
			bt := b.Ballot(ht.Member(i), mr, choice, dag.ID{}, prev)
			txs, ids, prev = append(txs, bt), append(ids, bt.ID), bt.ID
		}
		return txs, ids
	}
	aTxs, aIDs := side(0, 6, "approve")
	rTxs, rIDs := side(4, 10, "reject")
	detA := b.Determine(ht.Member(0), mr, aIDs, "approved", aIDs[len(aIDs)-1])
	detR := b.Determine(ht.Member(9), mr, rIDs, "rejected", rIDs[len(rIDs)-1])
	txs := append(w.prefix(), open)
	txs = append(txs, aTxs...)
	txs = append(txs, rTxs...)
	txs = append(txs, detA, detR)
	if bad := admitAll(t, h, txs...); len(bad) > 0 {
		t.Fatalf("refused %v", bad)
	}
	v, _ := h.MR(mr)
	if v.Status != house.StatusOpen || !slices.Contains(v.Flags, house.FlagContradictory) || v.Merge != nil {
		t.Fatalf("after two disagreeing determinations: status %s flags %v merge %v", v.Status, v.Flags, v.Merge)
	}
	for _, d := range v.Determinations {
		if d.Executed || !d.Maximal {
			t.Fatalf("determination %+v executed or not maximal", d)
		}
	}
	// A settling determination must list both sides' ballots.
	partial := b.Determine(ht.Member(2), mr, aIDs, "approved", detA.ID, detR.ID)
	all := append(slices.Clone(aIDs), rIDs...)
	settle := b.Determine(ht.Member(2), mr, all, "rejected", detA.ID, detR.ID)
	bad := admitAll(t, h, partial, settle)
	if len(bad) != 1 || bad[partial.ID] != dag.CodeNotAuthorized {
		t.Fatalf("refused %v, want only the partial determination", bad)
	}
	v, _ = h.MR(mr)
	if v.Status != house.StatusRejected || slices.Contains(v.Flags, house.FlagContradictory) {
		t.Fatalf("after the settling determination: status %s flags %v", v.Status, v.Flags)
	}
	if v.Live.Tally.Void != 2 {
		t.Fatalf("live tally %+v: members 4 and 5 equivocated", v.Live.Tally)
	}
	// The full derivation agrees, whatever the order.
	full, _, _, err := house.Derive(b.Session, ht.Input(append(txs, partial, settle)...), b.Objects)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := stateHash(t, h)
	f, _ := stateHash(t, full)
	if a != f {
		t.Fatal("full derivation differs from incremental")
	}
}
