package house_test

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// TestPublishedConcurrentOpens: one MR body opened twice concurrently,
// once by an entry whose causal past publishes the transaction its text
// cites and once by one whose past does not. Whatever order the two opens
// arrive in, every replica derives the same state: a reference counts as
// published only when it is in the causal past of every open (as
// concurrent opens already narrow the electorate to what every open
// agrees on), so here the MR fails structure.
func TestPublishedConcurrentOpens(t *testing.T) {
	b := ht.New(ht.Options{})
	create := b.Create
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), create.ID)
	reg := b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), roster.ID)
	drafters := b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), reg.ID)
	branch := b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), drafters.ID)
	clerks := b.GroupCreate(ht.Member(0), "clerks", ht.Members(0, 1), ht.Members(0, 1), branch.ID)
	app, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "As recorded in "+clerks.ID.String()+".")}, branch.ID)
	m := ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}
	seen, mr := b.Open(ht.Member(1), m, app.ID, clerks.ID)
	unseen, _ := b.Open(ht.Member(1), m, app.ID)
	prefix := []ht.Tx{create, roster, reg, drafters, branch, clerks, app}

	var want dag.ID
	for i, last := range [][]ht.Tx{{seen, unseen}, {unseen, seen}} {
		h, refused := replay(t, b, append(append([]ht.Tx{}, prefix...), last...))
		if len(refused) != 0 {
			t.Fatalf("refused %v", refused)
		}
		v, _ := h.MR(mr)
		if !v.StructureFailed {
			t.Fatalf("order %d: the MR passes structure although one open's past does not publish the cited entry", i)
		}
		if pub := h.Published(mr); pub(clerks.ID) {
			t.Fatalf("order %d: /checks would call the cited entry published", i)
		}
		got, js := stateHash(t, h)
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("the order of the opens changes the state:\n%s", js)
		}
	}
	// With one open that sees it, the reference is published.
	h, _ := replay(t, b, append(append([]ht.Tx{}, prefix...), seen))
	if v, _ := h.MR(mr); v.StructureFailed {
		t.Fatal("one open whose past publishes the cited entry: the MR fails structure")
	}
}

// TestDeterminationNamesItsMR holds recordNamed's shortcut for an
// mr.determine (its MR alone) to the general scan of its body: once its
// listed ballots are admitted, the scan finds exactly the MR, and the
// determination is recorded as naming the MR and none of its ballots.
func TestDeterminationNamesItsMR(t *testing.T) {
	w := newWorld(t, ht.Options{})
	b := w.b
	h := house.New(b.Session, b.Objects)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "45 days"}, w.amend.ID)
	txs := append(w.prefix(), open)
	var ids []dag.ID
	last := open.ID
	for i := 0; i < 7; i++ {
		bt := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last)
		txs, ids, last = append(txs, bt), append(ids, bt.ID), bt.ID
	}
	det := b.Determine(ht.Member(3), mr, ids, "approved", last)
	if bad := admitAll(t, h, append(txs, det)...); len(bad) > 0 {
		t.Fatalf("refused: %v", bad)
	}
	if got := h.NamedBy(dag.TxMRDetermine, det.Env.Body); len(got) != 1 || got[0] != mr {
		t.Fatalf("the scan of the determination's body finds %v besides admitted entries, want only the MR %s", got, mr)
	}
	if got := h.NamedEntries(mr); !slices.Contains(got, det.ID) {
		t.Fatalf("the MR is named by %v, want the determination %s among them", got, det.ID)
	}
	for _, id := range ids {
		if got := h.NamedEntries(id); len(got) != 0 {
			t.Fatalf("ballot %s recorded as named by %v", id, got)
		}
	}
}
