package house_test

import (
	"bytes"
	"encoding/json"
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

// contestHistory is a session with a contest of three options (two MRs
// and a variant of the first, which joins the contest the explicit
// contest.open made), rankings cast concurrently (each names only the
// contest's open as parent, so they reach replicas in any order), a
// superseded ranking, an equivocating member, a determination listing
// them all, and a wrong determination that every replica refuses.
func contestHistory() (*ht.Builder, []ht.Tx) {
	b := ht.New(ht.Options{})
	var all []ht.Tx
	last := b.Create.ID
	add := func(tx ht.Tx) ht.Tx { all = append(all, tx); last = tx.ID; return tx }
	add(b.Create)
	add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 7), ht.Members(0, 1), last))
	add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	rule := ht.Majority(house.MinRootNotice)
	var opts []dag.ID
	var contest dag.ID
	for i, edits := range []map[string]string{{"/us/t1/s1": "45 days.", "/us/t1/s2": "10 days."}, {"/us/t1/s1": "50 days."}, {"/us/t1/s1": "40 days."}} {
		name := fmt.Sprintf("d%d", i)
		add(b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
		var ops []statute.Op
		for _, nid := range []string{"/us/t1/s1", "/us/t1/s2"} {
			if text, ok := edits[nid]; ok {
				ops = append(ops, ht.Replace(b.Trees[b.Genesis], nid, text))
			}
		}
		tx, change := b.Append(ht.Member(2), name, b.Genesis, ops, last)
		add(tx)
		raw, _ := b.MRBody(ht.MR{Source: name, SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 7), Rule: rule})
		if i == 2 { // a variant of option 0
			raw = bytes.Replace(raw, []byte(`"variant_of":null`), []byte(`"variant_of":"`+opts[0].String()+`"`), 1)
		}
		opts = append(opts, dag.Sum(raw))
		add(b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(raw), []dag.ID{last}))
		if i == 1 { // the variant (i == 2) opens after the contest
			contest = add(b.Sign(ht.Member(3), dag.TxContestOpen, map[string]any{"options": opts[:2]}, []dag.ID{last})).ID
		}
	}
	afterVariant := last
	name := func(o dag.ID) string {
		if !o.Valid() {
			return rules.StatusQuo
		}
		return o.String()
	}
	rank := func(m int, sup dag.ID, order ...dag.ID) ht.Tx {
		var ns []string
		for _, o := range order {
			ns = append(ns, name(o))
		}
		body := map[string]any{"contest": contest, "ranking": ns, "supersedes": nil}
		parents := []dag.ID{afterVariant}
		if sup.Valid() {
			body["supersedes"] = sup
			parents = []dag.ID{sup}
		}
		return b.Sign(ht.Member(m), dag.TxContestRank, body, parents)
	}
	x, y, v := opts[0], opts[1], opts[2]
	var ranks []ht.Tx
	for m := 0; m < 3; m++ {
		ranks = append(ranks, rank(m, dag.ID{}, v, x, dag.ID{}))
	}
	ranks = append(ranks, rank(3, dag.ID{}, y, dag.ID{}))
	first := rank(4, dag.ID{}, x)
	ranks = append(ranks, first, rank(4, first.ID, v, dag.ID{}))      // superseded: V > S counts
	ranks = append(ranks, rank(5, dag.ID{}, x), rank(5, dag.ID{}, y)) // equivocation: void
	all = append(all, ranks...)
	var ids, parents []dag.ID
	for _, r := range ranks {
		ids = append(ids, r.ID)
		parents = append(parents, r.ID)
	}
	// N=7, effective: members 0-2 V>X>S, 3 Y>S, 4 V>S (superseding X);
	// 5 void; 6 ranks nothing. V>S 4:1, V>X 4:0, V>Y 4:1, X>S 3:2, S>Y
	// 4:1, X>Y 3:1. V beats every option: the winner. Against S: A=4,
	// R=1, B=0, V=1; quorum 5*2 >= 7 and 4*2 > 7: approved. The claim
	// "rejected" is refused by every replica.
	all = append(all, b.Sign(ht.Member(6), dag.TxContestDetermine, map[string]any{"contest": contest, "rankings": ids, "outcome": "rejected", "winner": nil}, parents))
	all = append(all, b.Sign(ht.Member(6), dag.TxContestDetermine, map[string]any{"contest": contest, "rankings": ids, "outcome": "approved", "winner": v}, parents))
	return b, all
}

// winnerOf is the variant: the MR whose body has variant_of.
func winnerOf(st *house.State) string {
	for _, m := range st.MRs {
		if m.Source != nil && m.Source.Branch == "d2" {
			return m.ID.String()
		}
	}
	return ""
}

func TestContestConvergence(t *testing.T) {
	b, all := contestHistory()
	h0, refused0 := replay(t, b, all)
	want, wantJSON := stateHash(t, h0)
	st := h0.State()
	if len(st.Contests) != 1 || st.Contests[0].Status != house.ContestDecided || len(st.Contests[0].Options) != 3 || len(refused0) != 1 {
		t.Fatalf("contests %+v, refused %v\n%s", st.Contests, refused0, wantJSON)
	}
	res := st.Contests[0].Result
	if res.Void != 1 || res.Rankers != 5 || res.IfClosed != rules.Approved || res.Winner != winnerOf(st) {
		t.Fatalf("result %+v", res)
	}
	merged := 0
	for _, m := range st.MRs {
		switch {
		case m.Status == house.StatusMerged && m.ID.String() == res.Winner:
			merged++
		case m.Status == house.StatusRejected && m.Reason == string(rules.ReasonContestLost):
		default:
			t.Fatalf("MR %s: %s %s (winner %s)", m.ID, m.Status, m.Reason, res.Winner)
		}
	}
	if merged != 1 {
		t.Fatalf("%d merged", merged)
	}
	rapid.Check(t, func(t *rapid.T) {
		perm := rapid.Permutation(all).Draw(t, "order")
		h, refused := replay(t, b, perm)
		if got, js := stateHash(t, h); got != want {
			t.Fatalf("state differs:\n%s\nwant\n%s", js, wantJSON)
		}
		if !slices.Equal(refused, refused0) {
			t.Fatalf("refused %v, want %v", refused, refused0)
		}
	})
	full, _, _, err := house.Derive(b.Session, ht.Input(all...), b.Objects)
	if err != nil {
		t.Fatal(err)
	}
	if got, js := stateHash(t, full); got != want {
		t.Fatalf("full derivation differs:\n%s\nwant\n%s", js, wantJSON)
	}
}

// The body of contest.determine, witan's reading (docs/deviations.md):
// each case with the code it gets ("" = accepted).
func TestDecodeContestDetermination(t *testing.T) {
	x := "sha256:79032b8a85663acddd601fd25371b7cb91f3ee6fbe68215f3cf6d4736bcbeea9"
	y := "sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"
	for _, c := range []struct{ body, code string }{
		{`{"contest":"` + x + `","rankings":["` + y + `"],"outcome":"approved","winner":"` + y + `"}`, ""},
		{`{"contest":"` + x + `","rankings":[],"outcome":"rejected","winner":"status_quo"}`, ""},
		{`{"contest":"` + x + `","rankings":[],"outcome":"rejected","winner":null}`, ""},
		{`{"contest":"` + x + `","rankings":[],"outcome":"pending"}`, ""},
		{`{"contest":"` + x + `","rankings":[],"outcome":"approved"}`, "schema"},
		{`{"contest":"` + x + `","rankings":[],"outcome":"approved","winner":"status_quo"}`, "schema"},
		{`{"contest":"` + x + `","rankings":[],"outcome":"expired"}`, "schema"},
		{`{"contest":"` + x + `","rankings":["` + y + `","` + y + `"],"outcome":"pending"}`, "schema"},
		{`{"contest":"` + x + `","outcome":"pending"}`, "schema"},
		{`{"rankings":[],"outcome":"pending"}`, "schema"},
		{`{"contest":"` + x + `","rankings":[],"outcome":"pending","extra":1}`, "schema"},
		{`{"contest":"` + x + `","rankings":[],"outcome":"rejected","winner":"nobody"}`, "schema"},
	} {
		_, err := house.DecodeContestDetermination([]byte(c.body))
		if got := string(dag.CodeOf(err)); got != c.code {
			t.Errorf("%s: code %q (%v), want %q", c.body, got, err, c.code)
		}
	}
}

// Two concurrent contest.open grouping the same MRs: in the merged state
// the MRs are in two contests, both are flagged contest_conflict, and a
// determination that sees both is refused; every delivery order agrees.
func TestContestConflict(t *testing.T) {
	b := ht.New(ht.Options{})
	var all []ht.Tx
	last := b.Create.ID
	add := func(tx ht.Tx) ht.Tx { all = append(all, tx); last = tx.ID; return tx }
	add(b.Create)
	add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), last))
	add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	var opts []dag.ID
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("d%d", i)
		add(b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
		tx, change := b.Append(ht.Member(2), name, b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", fmt.Sprintf("%d days.", 40+i))}, last)
		add(tx)
		open, mr := b.Open(ht.Member(1), ht.MR{Source: name, SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, last)
		add(open)
		opts = append(opts, mr)
	}
	base := last
	c1 := b.Sign(ht.Member(3), dag.TxContestOpen, map[string]any{"options": opts}, []dag.ID{base})
	c2 := b.Sign(ht.Member(4), dag.TxContestOpen, map[string]any{"options": opts}, []dag.ID{base})
	all = append(all, c1, c2)
	det := b.Sign(ht.Member(4), dag.TxContestDetermine, map[string]any{"contest": c1.ID, "rankings": []dag.ID{}, "outcome": "rejected", "winner": rules.StatusQuo}, []dag.ID{c1.ID, c2.ID})
	all = append(all, det)
	h0, refused := replay(t, b, all)
	if !slices.Equal(refused, []dag.ID{det.ID}) {
		t.Fatalf("refused %v, want the determination %s", refused, det.ID)
	}
	st := h0.State()
	if len(st.Contests) != 2 {
		t.Fatalf("contests %+v", st.Contests)
	}
	for _, c := range st.Contests {
		if !slices.Contains(c.Flags, house.FlagContestConflict) || c.Status != house.ContestOpen {
			t.Fatalf("contest %s: %s %v", c.ID, c.Status, c.Flags)
		}
	}
	want, _ := stateHash(t, h0)
	for i := 0; i < 5; i++ {
		order := slices.Clone(all)
		for j := range order {
			k := (j*7 + i*3) % len(order)
			order[j], order[k] = order[k], order[j]
		}
		h, _ := replay(t, b, order)
		if got, js := stateHash(t, h); got != want {
			t.Fatalf("order %d: state differs:\n%s", i, js)
		}
	}
}
