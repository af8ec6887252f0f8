package house_test

import (
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// movedHead is two MRs opened on the same root head (the genesis change):
// MR 1 merges "draft" (section 1), MR 2 merges "draft2" (section 2). Both
// pass; MR 1's determination executes first, so MR 2 executes on a moved
// root head, and its merge change's parents are [MR 1's merge change,
// draft2's head], not the [genesis, draft2's head] its body names.
type movedHead struct {
	w              *world
	h              *house.House
	change2        dag.ID
	mr1, mr2       dag.ID
	merge1, merge2 dag.ID
}

func newMovedHead(t *testing.T) *movedHead {
	t.Helper()
	w := newWorld(t, ht.Options{})
	b := w.b
	h := house.New(b.Session, b.Objects)
	br2 := b.BranchCreate(ht.Member(1), "draft2", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), w.amend.ID)
	amend2, change2 := b.Append(ht.Member(2), "draft2", b.Genesis, []statute.Op{ht.Replace(b.Seed, "/us/t1/s2", "The period is 60 days.")}, br2.ID)
	open1, mr1 := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, amend2.ID)
	open2, mr2 := b.Open(ht.Member(1), ht.MR{Source: "draft2", SourceHead: change2, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, open1.ID)
	txs := append(w.prefix(), br2, amend2, open1, open2)
	prev := open2.ID
	vote := func(mr dag.ID, n int) []dag.ID {
		var ids []dag.ID
		for i := 0; i < n; i++ {
			bt := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, prev)
			txs, ids, prev = append(txs, bt), append(ids, bt.ID), bt.ID
		}
		return ids
	}
	b1 := vote(mr1, 6)
	det1 := b.Determine(ht.Member(3), mr1, b1, "approved", prev)
	txs, prev = append(txs, det1), det1.ID
	b2 := vote(mr2, 7)
	det2 := b.Determine(ht.Member(3), mr2, b2, "approved", prev)
	txs = append(txs, det2)
	if bad := admitAll(t, h, txs...); len(bad) > 0 {
		t.Fatalf("refused %v", bad)
	}
	m := &movedHead{w: w, h: h, change2: change2, mr1: mr1, mr2: mr2}
	for _, x := range []struct {
		mr  dag.ID
		out *dag.ID
	}{{mr1, &m.merge1}, {mr2, &m.merge2}} {
		v, ok := h.MR(x.mr)
		if !ok || v.Status != house.StatusMerged || v.Merge == nil {
			t.Fatalf("MR %s: %+v", x.mr, v)
		}
		*x.out = *v.Merge
	}
	return m
}

func TestChangeRecordsMovedHeadMerge(t *testing.T) {
	m := newMovedHead(t)
	h, b := m.h, m.w.b
	c1, ok := h.Change(m.merge1)
	if !ok || !slices.Equal(c1.Parents, []dag.ID{b.Genesis, m.w.change}) {
		t.Fatalf("merge 1: %v %+v", ok, c1)
	}
	c2, ok := h.Change(m.merge2)
	if !ok || !slices.Equal(c2.Parents, []dag.ID{m.merge1, m.change2}) {
		t.Fatalf("merge 2 executed on the moved head: parents %v, want [%s %s]", c2.Parents, m.merge1, m.change2)
	}
	if id, err := c2.ID(); err != nil || id != m.merge2 {
		t.Fatalf("merge 2's change hashes to %s (%v), recorded as %s", id, err, m.merge2)
	}
	if g, ok := h.Change(b.Genesis); !ok || len(g.Parents) != 0 {
		t.Fatalf("genesis %v %+v", ok, g)
	}
	if a, ok := h.Change(m.w.change); !ok || !slices.Equal(a.Parents, []dag.ID{b.Genesis}) {
		t.Fatalf("appended change %v %+v", ok, a)
	}
	if _, ok := h.Change(dag.Sum([]byte("no such change"))); ok {
		t.Fatal("an unknown change was found")
	}
	// RootMerges agrees: MR 2's merge came after MR 1's.
	rm := h.RootMerges()
	if len(rm) != 2 || rm[1].MR != m.mr2 || rm[1].Before != m.merge1 || rm[1].Change != m.merge2 {
		t.Fatalf("root merges %+v", rm)
	}
	root, _ := h.Tree(m.merge2)
	for nid, want := range map[string]string{"/us/t1/s1": "The period is 45 days.", "/us/t1/s2": "The period is 60 days."} {
		if n, _ := root.Get(nid); n.Text != want {
			t.Fatalf("%s after both merges: %q", nid, n.Text)
		}
	}
}

func TestPatchAndBody(t *testing.T) {
	m := newMovedHead(t)
	h, b := m.h, m.w.b
	p, ok := h.Patch(m.mr2)
	if !ok || len(p.Ops) != 1 {
		t.Fatalf("patch %v %+v", ok, p)
	}
	// The patch is against the open-time target head, the genesis: only
	// section 2 differs in its result.
	if n, _ := p.Result.Get("/us/t1/s1"); n.Text != "The period is 30 days." {
		t.Fatalf("patch result section 1: %q", n.Text)
	}
	if n, _ := p.Result.Get("/us/t1/s2"); n.Text != "The period is 60 days." {
		t.Fatalf("patch result section 2: %q", n.Text)
	}
	body, ok := h.MRBody(m.mr2)
	if !ok || body.Target.Head != b.Genesis || body.Source.Head != m.change2 {
		t.Fatalf("body %v %+v", ok, body)
	}
	if _, ok := h.Patch(dag.Sum([]byte("x"))); ok {
		t.Fatal("patch of an unknown MR")
	}
	if _, ok := h.MRBody(dag.Sum([]byte("x"))); ok {
		t.Fatal("body of an unknown MR")
	}
	if h.SessionBody() == nil || h.Profile() == nil || h.SessionBody().Roster != "roster" {
		t.Fatalf("session body %+v profile %v", h.SessionBody(), h.Profile())
	}
}

// TestPollInputsRefold: folding PollInputs gives the live tally the House
// serves.
func TestPollInputsRefold(t *testing.T) {
	m := newMovedHead(t)
	for _, mr := range []dag.ID{m.mr1, m.mr2} {
		in, ok := m.h.PollInputs(mr)
		if !ok {
			t.Fatalf("no poll inputs for %s", mr)
		}
		p := rules.NewPoll(in.Rule, in.Electorate, mr)
		for _, b := range in.Ballots {
			if err := p.Add(b); err != nil {
				t.Fatal(err)
			}
		}
		got := p.Result(rules.Context{Facts: in.Facts})
		want, _ := m.h.Tally(mr, rules.Context{})
		if !reflect.DeepEqual(got.Tally, want.Tally) || got.Outcome != want.Outcome {
			t.Fatalf("refolded %+v, live %+v", got.Tally, want.Tally)
		}
	}
	if in, _ := m.h.PollInputs(m.mr2); len(in.Ballots) != 7 || in.Electorate.Len() != 10 {
		t.Fatalf("MR 2: %d ballots, electorate %d", len(in.Ballots), in.Electorate.Len())
	}
	if _, ok := m.h.PollInputs(dag.Sum([]byte("x"))); ok {
		t.Fatal("poll inputs of an unknown MR")
	}
}

// TestChangeDAGProperty (rapid): in any random history, every executed
// merge is in the Change DAG with the parents it was executed with: the
// root merges chain from the genesis change, each merge change's parents
// are [the head it executed on, the MR's source head], and its snapshot
// is the MR's patch ops applied to that head.
func TestChangeDAGProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		h, _ := replay(rt, hs.B, hs.All)
		before := h.Genesis()
		for i, m := range h.RootMerges() {
			if m.Before != before {
				rt.Fatalf("root merge %d executed on %s, the root head was %s", i, m.Before, before)
			}
			c, ok := h.Change(m.Change)
			body, okb := h.MRBody(m.MR)
			p, okp := h.Patch(m.MR)
			if !ok || !okb || !okp {
				rt.Fatalf("root merge %d: change %v, body %v, patch %v", i, ok, okb, okp)
			}
			if !slices.Equal(c.Parents, []dag.ID{m.Before, body.Source.Head}) {
				rt.Fatalf("merge change parents %v, want [%s %s]", c.Parents, m.Before, body.Source.Head)
			}
			head, _ := h.Tree(m.Before)
			want, err := statute.Apply(head, p.Ops)
			got, _ := h.Tree(m.Change)
			if err != nil || got == nil || want.Hash() != got.Hash() {
				rt.Fatalf("merge %d's snapshot is not its patch applied to the head it executed on: %v", i, err)
			}
			if id, err := c.ID(); err != nil || id != m.Change {
				rt.Fatalf("merge change hashes to %s (%v), recorded %s", id, err, m.Change)
			}
			before = m.Change
		}
		for _, v := range h.State().MRs {
			if v.Merge != nil {
				if _, ok := h.Change(*v.Merge); !ok {
					rt.Fatalf("MR %s merged as %s, not in the Change DAG", v.ID, *v.Merge)
				}
			}
		}
	})
}
