package house_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// TestDeadlineWindowDeliveryOrder (D74 in witnessed time,
// docs/deviations.md): whether an mr.open is refused deadline_too_short
// depends on its causal past only, never on what a replica received
// first. Branch w's rule closes on_deadline at D = X+72h (X =
// 2026-09-25T00:00:00Z). P is a member's entry signed at X+1h. O1, signed
// at X-10h with parent P, has witnessed time X+1h: D is 71 h away,
// refused. O2, signed at X-10h too but concurrent with P (its causal
// past ends before P, at 2026-09-21), has witnessed time X-10h: D is
// 82 h away, admitted, even on a replica that received P first. Every
// delivery order refuses exactly O1 and derives one state hash.
func TestDeadlineWindowDeliveryOrder(t *testing.T) {
	x := time.Date(2026, 9, 25, 0, 0, 0, 0, time.UTC)
	b := ht.New(ht.Options{})
	var all []ht.Tx
	prev := b.Create
	add := func(tx ht.Tx) ht.Tx { all = append(all, tx); prev = tx; return tx }
	signAt := func(when time.Time) { // the next envelope's ts is when
		last, err := time.Parse(time.RFC3339, prev.Env.TS)
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(when.Sub(last) - time.Second)
	}
	add(b.Create)
	add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), prev.ID))
	add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), prev.ID))
	add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), prev.ID))
	rule := ht.Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":1,"quorum_den":2,"closing":"on_deadline","deadline":"`+x.Add(72*time.Hour).Format(time.RFC3339)+`"}`, -1)
	add(b.BranchCreate(ht.Member(1), "w", "drafters", house.RootBranch, b.Genesis, false, rule, ht.TwoThirds(), prev.ID))
	var heads []dag.ID
	for i := 1; i <= 2; i++ {
		work := fmt.Sprintf("w%d", i)
		add(b.BranchCreate(ht.Member(1), work, "drafters", "w", b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), prev.ID))
		tx, c := b.Append(ht.Member(2), work, b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", fmt.Sprintf("The period is %d days.", 40+i))}, prev.ID)
		add(tx)
		heads = append(heads, c)
	}
	base := prev.ID
	signAt(x.Add(time.Hour))
	p := add(b.KeyRegister(ht.Member(4), base))
	signAt(x.Add(-10 * time.Hour))
	o1, _ := b.Open(ht.Member(1), ht.MR{Source: "w1", SourceHead: heads[0], Target: "w", TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: rule}, p.ID)
	add(o1)
	signAt(x.Add(-10 * time.Hour))
	o2, _ := b.Open(ht.Member(1), ht.MR{Source: "w2", SourceHead: heads[1], Target: "w", TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: rule}, base)
	add(o2)
	if o1.Env.TS != o2.Env.TS || o1.Env.TS != x.Add(-10*time.Hour).Format(time.RFC3339) {
		t.Fatalf("opens signed at %s and %s", o1.Env.TS, o2.Env.TS)
	}
	check := func(t fataler, h *house.House, refused []dag.ID) dag.ID {
		if len(refused) != 1 || refused[0] != o1.ID {
			t.Fatal(fmt.Sprintf("refused %v, want only O1 %s", refused, o1.ID))
		}
		if err := h.Admit(o1.ID, o1.Env); dag.CodeOf(err) != dag.CodeDeadlineTooShort {
			t.Fatal(fmt.Sprintf("O1: %v, want deadline_too_short", err))
		}
		id, _ := stateHash(t, h)
		return id
	}
	h0, refused0 := replay(t, b, all)
	want := check(t, h0, refused0)
	rapid.Check(t, func(t *rapid.T) {
		h, refused := replay(t, b, rapid.Permutation(all).Draw(t, "order"))
		if got := check(t, h, refused); got != want {
			t.Fatalf("state %s, want %s", got, want)
		}
	})
}
