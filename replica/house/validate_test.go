package house_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// TestSessionCreate: the floors and flags of session.create.
func TestSessionCreate(t *testing.T) {
	b := ht.New(ht.Options{})
	seed := ht.Seed(3)
	var seedObjs [][]byte
	for _, n := range seed.Objects() {
		seedObjs = append(seedObjs, n.Canonical())
	}
	base := func() map[string]any {
		return map[string]any{
			"label": "t", "seed": seed.Hash(), "simulation": false, "education": false,
			"registrar": "group:registrar", "profile": "uslm-1", "roster": "group:roster",
			"root_rule": ht.Majority(house.MinRootNotice), "root_governance_rule": ht.TwoThirds(),
		}
	}
	th := func(params string, notice int64) rules.Ref { return ht.Ref(rules.KindThresholdVote, params, notice) }
	cases := []struct {
		name   string
		mod    func(m map[string]any)
		noSeed bool
		want   dag.Code
	}{
		{"valid", func(map[string]any) {}, false, ""},
		{"simulation and education", func(m map[string]any) { m["simulation"], m["education"] = true, true }, false, ""},
		{"education without simulation", func(m map[string]any) { m["education"] = true }, false, dag.CodeSchema},
		{"root governance below 2/3 (D38)", func(m map[string]any) {
			m["root_governance_rule"] = th(`{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"}`, -1)
		}, false, dag.CodeNotAuthorized},
		{"root governance on votes cast (D38)", func(m map[string]any) {
			m["root_governance_rule"] = th(`{"num":2,"den":3,"cmp":"gte","basis":"votes_cast","quorum_num":1,"quorum_den":2,"closing":"on_deadline","deadline":"2027-01-01T00:00:00Z"}`, -1)
		}, false, dag.CodeNotAuthorized},
		{"root governance always_allow (D38)", func(m map[string]any) { m["root_governance_rule"] = ht.AlwaysAllow() }, false, dag.CodeNotAuthorized},
		{"root notice under 72 h (D42)", func(m map[string]any) { m["root_rule"] = ht.Majority(259199) }, false, dag.CodeNotAuthorized},
		{"root notice null (D42)", func(m map[string]any) { m["root_rule"] = ht.Majority(-1) }, false, dag.CodeNotAuthorized},
		{"unknown profile", func(m map[string]any) { m["profile"] = "nope" }, false, dag.CodeProfileUnknown},
		{"capital_vote", func(m map[string]any) {
			m["root_rule"] = ht.Ref(rules.KindCapitalVote, `{"budget":100,"cost":"linear","num":1,"den":2,"cmp":"gt","closing":"on_deadline"}`, house.MinRootNotice)
		}, false, dag.CodeRuleNotSupported},
		{"unknown rule kind", func(m map[string]any) { m["root_rule"] = ht.Ref("coin_toss", `{}`, house.MinRootNotice) }, false, dag.CodeRuleUnknown},
		{"districts outside a simulation", func(m map[string]any) { m["districts"] = dag.Sum([]byte("table")) }, false, dag.CodeDistrictAttributeInvalid},
		{"observers are the roster", func(m map[string]any) { m["observers"] = "group:roster" }, false, dag.CodeObserverNotAllowed},
		{"unknown member", func(m map[string]any) { m["speaker"] = "group:x" }, false, dag.CodeSchema},
		{"member name in another case", func(m map[string]any) { m["Label"] = m["label"]; delete(m, "label") }, false, dag.CodeSchema},
		{"seed not attached", func(map[string]any) {}, true, dag.CodeUnknownParent},
		// A rule's text must resolve (30k §5: every sha256 reference is
		// known or attached; §7: each kind has a statute-ready text).
		{"root rule text not attached", func(m map[string]any) {
			r := ht.Majority(house.MinRootNotice)
			r.TextRef = dag.Sum([]byte("a text nobody attached"))
			m["root_rule"] = r
		}, false, dag.CodeUnknownParent},
		// D72 at admission: a table with a religion column is refused
		// when session.create is admitted, not only when ?by= reads it.
		{"district table with religion (D72)", func(m map[string]any) {
			m["simulation"], m["districts"] = true, dag.Sum(religionTable)
		}, false, dag.CodeDistrictAttributeInvalid},
		{"district table region and density (D72)", func(m map[string]any) {
			m["simulation"], m["districts"] = true, dag.Sum(goodTable)
		}, false, ""},
		{"district table not attached (D72)", func(m map[string]any) {
			m["simulation"], m["districts"] = true, dag.Sum([]byte("{}"))
		}, false, dag.CodeUnknownParent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			c.mod(m)
			raw, err := dag.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			attach := [][]byte{ht.RuleText, religionTable, goodTable}
			if !c.noSeed {
				attach = append(attach, seedObjs...)
			}
			tx := b.Sign(ht.Member(0), dag.TxSessionCreate, json.RawMessage(raw), nil)
			objs := house.ObjectMap{}
			for _, a := range attach {
				objs[dag.Sum(a)] = a
			}
			h := house.New(tx.Env.Session, objs)
			err = h.Admit(tx.ID, tx.Env)
			if got := dag.CodeOf(err); got != c.want {
				t.Fatalf("code %q (%v), want %q", got, err, c.want)
			}
		})
	}
}

// TestObservers: D78 — observers may not be in the roster, and may sign
// nothing but key.register (opinions are not supported yet).
func TestObservers(t *testing.T) {
	b := ht.New(ht.Options{Observers: true})
	h := house.New(b.Session, b.Objects)
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), b.Create.ID)
	badObs := b.GroupCreate(ht.Member(0), "observers", ht.Members(9, 11), ht.Members(0, 1), roster.ID)
	notAuthor := b.GroupCreate(ht.Member(1), "observers", ht.Members(20, 21), ht.Members(1, 2), roster.ID)
	obs := b.GroupCreate(ht.Member(0), "observers", ht.Members(20, 21), ht.Members(0, 1), roster.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, obs.ID)
	obsBallot := b.Ballot(ht.Member(20), mr, "approve", dag.ID{}, open.ID)
	obsKey := b.KeyRegister(ht.Member(20), open.ID)
	obsGroup := b.GroupCreate(ht.Member(20), "friends", ht.Members(20, 21), ht.Members(20, 21), open.ID)
	addObs := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 21), ht.Members(0, 1), open.ID)
	bad := admitAll(t, h, b.Create, roster, badObs, notAuthor, obs, open, obsBallot, obsKey, obsGroup, addObs)
	want := map[dag.ID]dag.Code{
		badObs.ID: dag.CodeObserverNotAllowed, notAuthor.ID: dag.CodeNotAuthorized,
		obsBallot.ID: dag.CodeObserverNotAllowed, obsGroup.ID: dag.CodeObserverNotAllowed, addObs.ID: dag.CodeObserverNotAllowed,
	}
	if len(bad) != len(want) {
		t.Fatalf("refused %v, want %v", bad, want)
	}
	for id, c := range want {
		if bad[id] != c {
			t.Fatalf("refused %v, want %v", bad, want)
		}
	}
}

// TestConcurrentConflicts: concurrent creations of one group id or one
// branch name, and concurrent appends to one branch, are flagged and
// never silently resolved; the flags do not depend on the order.
func TestConcurrentConflicts(t *testing.T) {
	w := newWorld(t, ht.Options{})
	b := w.b
	g1 := b.GroupCreate(ht.Member(3), "caucus", ht.Members(3, 5), ht.Members(3, 4), w.amend.ID)
	g2 := b.GroupCreate(ht.Member(4), "caucus", ht.Members(4, 6), ht.Members(4, 5), w.amend.ID)
	br1 := b.BranchCreate(ht.Member(1), "topic", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), w.amend.ID)
	br2 := b.BranchCreate(ht.Member(1), "topic", "drafters", house.RootBranch, b.Genesis, true, ht.AlwaysAllow(), ht.TwoThirds(), w.amend.ID)
	a1, _ := b.Append(ht.Member(1), "draft", w.change, []statute.Op{ht.Replace(b.Trees[w.change], "/us/t1/s2", "Forty.")}, w.amend.ID)
	a2, _ := b.Append(ht.Member(2), "draft", w.change, []statute.Op{ht.Replace(b.Trees[w.change], "/us/t1/s2", "Fifty.")}, w.amend.ID)
	late := b.GroupUpdate(ht.Member(3), "caucus", ht.Members(3, 7), ht.Members(3, 4), g1.ID, g2.ID)
	extra := []ht.Tx{g1, g2, br1, br2, a1, a2, late}
	var hashes []dag.ID
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {5, 4, 3, 2, 1, 0, 6}} {
		h := house.New(b.Session, b.Objects)
		txs := w.prefix()
		for _, i := range order {
			txs = append(txs, extra[i])
		}
		bad := admitAll(t, h, txs...)
		if len(bad) != 1 || bad[late.ID] != dag.CodeNotAuthorized {
			t.Fatalf("refused %v: only the update of a conflicted group", bad)
		}
		st := h.State()
		if g := ht.GroupOf(st, "caucus"); g == nil || !slices.Equal(g.Flags, []string{house.FlagGroupConflict}) || len(g.Members) != 0 {
			t.Fatalf("caucus %+v", g)
		}
		if br := ht.BranchOf(st, "topic"); br == nil || !slices.Equal(br.Flags, []string{house.FlagBranchNameConflict}) || br.MergeRule != nil {
			t.Fatalf("topic %+v", br)
		}
		if br := ht.BranchOf(st, "draft"); br == nil || !slices.Equal(br.Flags, []string{house.FlagConcurrentAppend}) || len(br.Heads) != 2 || br.Snapshot != nil {
			t.Fatalf("draft %+v", br)
		}
		hs, _ := stateHash(t, h)
		hashes = append(hashes, hs)
	}
	if hashes[0] != hashes[1] {
		t.Fatal("the order changed the state")
	}
}

// TestElectorateFrozenAtOpen: a roster change after mr.open changes
// nothing for that MR: a member added later cannot vote on it, a member
// removed later still can (30k §4, "frozen at MR open").
func TestElectorateFrozenAtOpen(t *testing.T) {
	w := newWorld(t, ht.Options{})
	b := w.b
	h := house.New(b.Session, b.Objects)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, w.amend.ID)
	upd := b.GroupUpdate(ht.Member(0), "roster", ht.Members(1, 11), ht.Members(0, 1), open.ID)
	added := b.Ballot(ht.Member(10), mr, "approve", dag.ID{}, upd.ID)
	removed := b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, upd.ID)
	open2, mr2 := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis,
		Members: ht.Members(1, 11), Rule: ht.Majority(house.MinRootNotice), Summary: "after the update"}, upd.ID)
	stale, _ := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: w.change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "old snapshot"}, upd.ID)
	added2 := b.Ballot(ht.Member(10), mr2, "approve", dag.ID{}, open2.ID)
	txs := append(w.prefix(), open, upd, added, removed, open2, stale, added2)
	bad := admitAll(t, h, txs...)
	if len(bad) != 2 || bad[added.ID] != dag.CodeBallotInvalid || bad[stale.ID] != dag.CodeSchema {
		t.Fatalf("refused %v", bad)
	}
	if v, _ := h.MR(mr); v.Live.Tally.Approve != 1 || v.Live.Tally.Electorate != 10 {
		t.Fatalf("MR 1 tally %+v", v.Live.Tally)
	}
	if v, _ := h.MR(mr2); v.Live.Tally.Approve != 1 {
		t.Fatalf("MR 2 tally %+v", v.Live.Tally)
	}
}

// TestConcurrentOpensUnderDifferentApprovers: one designated_approvers MR
// body opened twice concurrently, across a change of the approvers group.
// Each ballot is judged against the opens in its own past; the live poll
// counts only what both opens agree on; the order never matters.
func TestConcurrentOpensUnderDifferentApprovers(t *testing.T) {
	w := newWorld(t, ht.Options{})
	b := w.b
	cmte := b.GroupCreate(ht.Member(0), "committee", ht.Members(0, 5), ht.Members(0, 1), w.amend.ID)
	br := b.BranchCreate(ht.Member(1), "reviewed", "drafters", house.RootBranch, b.Genesis, false, ht.Approvers("committee", 2), ht.TwoThirds(), cmte.ID)
	mrBody := ht.MR{Source: "draft", SourceHead: w.change, Target: "reviewed", TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Approvers("committee", 2)}
	openA, mr := b.Open(ht.Member(1), mrBody, br.ID)
	upd := b.GroupUpdate(ht.Member(0), "committee", ht.Members(2, 7), ht.Members(0, 1), br.ID)
	openB, mrB := b.Open(ht.Member(2), mrBody, upd.ID)
	if mr != mrB {
		t.Fatal("one body, one MR id")
	}
	m0 := b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, openA.ID)
	m6 := b.Ballot(ht.Member(6), mr, "approve", dag.ID{}, openB.ID)
	m6early := b.Ballot(ht.Member(6), mr, "reject", dag.ID{}, openA.ID) // not on the committee in A's past
	m3 := b.Ballot(ht.Member(3), mr, "approve", dag.ID{}, openA.ID, openB.ID)
	extra := []ht.Tx{openA, upd, openB, m0, m6, m6early, m3}
	var hashes []dag.ID
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {1, 2, 4, 0, 3, 6, 5}} {
		h := house.New(b.Session, b.Objects)
		txs := append(w.prefix(), cmte, br)
		for _, i := range order {
			txs = append(txs, extra[i])
		}
		bad := admitAll(t, h, txs...)
		if len(bad) != 1 || bad[m6early.ID] != dag.CodeBallotInvalid {
			t.Fatalf("refused %v", bad)
		}
		v, _ := h.MR(mr)
		if v.Live.Tally.Electorate != 3 || v.Live.Tally.Approve != 1 || !slices.Contains(v.Flags, house.FlagConcurrentOpen) {
			t.Fatalf("live %+v flags %v: only members 2-4 are on both committees", v.Live.Tally, v.Flags)
		}
		hs, _ := stateHash(t, h)
		hashes = append(hashes, hs)
	}
	if hashes[0] != hashes[1] {
		t.Fatal("the order changed the state")
	}
}

// District tables of D72 in witan's format (docs/deviations.md).
var (
	religionTable = []byte(`{"attributes":{"density":["urban"],"region":["north"],"religion":["x"]},"members":{}}`)
	goodTable     = []byte(`{"attributes":{"density":["rural","urban"],"region":["north","south"]},"members":{}}`)
)
