package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// The emergency expiry change of D49 over HTTP: nodes an
// emergency removed come back, and an emergency approved through a
// contest expires too. Expected texts and times are worked out by hand
// from D49 and open point 14 (an expiry applies once an entry exists
// whose witnessed time is at least the merge's plus 30 days).

// lawChildren lists the nids of nid's children in /law, in order.
func lawChildren(t *testing.T, nd *apiNode, nid string) []string {
	t.Helper()
	var find func(n map[string]any) []string
	find = func(n map[string]any) []string {
		cs, _ := n["children"].([]any)
		if n["nid"] == nid {
			out := []string{}
			for _, c := range cs {
				out = append(out, c.(map[string]any)["nid"].(string))
			}
			return out
		}
		for _, c := range cs {
			if r := find(c.(map[string]any)); r != nil {
				return r
			}
		}
		return nil
	}
	return find(nd.getMap(t, "/law", nil)["root"].(map[string]any))
}

// TestEmergencyExpiryReinsertsRemoved: the seed's title holds s1..s6
// (each "The period is 30 days."). An emergency MR (7 of 10 answering
// emergency "yes": 21 >= 20) sets s1 to 5 days, deletes s2 and s3, moves
// s5 first, then s6 first: the title reads s6, s5, s1, s4 (the diff
// flags s5 and s6 moved: s1, s4 keep their order). It merges on a
// determination at T. A later ordinary MR inserts s3 again (90 days)
// after s1 and moves s6 after s1: s5, s1, s6, s3, s4 (from the merge's
// snapshot, s6 is moved, s5 is not). At T+30d-1s nothing has expired; at
// T+30d the expiry change sets s1 back to 30 days, reinserts s2 with its
// pre-merge heading and text after s1 (its nearest pre-merge preceding
// sibling that is there): s5, s1, s2, s6, s3, s4; leaves s3 (added again)
// and s6 (moved again) alone; and moves s5 back after s4: the title
// reads s1, s2, s6, s3, s4, s5, s3 at 90 days and the others at 30.
func TestEmergencyExpiryReinsertsRemoved(t *testing.T) {
	nd := newNode(t)
	b := ht.New(ht.Options{Simulation: true, Sections: 6})
	s := &session{b: b, space: b.Session.String()}
	nd.submit(t, s, b.Create)
	nd.submit(t, s, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	nd.submit(t, s, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	nd.submit(t, s, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	nd.submit(t, s, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	g := b.Trees[b.Genesis]
	first := func(nid string) statute.Op {
		h, _ := g.NodeHash(nid)
		return statute.Op{Op: statute.OpMove, NID: nid, Pre: h, ParentNID: "/us/t1"}
	}
	del := func(tr *statute.Tree, nid string) statute.Op {
		h, ok := tr.NodeHash(nid)
		if !ok {
			t.Fatalf("no %s", nid)
		}
		return statute.Op{Op: statute.OpDelete, NID: nid, Pre: h}
	}
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(g, "/us/t1/s1", "The period is 5 days."), del(g, "/us/t1/s2"), del(g, "/us/t1/s3"), first("/us/t1/s5"), first("/us/t1/s6")}, s.last)
	nd.submit(t, s, tx)
	raw, _ := b.MRBody(ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)})
	raw = bytes.Replace(raw, []byte(`"emergency":false`), []byte(`"emergency":true`), 1)
	mr := dag.Sum(raw)
	open := b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(raw), []dag.ID{s.last})
	nd.submit(t, s, open)
	var ballots []dag.ID
	for m := 0; m < 7; m++ {
		bt := b.Sign(ht.Member(m), dag.TxBallotCast, map[string]any{"mr": mr, "choice": "approve", "emergency": "yes", "supersedes": nil}, []dag.ID{s.last})
		nd.submit(t, s, bt)
		ballots = append(ballots, bt.ID)
	}
	at := time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC) // T, after every entry above
	nd.submit(t, s, signAt(b, ht.Member(3), dag.TxMRDetermine, map[string]any{"mr": mr, "ballots": ballots, "outcome": "approved"}, []dag.ID{s.last}, at))
	m := nd.getMap(t, "/merge-requests/"+mr.String(), nil)
	if m["status"] != house.StatusMerged || fmt.Sprint(lawChildren(t, nd, "/us/t1")) != "[/us/t1/s6 /us/t1/s5 /us/t1/s1 /us/t1/s4]" {
		t.Fatalf("after the emergency merge: %v, title %v", m["status"], lawChildren(t, nd, "/us/t1"))
	}
	// The later ordinary MR (6 of 10 approve) inserts s3 again after s1 and
	// moves s6 after s1.
	merge, _ := dag.ParseID(m["merge"].(string))
	b.Trees[merge] = b.Trees[change]
	b.Advance(48 * time.Hour) // the builder's clock passes T
	nd.submit(t, s, b.BranchCreate(ht.Member(1), "later", "drafters", house.RootBranch, merge, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	ins := statute.Op{Op: statute.OpInsert, ParentNID: "/us/t1", AfterNID: "/us/t1/s1", Node: &statute.NodeSpec{NID: "/us/t1/s3", Kind: "section", Heading: "Section 3", Text: "The period is 90 days."}}
	s6, _ := b.Trees[merge].NodeHash("/us/t1/s6")
	mv := statute.Op{Op: statute.OpMove, NID: "/us/t1/s6", Pre: s6, ParentNID: "/us/t1", AfterNID: "/us/t1/s1"}
	ltx, lchange := b.Append(ht.Member(2), "later", merge, []statute.Op{ins, mv}, s.last)
	nd.submit(t, s, ltx)
	lopen, lmr := b.Open(ht.Member(1), ht.MR{Source: "later", SourceHead: lchange, TargetHead: merge, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	nd.submit(t, s, lopen)
	var lballots []dag.ID
	for i := 0; i < 6; i++ {
		bt := b.Ballot(ht.Member(i), lmr, "approve", dag.ID{}, s.last)
		nd.submit(t, s, bt)
		lballots = append(lballots, bt.ID)
	}
	nd.submit(t, s, signAt(b, ht.Member(3), dag.TxMRDetermine, map[string]any{"mr": lmr, "ballots": lballots, "outcome": "approved"}, []dag.ID{s.last}, at.Add(4*24*time.Hour)))
	if st, _ := mrStatus(t, nd, lmr); st != house.StatusMerged || fmt.Sprint(lawChildren(t, nd, "/us/t1")) != "[/us/t1/s5 /us/t1/s1 /us/t1/s6 /us/t1/s3 /us/t1/s4]" {
		t.Fatalf("the later MR: %s, title %v", st, lawChildren(t, nd, "/us/t1"))
	}
	nd.submit(t, s, signAt(b, ht.Member(5), dag.TxKeyRegister, map[string]any{"key": ht.Member(5).Key()}, []dag.ID{s.last}, at.Add(30*24*time.Hour-time.Second)))
	if got := fmt.Sprint(lawChildren(t, nd, "/us/t1")); got != "[/us/t1/s5 /us/t1/s1 /us/t1/s6 /us/t1/s3 /us/t1/s4]" || lawText(t, nd, "/us/t1/s1") != "The period is 5 days." {
		t.Fatalf("a second before 30 days: title %s, s1 %q", got, lawText(t, nd, "/us/t1/s1"))
	}
	nd.submit(t, s, signAt(b, ht.Member(6), dag.TxKeyRegister, map[string]any{"key": ht.Member(6).Key()}, []dag.ID{s.last}, at.Add(30*24*time.Hour)))
	if got := fmt.Sprint(lawChildren(t, nd, "/us/t1")); got != "[/us/t1/s1 /us/t1/s2 /us/t1/s6 /us/t1/s3 /us/t1/s4 /us/t1/s5]" {
		t.Fatalf("after the expiry: title %s", got)
	}
	for nid, want := range map[string]string{"/us/t1/s1": "The period is 30 days.", "/us/t1/s2": "The period is 30 days.", "/us/t1/s3": "The period is 90 days.", "/us/t1/s4": "The period is 30 days.", "/us/t1/s5": "The period is 30 days.", "/us/t1/s6": "The period is 30 days."} {
		if got := lawText(t, nd, nid); got != want {
			t.Fatalf("after the expiry: %s reads %q, want %q", nid, got, want)
		}
	}
	state := nd.getMap(t, "/sessions/"+s.space, nil)["state"].(map[string]any)
	if ex, _ := state["expiries"].([]any); len(ex) != 1 || field(ex, 0, "mr") != mr.String() {
		t.Fatalf("state expiries %v", state["expiries"])
	}
}

// emergencyContest runs a contest of two options on s1 in a roster of
// 10: X (emergency: true, s1 to 7 days) and Y (s1 to 40 days). Members
// 0..yes-1 cast plain ballots on X answering emergency "yes": the first
// three before the contest opens (approve), the rest after it (reject:
// the choice is ignored, §7, and designation is independent of it,
// D49). Members 0-5 rank X > S > Y and 6-9 rank S > X > Y: X>Y 10:0,
// S>Y 10:0, X>S 6:4, all locked, X unbeaten; X passes more than half of
// the electorate (6*2 > 10) and is approved at T, Y loses.
func emergencyContest(t *testing.T, yes int) (*apiNode, *contestSession, dag.ID, dag.ID, time.Time) {
	nd := newNode(t)
	cs := newContestSession(t, nd, 10)
	cs.emergency = true
	otx, x := cs.option(t, nd, "x", map[string]string{"/us/t1/s1": "The period is 7 days."}, dag.ID{})
	nd.submit(t, cs.session, otx)
	cs.emergency = false
	otx, y := cs.option(t, nd, "y", map[string]string{"/us/t1/s1": "The period is 40 days."}, dag.ID{})
	nd.submit(t, cs.session, otx)
	ballot := func(m int, choice string) {
		nd.submit(t, cs.session, cs.b.Sign(ht.Member(m), dag.TxBallotCast, map[string]any{"mr": x, "choice": choice, "emergency": "yes", "supersedes": nil}, []dag.ID{cs.last}))
	}
	for m := 0; m < min(yes, 3); m++ {
		ballot(m, "approve")
	}
	open, cid := cs.open(t, nd, []dag.ID{x, y}, "")
	nd.submit(t, cs.session, open)
	for m := 3; m < yes; m++ {
		ballot(m, "reject")
	}
	var ranks []dag.ID
	for m := 0; m < 6; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, x, sq, y))
	}
	for m := 6; m < 10; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, sq, x, y))
	}
	at := time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC)
	nd.submit(t, cs.session, signAt(cs.b, ht.Member(4), dag.TxContestDetermine, map[string]any{"contest": cid, "rankings": ranks, "outcome": "approved", "winner": x}, []dag.ID{cs.last}, at))
	if st, _ := mrStatus(t, nd, x); st != house.StatusMerged || lawText(t, nd, "/us/t1/s1") != "The period is 7 days." {
		t.Fatalf("X: %s, s1 %q", st, lawText(t, nd, "/us/t1/s1"))
	}
	if st, why := mrStatus(t, nd, y); st != house.StatusRejected || why != string(rules.ReasonContestLost) {
		t.Fatalf("Y: %s %s", st, why)
	}
	return nd, cs, x, cid, at
}

// TestEmergencyInContestExpires: with 7 of 10 emergency "yes" ballots
// (21 >= 20) the approved option X is a designated emergency, and its
// merge through the contest schedules the expiry: s1 reads 7 days a
// second before T+30d and 30 days again at T+30d.
func TestEmergencyInContestExpires(t *testing.T) {
	nd, cs, x, cid, at := emergencyContest(t, 7)
	c := nd.getMap(t, "/contests/"+cid.String(), nil)
	if d := c["determinations"].([]any); len(d) != 1 || field(d, 0, "emergency_designated") != true || field(d, 0, "executed") != true {
		t.Fatalf("determinations %v", c["determinations"])
	}
	nd.submit(t, cs.session, signAt(cs.b, ht.Member(5), dag.TxKeyRegister, map[string]any{"key": ht.Member(5).Key()}, []dag.ID{cs.last}, at.Add(30*24*time.Hour-time.Second)))
	if got := lawText(t, nd, "/us/t1/s1"); got != "The period is 7 days." {
		t.Fatalf("a second before 30 days: %q", got)
	}
	nd.submit(t, cs.session, signAt(cs.b, ht.Member(6), dag.TxKeyRegister, map[string]any{"key": ht.Member(6).Key()}, []dag.ID{cs.last}, at.Add(30*24*time.Hour)))
	if got := lawText(t, nd, "/us/t1/s1"); got != "The period is 30 days." {
		t.Fatalf("after the expiry: %q", got)
	}
	st := nd.getMap(t, "/sessions/"+cs.space, nil)["state"].(map[string]any)
	if ex, _ := st["expiries"].([]any); len(ex) != 1 || field(ex, 0, "mr") != x.String() {
		t.Fatalf("state expiries %v", st["expiries"])
	}
}

// TestEmergencyInContestNotDesignated: with 6 of 10 (18 < 20) X is not
// designated and its merge never expires: s1 still reads 7 days at
// T+31d.
func TestEmergencyInContestNotDesignated(t *testing.T) {
	nd, cs, _, cid, at := emergencyContest(t, 6)
	c := nd.getMap(t, "/contests/"+cid.String(), nil)
	if d := c["determinations"].([]any); len(d) != 1 || field(d, 0, "emergency_designated") != false {
		t.Fatalf("determinations %v", c["determinations"])
	}
	nd.submit(t, cs.session, signAt(cs.b, ht.Member(5), dag.TxKeyRegister, map[string]any{"key": ht.Member(5).Key()}, []dag.ID{cs.last}, at.Add(31*24*time.Hour)))
	if got := lawText(t, nd, "/us/t1/s1"); got != "The period is 7 days." {
		t.Fatalf("an undesignated option expired: %q", got)
	}
}
