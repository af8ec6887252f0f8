package house_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// liveContest is a session with one open contest of k options on s1
// and n members each ranking a pseudo-random prefix of a pseudo-random
// order of the options and the status quo (no determination: the contest
// stays live, so State evaluates it).
func liveContest(tb testing.TB, n, k int) (*ht.Builder, *house.House, []dag.ID, []ht.Tx) {
	b := ht.New(ht.Options{})
	h := house.New(b.Session, b.Objects)
	last := b.Create.ID
	var txs []ht.Tx
	add := func(tx ht.Tx) ht.Tx {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			tb.Fatalf("%s: %v", tx.Env.Type, err)
		}
		last = tx.ID
		txs = append(txs, tx)
		return tx
	}
	add(b.Create)
	add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), last))
	add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	rule := ht.Majority(house.MinRootNotice)
	var opts []dag.ID
	for i := 0; i < k; i++ {
		name := fmt.Sprintf("d%d", i)
		add(b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
		tx, change := b.Append(ht.Member(2), name, b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", fmt.Sprintf("The period is %d days.", 40+i))}, last)
		add(tx)
		raw, _ := b.MRBody(ht.MR{Source: name, SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, n), Rule: rule})
		opts = append(opts, dag.Sum(raw))
		add(b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(raw), []dag.ID{last}))
	}
	open := add(b.Sign(ht.Member(3), dag.TxContestOpen, map[string]any{"options": opts}, []dag.ID{last}))
	all := append(append([]string{}, rules.StatusQuo), func() []string {
		var s []string
		for _, o := range opts {
			s = append(s, o.String())
		}
		return s
	}()...)
	seed := uint64(1)
	next := func() uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return seed >> 33 }
	for m := 0; m < n; m++ {
		order := append([]string{}, all...)
		for i := len(order) - 1; i > 0; i-- {
			j := int(next() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		add(b.Sign(ht.Member(m), dag.TxContestRank, map[string]any{"contest": open.ID, "ranking": order[:1+next()%uint64(len(order))], "supersedes": nil}, []dag.ID{open.ID}))
	}
	return b, h, opts, txs
}

// TestLiveContestMemo: State's memoised live contest result follows what
// is admitted. After each step the state hash equals that of a new House
// fed the same entries (which has nothing memoised): a member's
// superseding ranking (a ranking on the contest), then a variant of
// option 0 joining the contest (a governance entry that adds an option).
func TestLiveContestMemo(t *testing.T) {
	b, h, opts, txs := liveContest(t, 30, 8)
	fresh := func() dag.ID {
		g := house.New(b.Session, b.Objects)
		for _, tx := range txs {
			if err := g.Admit(tx.ID, tx.Env); err != nil {
				t.Fatal(err)
			}
		}
		id, err := g.State().Hash()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	check := func(step string, wantRankers uint64, wantOptions int) {
		t.Helper()
		st := h.State()
		got, err := st.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(); got != want {
			t.Fatalf("%s: memoised state %s, fresh %s", step, got, want)
		}
		if c := st.Contests[0]; c.Result.Rankers != wantRankers || len(c.Options) != wantOptions {
			t.Fatalf("%s: %d rankers, %d options", step, c.Result.Rankers, len(c.Options))
		}
	}
	add := func(tx ht.Tx) {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		txs = append(txs, tx)
	}
	check("start", 30, 8)
	var first, open ht.Tx
	for _, tx := range txs {
		switch {
		case tx.Env.Type == dag.TxContestOpen:
			open = tx
		case tx.Env.Type == dag.TxContestRank && first.Env == nil:
			first = tx
		}
	}
	// Member 0 ranks the last option alone instead (status quo, then everything
	// else, below it): the pairwise counts change.
	add(b.Sign(ht.Member(0), dag.TxContestRank, map[string]any{"contest": open.ID, "ranking": []string{opts[7].String()}, "supersedes": first.ID}, []dag.ID{first.ID}))
	check("superseding ranking", 30, 8)
	last := txs[len(txs)-1].ID
	add(b.BranchCreate(ht.Member(1), "v", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	tx, change := b.Append(ht.Member(2), "v", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 99 days.")}, tx0(txs))
	add(tx)
	raw, _ := b.MRBody(ht.MR{Source: "v", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 30), Rule: ht.Majority(house.MinRootNotice)})
	raw = []byte(strings.Replace(string(raw), `"variant_of":null`, `"variant_of":"`+opts[0].String()+`"`, 1))
	add(b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(raw), []dag.ID{tx0(txs)}))
	check("variant joined", 30, 9)
}

// tx0 is the id of the last entry of txs.
func tx0(txs []ht.Tx) dag.ID { return txs[len(txs)-1].ID }

// BenchmarkStateLiveContest: State() of a session whose one contest (9
// options, 2,000 rankings) is live, called again with nothing admitted in
// between: the case the live-result cache serves.
func BenchmarkStateLiveContest(b *testing.B) {
	_, h, _, _ := liveContest(b, 2000, 9)
	h.State()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := h.State(); len(st.Contests) != 1 {
			b.Fatal("no contest")
		}
	}
}
