package replica_test

import (
	"context"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestRefusalLogRestartAndCap: the refusal log survives a restart (the
// index a receipt named still holds the same record, and the next refusal
// continues the numbering), it is never synced as a session, and once it
// holds MaxRefusals records a refusal is still signed but gets a null
// refusal_index.
func TestRefusalLogRestartAndCap(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	refuse := func(r *replica.Replica, m int) *replica.Receipt {
		t.Helper()
		rc, err := r.Submit(ctx, b.Ballot(ht.Member(m), mr, "approve", dag.ID{}, open.ID).Bytes, nil)
		if err != nil || rc.Status != "rejected" || rc.Verify() != nil {
			t.Fatalf("member %d's ballot: %+v %v", m, rc, err)
		}
		return rc
	}
	r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0), MaxRefusals: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []ht.Tx{b.Create, roster, open} {
		submit(t, r, tx, "accepted")
	}
	if rc := refuse(r, 7); rc.RefusalIndex == nil || *rc.RefusalIndex != 0 {
		t.Fatalf("first refusal %+v", rc)
	}
	before, _ := r.RefusalLog(0, 0)
	cp, err := r.RefusalCheckpoint()
	if err != nil || cp.Verify() != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0), MaxRefusals: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Sessions(); len(got) != 1 || got[0] != b.Session {
		t.Fatalf("sessions %v", got)
	}
	after, n := r.RefusalLog(0, 0)
	if n != 1 || after[0] != before[0] {
		t.Fatalf("after restart %+v, before %+v", after, before)
	}
	cp2, err := r.RefusalCheckpoint()
	if err != nil || cp2.Root != cp.Root || cp2.Size != 1 {
		t.Fatalf("checkpoint after restart %+v, before %+v", cp2, cp)
	}
	if rc := refuse(r, 8); rc.RefusalIndex == nil || *rc.RefusalIndex != 1 {
		t.Fatalf("second refusal %+v", rc)
	}
	if rc := refuse(r, 9); rc.RefusalIndex != nil || !r.RefusalLogFull() {
		t.Fatalf("refusal beyond the cap %+v", rc)
	}
	if _, n := r.RefusalLog(0, 0); n != 2 {
		t.Fatalf("log of %d past its cap", n)
	}
}
