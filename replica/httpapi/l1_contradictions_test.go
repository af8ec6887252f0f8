package httpapi_test

// Points where a node could contradict the 30k prompt, each driven
// over HTTP on a real listener with envelopes signed in the test. The
// expected values are worked out by hand in the comments from the
// prompt's words.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// reversionRule is the root merge rule of S17: more than half of the
// electorate, on_threshold, 72 hours of notice, and a 3/4 reversion
// threshold (D41).
func reversionRule() rules.Ref {
	return ht.Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold","reversion":{"num":3,"den":4}}`, house.MinRootNotice)
}

// rootHead reads the root branch's single head.
func rootHead(t *testing.T, n *apiNode, space string) dag.ID {
	t.Helper()
	m := n.get(t, "/branches/root?session="+space)
	h, _ := field(m, "branch", "heads", 0).(string)
	id, err := dag.ParseID(h)
	if err != nil {
		t.Fatalf("root heads: %v", field(m, "branch", "heads"))
	}
	return id
}

// amendRoot forks branch name from the root at head, appends a change
// setting /us/t1/s1's text, and opens an MR into the root under rule.
// It returns the MR id.
func amendRoot(t *testing.T, n *apiNode, s *l1Session, name string, head dag.ID, text string, rule rules.Ref, roster int) dag.ID {
	t.Helper()
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, head, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), name, head, []statute.Op{ht.Replace(b.Trees[head], "/us/t1/s1", text)}, s.last)
	s.do(t, n, tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: name, SourceHead: change, TargetHead: head, Members: ht.Members(0, roster), Rule: rule}, s.last)
	s.do(t, n, open)
	return mr
}

// TestReversionHTTP is S17's L1 part (D41): three blocs with cyclic
// preferences pass X→Z and Z→Y with 6 of 10; the reverting MR Y→X, also
// approved by 6 of 10, fails under the 3/4 reversion threshold.
//
// By hand: N = 10, on_threshold, basis electorate. Under 1/2 (gt), 6
// approvals pass: 6·2 = 12 > 1·10. Y→X gives /us/t1/s1 back the
// node_hash it had at the genesis root head, an earlier root head that is
// not the current one, so its fact sheet lists that revert and 3/4
// replaces 1/2: with R = 4, (N−R−V)·den = 6·4 = 24 > 3·10 = 30 fails, so
// the MR is rejected and a determination claiming "approved" is false.
func TestReversionHTTP(t *testing.T) {
	n := newNode(t)
	rule := reversionRule()
	s := startSession(t, n, ht.Options{RootRule: &rule}, 10)
	b := s.b
	x := b.Genesis
	pass := func(mr dag.ID) dag.ID {
		t.Helper()
		ballots := append(s.vote(t, n, mr, "approve", 0, 6), s.vote(t, n, mr, "reject", 6, 10)...)
		s.do(t, n, b.Determine(ht.Member(3), mr, ballots, "approved", s.last))
		if st := n.get(t, "/merge-requests/"+mr.String())["status"]; st != "merged" {
			t.Fatalf("MR %s: status %v, want merged", mr, st)
		}
		return rootHead(t, n, s.space)
	}
	mrZ := amendRoot(t, n, s, "to-z", x, "The period is 45 days.", rule, 10)
	if th := field(n.get(t, "/merge-requests/"+mrZ.String()+"/facts"), "rule_threshold"); field(th, "num") != 1.0 || field(th, "den") != 2.0 || field(th, "reversion") != false {
		t.Fatalf("X→Z rule_threshold %v, want 1/2 without reversion", th)
	}
	z := pass(mrZ)
	// The merged snapshots are the sources' (the root did not move in
	// between); the builder needs them to append on the new root heads.
	zTree, _ := statute.Apply(b.Trees[x], []statute.Op{ht.Replace(b.Trees[x], "/us/t1/s1", "The period is 45 days.")})
	b.Trees[z] = zTree
	y := pass(amendRoot(t, n, s, "to-y", z, "The period is 60 days.", rule, 10))
	yTree, _ := statute.Apply(zTree, []statute.Op{ht.Replace(zTree, "/us/t1/s1", "The period is 60 days.")})
	b.Trees[y] = yTree

	back := amendRoot(t, n, s, "to-x", y, "The period is 30 days.", rule, 10)
	facts := n.get(t, "/merge-requests/"+back.String()+"/facts")
	xHash, _ := b.Trees[x].NodeHash("/us/t1/s1")
	rv := field(facts, "facts", "reverts", 0)
	if field(rv, "nid") != "/us/t1/s1" || field(rv, "to") != xHash.String() || field(rv, "previously_in") != x.String() {
		t.Fatalf("reverts %v, want /us/t1/s1 back to %s (root head %s)", field(facts, "facts", "reverts"), xHash, x)
	}
	if th := field(facts, "rule_threshold"); field(th, "num") != 3.0 || field(th, "den") != 4.0 || field(th, "reversion") != true {
		t.Fatalf("rule_threshold %v, want the 3/4 reversion threshold", th)
	}
	ballots := append(s.vote(t, n, back, "approve", 0, 6), s.vote(t, n, back, "reject", 6, 10)...)
	if live := field(n.get(t, "/merge-requests/"+back.String()+"/tally"), "result", "outcome"); live != "rejected" {
		t.Fatalf("live outcome %v, want rejected under 3/4", live)
	}
	n.refuse(t, b.Determine(ht.Member(3), back, ballots, "approved", s.last), dag.CodeNotAuthorized)
	s.do(t, n, b.Determine(ht.Member(3), back, ballots, "rejected", s.last))
	if st := n.get(t, "/merge-requests/"+back.String())["status"]; st != "rejected" {
		t.Fatalf("reverting MR status %v, want rejected", st)
	}
	if h := rootHead(t, n, s.space); h != y {
		t.Fatalf("root head %s, want %s (Y stays in force)", h, y)
	}
}

// TestPublishedReferenceHTTP: whether a sha256 reference in text is
// published is decided from the MR's causal past (D56, §6 structure),
// alike at admission and in /checks. An MR citing an earlier transaction
// of the session passes structure and merges; one citing an annex no
// entry published is blocked in /checks and can never be approved.
func TestPublishedReferenceHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	roster := b.GroupCreate(ht.Member(0), "clerks", ht.Members(0, 1), ht.Members(0, 1), s.last)
	s.do(t, n, roster)
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	annex := dag.Sum([]byte("a classified annex no entry publishes"))
	open := func(text string, head dag.ID) (dag.ID, dag.ID) {
		tx, change := b.Append(ht.Member(2), "draft", head, []statute.Op{ht.Replace(b.Trees[head], "/us/t1/s2", text)}, s.last)
		s.do(t, n, tx)
		o, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
		s.do(t, n, o)
		return mr, change
	}
	bad, badChange := open("As set out in the annex "+annex.String()+".", b.Genesis)
	good, _ := open("As recorded in "+roster.ID.String()+".", badChange)

	checks := n.get(t, "/merge-requests/"+bad.String()+"/checks")
	if field(checks, "checks", "blocked") != true || field(checks, "checks", "checks", 0, "messages", 0, "code") != string(dag.CodeUnpublishedReference) {
		t.Fatalf("unpublished annex: checks %v, want structure blocked with unpublished_reference", checks["checks"])
	}
	if n.get(t, "/merge-requests/"+bad.String())["structure_failed"] != true {
		t.Fatal("unpublished annex: the MR does not fail structure")
	}
	ballots := s.vote(t, n, bad, "approve", 0, 5)
	n.refuse(t, b.Determine(ht.Member(3), bad, ballots, "approved", s.last), dag.CodeNotAuthorized)

	checks = n.get(t, "/merge-requests/"+good.String()+"/checks")
	if field(checks, "checks", "blocked") != false {
		t.Fatalf("published reference: checks %v, want not blocked", checks["checks"])
	}
	if n.get(t, "/merge-requests/"+good.String())["structure_failed"] != false {
		t.Fatal("published reference: /checks passes but the MR fails structure")
	}
	ballots = s.vote(t, n, good, "approve", 0, 5)
	s.do(t, n, b.Determine(ht.Member(3), good, ballots, "approved", s.last))
	if st := n.get(t, "/merge-requests/"+good.String())["status"]; st != "merged" {
		t.Fatalf("published reference: status %v, want merged", st)
	}
}

// TestDistrictTableAtAdmission (D72, S21): a session.create whose table
// has a religion column is refused district_attribute_invalid when it is
// submitted, and nothing is stored; one with region and density is
// accepted.
func TestDistrictTableAtAdmission(t *testing.T) {
	n := newNode(t)
	bad := ht.New(ht.Options{Simulation: true, Label: "religion", Districts: []byte(`{"attributes":{"density":["urban"],"region":["north"],"religion":["a","b"]},"members":{}}`)})
	n.refuse(t, bad.Create, dag.CodeDistrictAttributeInvalid)
	if st, _, _ := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+"/sessions/"+bad.Session.String(), nil); st != http.StatusNotFound {
		t.Fatalf("refused session answers %d", st)
	}
	good := ht.New(ht.Options{Simulation: true, Label: "regions", Districts: []byte(`{"attributes":{"density":["rural","urban"],"region":["north","south"]},"members":{}}`)})
	n.accept(t, good.Create)
}

// TestObjectsMRAndRuleText (§5: /objects serves any content-addressed
// object, MR included): /objects/{mr_id} is the mr.open body, whose hash
// is the MR id; a rule's text_ref is served as plain text; a branch whose
// rule text names no object anyone carries is refused, nothing stored.
func TestObjectsMRAndRuleText(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, s.last)
	s.do(t, n, tx)
	body, mr := b.MRBody(ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	open, _ := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, open)
	if mr != dag.Sum(body) {
		t.Fatal("mr_id is not sha256 of the body")
	}
	obj := n.get(t, "/objects/"+mr.String())
	raw, err := dag.Marshal(obj["object"])
	if err != nil || dag.Sum(raw) != mr || obj["kind"] != "object" || obj["space"] != s.space {
		t.Fatalf("/objects/{mr_id}: %v", obj)
	}
	text := n.get(t, "/objects/"+ht.TextRef.String())
	if text["object"] != string(ht.RuleText) || text["media_type"] != "text/plain; charset=utf-8" {
		t.Fatalf("/objects/{text_ref}: %v", text)
	}
	r := ht.AlwaysAllow()
	r.TextRef = dag.Sum([]byte("a rule text nobody carries"))
	n.refuse(t, b.BranchCreate(ht.Member(1), "other", "drafters", house.RootBranch, b.Genesis, false, r, ht.TwoThirds(), s.last), dag.CodeUnknownParent)
}

// TestSeveralRefsHTTP: two [[ref:]] markers in one node do not block an
// MR (docs/deviations.md: §4's "at most one of each marker" is read as
// one value per node for the markers that set something about it).
func TestSeveralRefsHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "As in [[ref:/us/t1/s2]] and [[ref:/us/t1/s3]].")}, s.last)
	s.do(t, n, tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, open)
	if c := n.get(t, "/merge-requests/"+mr.String()+"/checks"); field(c, "checks", "blocked") != false {
		t.Fatalf("two refs: %v", c["checks"])
	}
	if n.get(t, "/merge-requests/"+mr.String())["structure_failed"] != false {
		t.Fatal("two refs fail structure")
	}
}

// TestSupersededHTTP (D48): an MR that supersedes another makes it
// "superseded"; its ballots are ignored and a determination on it is
// refused; the new version's fact sheet carries versus_superseded, the
// structural diff between the two versions (here /us/t1/s1 modified).
func TestSupersededHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, c1 := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 35 days.")}, s.last)
	s.do(t, n, tx)
	o1, mr1 := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c1, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, o1)
	early := s.vote(t, n, mr1, "approve", 0, 1)
	tx, c2 := b.Append(ht.Member(2), "draft", c1, []statute.Op{ht.Replace(b.Trees[c1], "/us/t1/s1", "The period is 45 days.")}, s.last)
	s.do(t, n, tx)
	o2, mr2 := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c2, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Supersedes: mr1}, s.last)
	s.do(t, n, o2)
	if st := n.get(t, "/merge-requests/"+mr1.String())["status"]; st != "superseded" {
		t.Fatalf("old version: status %v, want superseded", st)
	}
	if st := n.get(t, "/merge-requests/"+mr2.String())["status"]; st != "open" {
		t.Fatalf("new version: status %v", st)
	}
	late := s.vote(t, n, mr1, "approve", 1, 5)
	n.refuse(t, b.Determine(ht.Member(3), mr1, append(early, late...), "approved", s.last), dag.CodeNotAuthorized)
	vs := field(n.get(t, "/merge-requests/"+mr2.String()+"/facts"), "facts", "versus_superseded")
	if m := field(vs, "modified"); m == nil || len(m.([]any)) != 1 || field(vs, "modified", 0) != "/us/t1/s1" || len(field(vs, "added").([]any)) != 0 {
		t.Fatalf("versus_superseded %v, want /us/t1/s1 modified", vs)
	}
	if vs := field(n.get(t, "/merge-requests/"+mr1.String()+"/facts"), "facts", "versus_superseded"); vs != nil {
		t.Fatalf("an MR that supersedes nothing has versus_superseded %v", vs)
	}
}

// TestFiscalEstimateMissingHTTP (D53): a determination approving an MR
// with fiscal: true is refused estimate_missing while no accepted
// opinion with an estimate on it is in the determination's causal past
// (none can be yet: opinions are L2); rejecting it needs no notice.
func TestFiscalEstimateMissingHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, c := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "[[approp:ops:5000:2027]] $5000 is appropriated.")}, s.last)
	s.do(t, n, tx)
	o, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Fiscal: true}, s.last)
	s.do(t, n, o)
	yes := s.vote(t, n, mr, "approve", 0, 3)
	n.refuse(t, b.Determine(ht.Member(3), mr, yes, "approved", s.last), dag.CodeEstimateMissing)
	if st := n.get(t, "/merge-requests/"+mr.String())["status"]; st != "open" {
		t.Fatalf("fiscal MR: status %v, want open", st)
	}

	o2, mr2 := b.Open(ht.Member(2), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Fiscal: true, Summary: "again"}, s.last)
	s.do(t, n, o2)
	no := s.vote(t, n, mr2, "reject", 0, 3)
	s.do(t, n, b.Determine(ht.Member(3), mr2, no, "rejected", s.last))
	if st := n.get(t, "/merge-requests/"+mr2.String())["status"]; st != "rejected" {
		t.Fatalf("fiscal MR rejected: status %v", st)
	}
}

// onDeadline is an on_deadline threshold rule closing at deadline.
func onDeadline(deadline string) rules.Ref {
	return ht.Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":1,"quorum_den":2,"closing":"on_deadline","deadline":"`+deadline+`"}`, -1)
}

// TestDeadlineTooShortHTTP (D74; open points 7, 12, 14; deviations.md):
// witan has one reading of the minimum window for mr.open and
// contest.open: an on_deadline rule's deadline must be at least 259200 s
// (72 h) after the witnessed time at the open, the largest ts among the
// member-signed entries of its causal past, itself included; else the
// open is refused deadline_too_short and nothing is stored. Every
// replica holding the same entries decides alike; checkpoint time plays
// no part. X = 2026-09-25T00:00:00Z is the witnessed time of the opens:
//   - "short" (deadline X+72h-1s), opened at ts X: 259199 s, refused;
//   - "edge" (deadline X+72h), opened at ts X: 259200 s, accepted;
//   - "late" (deadline X+72h), opened with ts X-10h on top of a ballot
//     signed at X+1h: by its own ts it would have 82 h, but its
//     witnessed time is X+1h, leaving 71 h: refused;
//   - a checkpoint at X+71h (1 hour before edge's deadline, which the
//     old advisory reading flagged) changes nothing: no advisories,
//     edge stays open.
func TestDeadlineTooShortHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	x := time.Date(2026, 9, 25, 0, 0, 0, 0, time.UTC)
	prev := b.Create
	// signAt makes the next envelope's ts when (the builder's clock moves
	// one second per envelope).
	signAt := func(when time.Time) {
		last, err := time.Parse(time.RFC3339, prev.Env.TS)
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(when.Sub(last) - time.Second)
	}
	do := func(tx ht.Tx) { s.do(t, n, tx); prev = tx }
	prepare := func(branch string, deadline time.Time) (rules.Ref, dag.ID) {
		rule := onDeadline(deadline.Format(time.RFC3339))
		do(b.BranchCreate(ht.Member(1), branch, "drafters", house.RootBranch, b.Genesis, false, rule, ht.TwoThirds(), s.last))
		do(b.BranchCreate(ht.Member(1), branch+"-work", "drafters", branch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
		tx, c := b.Append(ht.Member(2), branch+"-work", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days in "+branch+".")}, s.last)
		do(tx)
		return rule, c
	}
	open := func(branch string, rule rules.Ref, c dag.ID, ts time.Time) (ht.Tx, dag.ID) {
		signAt(ts)
		tx, mr := b.Open(ht.Member(1), ht.MR{Source: branch + "-work", SourceHead: c, Target: branch, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: rule}, s.last)
		if tx.Env.TS != ts.Format(time.RFC3339) {
			t.Fatalf("open signed at %s, want %s", tx.Env.TS, ts.Format(time.RFC3339))
		}
		prev = tx
		return tx, mr
	}
	shortRule, shortC := prepare("short", x.Add(72*time.Hour-time.Second))
	edgeRule, edgeC := prepare("edge", x.Add(72*time.Hour))
	lateRule, lateC := prepare("late", x.Add(72*time.Hour))

	tx, _ := open("short", shortRule, shortC, x)
	if m := n.refuse(t, tx, dag.CodeDeadlineTooShort); !strings.Contains(fmt.Sprint(m["detail"]), "259199s") {
		t.Fatalf("short: detail %v", m["detail"])
	}
	tx, edge := open("edge", edgeRule, edgeC, x)
	do(tx)

	signAt(x.Add(time.Hour))
	do(b.Ballot(ht.Member(3), edge, "approve", dag.ID{}, s.last))
	tx, _ = open("late", lateRule, lateC, x.Add(-10*time.Hour))
	if m := n.refuse(t, tx, dag.CodeDeadlineTooShort); !strings.Contains(fmt.Sprint(m["detail"]), "255600s") {
		t.Fatalf("late: detail %v (want 71 h = 255600 s from the witnessed time)", m["detail"])
	}

	// The prompt's words, in this node's checkpoint time: no checkpoint
	// includes the open yet, so nothing is flagged; the first one that
	// does is signed 71 h after the open's witnessed time, 1 h (3600 s)
	// before the deadline, so the admitted MR carries deadline_too_short
	// as an advisory flag, and stays open (a flag changes nothing).
	m := n.get(t, "/merge-requests/"+edge.String())
	if a, ok := m["advisories"].([]any); !ok || len(a) != 0 {
		t.Fatalf("edge before any checkpoint: advisories %v, want none", m["advisories"])
	}
	before := n.get(t, "/sessions/"+s.space)
	if before["state_hash"] == nil {
		t.Fatalf("no state_hash: %v", before)
	}
	n.clk.t = x.Add(71 * time.Hour)
	n.checkpointNow(t, s.space)
	m = n.get(t, "/merge-requests/"+edge.String())
	a, ok := m["advisories"].([]any)
	if !ok || len(a) != 1 || m["status"] != "open" {
		t.Fatalf("edge after a checkpoint 1 h before its deadline: status %v, advisories %v", m["status"], m["advisories"])
	}
	f := a[0].(map[string]any)
	if f["code"] != string(dag.CodeDeadlineTooShort) || f["authoritative"] != false || !strings.Contains(fmt.Sprint(f["detail"]), "3600s") {
		t.Fatalf("advisory %v, want deadline_too_short, not authoritative, 3600 s", f)
	}
	if after := n.get(t, "/sessions/"+s.space); fmt.Sprint(after["state_hash"]) != fmt.Sprint(before["state_hash"]) {
		t.Fatalf("the advisory flag changed the state: %v -> %v", before["state_hash"], after["state_hash"])
	}
}

// TestBadInputNewPathsHTTP: bad input on the newer paths gets a
// problem+json with the prompt's code and stores nothing: an empty
// plain-text attachment (schema), a district table that is not a table
// (schema), an MR id that is not an id (schema), an unknown MR object
// (not found).
func TestBadInputNewPathsHTTP(t *testing.T) {
	n := newNode(t)
	b := ht.New(ht.Options{Simulation: true, Label: "bad input"})
	body := wireTx(t, b.Create)
	body = []byte(strings.Replace(string(body), `"attachments":[`, `"attachments":["",`, 1))
	st, ct, m := rawDo(t, http.MethodPost, n.srv.URL+httpapi.Base+"/transactions", body)
	if st != http.StatusBadRequest || ct != httpapi.ContentTypeProblem || m["code"] != string(dag.CodeSchema) {
		t.Fatalf("empty text attachment: %d %s %v", st, ct, m)
	}
	if st, _, _ := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+"/objects/"+txID(t, b.Create.Bytes), nil); st != http.StatusNotFound {
		t.Fatalf("refused session.create stored: %d", st)
	}
	notTable := ht.New(ht.Options{Simulation: true, Label: "not a table", Districts: []byte("region: north")})
	n.refuse(t, notTable.Create, dag.CodeSchema)

	n.accept(t, b.Create)
	n.problem(t, http.MethodGet, httpapi.Base+"/objects/sha256:xyz", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/merge-requests/nope/facts", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/objects/"+dag.Sum([]byte("no MR")).String(), "", nil, http.StatusNotFound, httpapi.CodeNotFound)
}
