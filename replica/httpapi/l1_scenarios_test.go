package httpapi_test

// The L1 scenarios of 30k §10 driven through /oth/v0 only: a real node on
// a loopback listener, envelopes signed here, tx ids computed here
// (txID), answers read as JSON. Expected values are worked out by hand
// from §7 in each test's comment.

import (
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

// amend appends a change setting nid's text on branch (whose head is
// parent) and returns the change id.
func (s *l1Session) amend(t *testing.T, n *apiNode, branch string, parent dag.ID, nid, text string) dag.ID {
	t.Helper()
	tx, c := s.b.Append(ht.Member(2), branch, parent, []statute.Op{ht.Replace(s.b.Trees[parent], nid, text)}, s.last)
	s.do(t, n, tx)
	return c
}

// branch creates an unprotected drafters branch forked at change of from.
func (s *l1Session) branch(t *testing.T, n *apiNode, name, from string, at dag.ID, merge rules.Ref) {
	t.Helper()
	s.do(t, n, s.b.BranchCreate(ht.Member(1), name, "drafters", from, at, false, merge, ht.TwoThirds(), s.last))
}

// open opens m (signed by member 1) and returns the MR id.
func (s *l1Session) open(t *testing.T, n *apiNode, m ht.MR) dag.ID {
	t.Helper()
	o, mr := s.b.Open(ht.Member(1), m, s.last)
	s.do(t, n, o)
	return mr
}

func num(v any) uint64 {
	f, _ := v.(float64)
	return uint64(f)
}

// tallyOf reads an MR's live tally: outcome and A, R, V.
func tallyOf(t *testing.T, n *apiNode, mr dag.ID) (string, [3]uint64, map[string]any) {
	t.Helper()
	m := n.get(t, "/merge-requests/"+mr.String()+"/tally")
	tl := field(m, "result", "tally")
	out, _ := field(m, "result", "outcome").(string)
	return out, [3]uint64{num(field(tl, "approve")), num(field(tl, "reject")), num(field(tl, "void"))}, m
}

func status(t *testing.T, n *apiNode, mr dag.ID) string {
	t.Helper()
	s, _ := n.get(t, "/merge-requests/"+mr.String())["status"].(string)
	return s
}

// TestS1S12LinearAmendmentHTTP: S1, a linear amendment passes a majority
// vote; S12's finality part, everything about it is provisional until a
// checkpoint of this node includes the executed determination, then
// final_advisory, never final.
//
// By hand (§7 threshold_vote, N = 10, 1/2 gt, basis electorate, quorum
// 1/2, on_threshold): after 5 approvals 5·2 = 10 > 10 fails and
// (N−R−V)·2 = 20 > 10 holds, so pending; the 6th gives 12 > 10 with
// quorum 6·2 ≥ 10: approved. Shares (D50): approve_of_cast 6/6,
// approve_of_electorate 6/10. The merge change (§6 item 4) is
// {base: seed, ops: the patch, result, parents: [target head, source
// head], message: "merge <mr>", author: oth:system}.
func TestS1S12LinearAmendmentHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 10)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	op := ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")
	change := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Extends the period to 45 days"})
	ballots := s.vote(t, n, mr, "approve", 0, 5)
	if _, c, tal := tallyOf(t, n, mr); field(tal, "result", "if_closed") != "pending" || c != [3]uint64{5, 0, 0} {
		t.Fatalf("after 5 approvals: %v %v, want pending", field(tal, "result", "if_closed"), c)
	}
	ballots = append(ballots, s.vote(t, n, mr, "approve", 5, 6)...)
	// The root rule has 72 hours of notice (D42), advisory on an eventual
	// node: the live outcome waits for notice, if_closed is the outcome
	// a determination is checked against.
	out, c, tal := tallyOf(t, n, mr)
	if out != "pending" || field(tal, "result", "if_closed") != "approved" || c != [3]uint64{6, 0, 0} || tal["finality"] != "provisional" {
		t.Fatalf("after 6 approvals: %s %v %v %v", out, field(tal, "result", "if_closed"), c, tal["finality"])
	}
	tl := field(tal, "result", "tally")
	if num(field(tl, "approve_of_cast", "num")) != 6 || num(field(tl, "approve_of_cast", "den")) != 6 ||
		num(field(tl, "approve_of_electorate", "num")) != 6 || num(field(tl, "approve_of_electorate", "den")) != 10 {
		t.Fatalf("shares %v", tl)
	}
	s.do(t, n, b.Determine(ht.Member(3), mr, ballots, "approved", s.last))
	m := n.get(t, "/merge-requests/"+mr.String())
	if m["status"] != "merged" || m["finality"] != "provisional" {
		t.Fatalf("merged MR before a checkpoint: %v %v", m["status"], m["finality"])
	}
	after, _ := statute.Apply(b.Trees[b.Genesis], []statute.Op{op})
	// The derived patch of a text edit carries no "children" (absent keeps
	// them, docs/deviations.md), unlike the drafter's op.
	op.Node.Children = nil
	merge := &statute.Change{Base: b.Seed.Hash(), Ops: []statute.Op{op}, Result: after.Hash(), Parents: []dag.ID{b.Genesis, change}, Message: "merge " + mr.String(), Author: dag.SystemAuthor}
	want, err := merge.ID()
	if err != nil {
		t.Fatal(err)
	}
	if h := rootHead(t, n, s.space); h != want {
		mine, _ := merge.Canonical()
		t.Fatalf("root head %s, want the merge change %s\nserved %s\nmine   %s", h, want, jsonString(t, n.get(t, "/objects/"+h.String())["object"]), mine)
	}
	law := n.get(t, "/law")
	if law["snapshot"] != after.Hash().String() || field(law, "root", "children", 0, "children", 0, "text") != "The period is 45 days." {
		t.Fatalf("/law %v", law)
	}
	n.checkpointNow(t, s.space)
	if f := n.get(t, "/merge-requests/"+mr.String())["finality"]; f != "final_advisory" {
		t.Fatalf("merged MR after the checkpoint: %v", f)
	}
	if f := n.get(t, "/merge-requests/"+mr.String()+"/tally")["finality"]; f != "final_advisory" {
		t.Fatalf("tally after the checkpoint: %v", f)
	}
	// An eventual node never emits final (§5).
	for _, p := range []string{"/.well-known/oth", "/log", "/merge-requests", "/merge-requests/" + mr.String(), "/merge-requests/" + mr.String() + "/facts", "/law", "/heads", "/checkpoint", "/sessions/" + s.space} {
		st, _, body := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+p, nil)
		if p == "/.well-known/oth" {
			st, _, body = rawDo(t, http.MethodGet, n.srv.URL+p, nil)
		}
		if st != http.StatusOK || strings.Contains(jsonString(t, body), `"finality":"final"`) {
			t.Fatalf("GET %s: %d emits final: %v", p, st, body)
		}
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := dag.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestS3GovernanceAndRuleKindsHTTP: S3, a governance MR changes a
// branch's merge rule; the always_allow and designated_approvers kinds.
//
// By hand: under always_allow an MR into "draft" is approved once open
// (structure passes), with no ballots. The governance MR is judged by
// draft's governance rule, 2/3 gte of N = 10: 6 approvals give
// 18 ≥ 20 false (pending), 7 give 21 ≥ 20 (approved). Afterwards draft's
// merge rule is designated_approvers(drafters = {1, 2}, required 2): an
// MR under the old rule is refused not_authorized, a ballot by roster
// member 5 (not an approver) is ballot_invalid, and approvals by 1 and 2
// give A = 2 ≥ 2: approved.
func TestS3GovernanceAndRuleKindsHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 10)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	s.branch(t, n, "work", "draft", b.Genesis, ht.AlwaysAllow())
	c1 := s.amend(t, n, "work", b.Genesis, "/us/t1/s1", "The period is 40 days.")
	mr1 := s.open(t, n, ht.MR{Source: "work", SourceHead: c1, Target: "draft", TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.AlwaysAllow()})
	if out, _, _ := tallyOf(t, n, mr1); out != "approved" {
		t.Fatalf("always_allow: live %s, want approved with no ballots", out)
	}
	s.do(t, n, b.Determine(ht.Member(4), mr1, nil, "approved", s.last))
	if st := status(t, n, mr1); st != "merged" {
		t.Fatalf("always_allow MR: %s", st)
	}
	draftHead, _ := dag.ParseID(field(n.get(t, "/branches/draft"), "branch", "heads", 0).(string))

	newRule := ht.Approvers("drafters", 2)
	gov := s.open(t, n, ht.MR{Kind: "governance", Target: "draft", TargetHead: draftHead, Members: ht.Members(0, 10), Rule: ht.TwoThirds(), Set: map[string]any{"merge_rule": newRule}})
	yes := s.vote(t, n, gov, "approve", 0, 6)
	if out, _, _ := tallyOf(t, n, gov); out != "pending" {
		t.Fatalf("governance MR with 6/10: %s, want pending", out)
	}
	yes = append(yes, s.vote(t, n, gov, "approve", 6, 7)...)
	s.do(t, n, b.Determine(ht.Member(4), gov, yes, "approved", s.last))
	if st := status(t, n, gov); st != "merged" {
		t.Fatalf("governance MR: %s", st)
	}
	if k := field(n.get(t, "/branches/draft"), "branch", "merge_rule", "kind"); k != rules.KindDesignatedApprovers {
		t.Fatalf("draft's merge rule is %v after the governance MR", k)
	}

	// The work branch follows draft's new head before the next MR.
	s.branch(t, n, "work2", "draft", draftHead, ht.AlwaysAllow())
	b.Trees[draftHead] = b.Trees[c1]
	c2 := s.amend(t, n, "work2", draftHead, "/us/t1/s2", "Appeals lie to the board.")
	old, _ := b.Open(ht.Member(1), ht.MR{Source: "work2", SourceHead: c2, Target: "draft", TargetHead: draftHead, Members: ht.Members(0, 10), Rule: ht.AlwaysAllow()}, s.last)
	n.refuse(t, old, dag.CodeNotAuthorized)
	mr2 := s.open(t, n, ht.MR{Source: "work2", SourceHead: c2, Target: "draft", TargetHead: draftHead, Group: "drafters", Members: ht.Members(1, 3), Rule: newRule})
	n.refuse(t, b.Ballot(ht.Member(5), mr2, "approve", dag.ID{}, s.last), dag.CodeBallotInvalid)
	ok := s.vote(t, n, mr2, "approve", 1, 2)
	if out, _, _ := tallyOf(t, n, mr2); out != "pending" {
		t.Fatalf("designated_approvers with A = 1 < 2: %s", out)
	}
	ok = append(ok, s.vote(t, n, mr2, "approve", 2, 3)...)
	s.do(t, n, b.Determine(ht.Member(4), mr2, ok, "approved", s.last))
	if st := status(t, n, mr2); st != "merged" {
		t.Fatalf("designated_approvers MR: %s", st)
	}
}

// TestS4EquivocationHTTP: S4, a double ballot voids the member's
// ballots; a supersedes chain is not equivocation.
//
// By hand: member 0 casts approve and reject with no supersedes link: V
// = 1, neither counts. Members 1–5 approve; member 6 approves, then
// rejects superseding it: R = 1. So A = 5, R = 1, V = 1; 5·2 = 10 > 10
// fails: pending; a determination claiming approved is refused.
func TestS4EquivocationHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 10)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)})
	all := s.vote(t, n, mr, "approve", 0, 6)
	all = append(all, s.vote(t, n, mr, "reject", 0, 1)...) // member 0 again, unlinked
	first := s.vote(t, n, mr, "approve", 6, 7)
	all = append(all, first...)
	all = append(all, s.do(t, n, b.Ballot(ht.Member(6), mr, "reject", first[0], s.last)))
	out, c3, tal := tallyOf(t, n, mr)
	if out != "pending" || c3 != [3]uint64{5, 1, 1} {
		t.Fatalf("tally %s %v, want pending A=5 R=1 V=1", out, c3)
	}
	if v := field(tal, "result", "voided", 0); v != ht.Member(0).Key().String() {
		t.Fatalf("voided %v, want member 0", field(tal, "result", "voided"))
	}
	n.refuse(t, b.Determine(ht.Member(3), mr, all, "approved", s.last), dag.CodeNotAuthorized)
}

// TestS5StaleHTTP: S5, bait and switch. Two MRs edit /us/t1/s1 from the
// genesis root; both get 6 approvals. The drafters move draft's head
// after the ballots; MR 2 merges and moves the root, so MR 1's pre hash
// no longer matches: MR 1 is stale, its approval executes nothing, the
// switched change is never merged, and an MR naming the old target head
// is refused stale_mr.
func TestS5StaleHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 10)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	s.branch(t, n, "rival", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c1 := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	c2 := s.amend(t, n, "rival", b.Genesis, "/us/t1/s1", "The period is 60 days.")
	mr1 := s.open(t, n, ht.MR{Source: "draft", SourceHead: c1, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)})
	mr2 := s.open(t, n, ht.MR{Source: "rival", SourceHead: c2, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)})
	b1 := s.vote(t, n, mr1, "approve", 0, 6)
	b2 := s.vote(t, n, mr2, "approve", 0, 6)
	switched := s.amend(t, n, "draft", c1, "/us/t1/s2", "Nobody may appeal.")
	s.do(t, n, b.Determine(ht.Member(0), mr2, b2, "approved", s.last))
	if st := status(t, n, mr1); st != "stale" {
		t.Fatalf("MR 1 after MR 2 merged: %s, want stale", st)
	}
	root := rootHead(t, n, s.space)
	s.do(t, n, b.Determine(ht.Member(0), mr1, b1, "approved", s.last))
	m1 := n.get(t, "/merge-requests/"+mr1.String())
	if m1["status"] != "stale" || m1["merge"] != nil || rootHead(t, n, s.space) != root {
		t.Fatalf("stale MR after approval: %v %v", m1["status"], m1["merge"])
	}
	if txt := field(n.get(t, "/law"), "root", "children", 0, "children", 0, "text"); txt != "The period is 60 days." {
		t.Fatalf("/law s1 %v", txt)
	}
	if txt := field(n.get(t, "/law"), "root", "children", 0, "children", 1, "text"); txt != "The period is 30 days." {
		t.Fatalf("the switched change reached the law: s2 %v", txt)
	}
	o3, _ := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: switched, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	n.refuse(t, o3, dag.CodeStaleMR)
}

// TestS13S14ChecksAndQuorumHTTP: S13's L1 part (/facts reports 30 → 45
// although the summary says 35; a duplicate [[def:]] and a reference
// cycle warn without blocking) and S14's L1 part (a kind the profile
// forbids blocks the MR; an on_threshold MR whose quorum becomes
// unreachable through void ballots is rejected).
//
// By hand (S14): N = 10, quorum 3/4. Members 0–4 approve, 0–2 also
// reject unlinked: V = 3, so (N−V)·4 = 28 < 3·10 = 30: quorum can no
// longer be met, the MR is rejected.
func TestS13S14ChecksAndQuorumHTTP(t *testing.T) {
	n := newNode(t)
	rule := ht.Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":3,"quorum_den":4,"closing":"on_threshold"}`, house.MinRootNotice)
	s := startSession(t, n, ht.Options{RootRule: &rule}, 10)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: rule, Summary: "The period becomes 35 days."})
	facts := n.get(t, "/merge-requests/"+mr.String()+"/facts")
	nb := field(facts, "facts", "numbers", 0)
	// §6 item 8: numbers in heading and text, in document order: the
	// heading "Section 1" gives "1".
	if field(nb, "nid") != "/us/t1/s1" || field(nb, "before", 0) != "1" || field(nb, "before", 1) != "30" || field(nb, "after", 1) != "45" || field(facts, "facts", "authoritative") != false {
		t.Fatalf("S13 numbers %v", field(facts, "facts", "numbers"))
	}

	// Warnings that do not block: a duplicate definition and a cycle.
	s.branch(t, n, "warn", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	tx, cw := b.Append(ht.Member(2), "warn", b.Genesis, []statute.Op{
		ht.Replace(b.Trees[b.Genesis], "/us/t1/s2", "[[def:agency]] An agency is an office. See [[ref:/us/t1/s3]]."),
		ht.Replace(b.Trees[b.Genesis], "/us/t1/s3", "[[def:agency]] An agency is a board. See [[ref:/us/t1/s2]]."),
	}, s.last)
	s.do(t, n, tx)
	mw := s.open(t, n, ht.MR{Source: "warn", SourceHead: cw, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: rule})
	ch := n.get(t, "/merge-requests/"+mw.String()+"/checks")
	byName := map[string]string{}
	for i := 0; ; i++ {
		c := field(ch, "checks", "checks", i)
		if c == nil {
			break
		}
		byName[field(c, "name").(string)] = field(c, "status").(string)
	}
	if field(ch, "checks", "blocked") != false || byName["definitions"] != "warn" || byName["reference_cycles"] != "warn" || byName["structure"] != "pass" {
		t.Fatalf("S13 warnings %v blocked %v", byName, field(ch, "checks", "blocked"))
	}

	// A kind the uslm-1 profile forbids under a section blocks.
	s.branch(t, n, "bad", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	spec, _ := b.Trees[b.Genesis].Spec("/us/t1/s1")
	spec.Children = append(spec.Children, statute.NodeSpec{NID: "/us/t1/s1/x", Kind: "title", Text: "A title inside a section."})
	pre, _ := b.Trees[b.Genesis].NodeHash("/us/t1/s1")
	tx, cb := b.Append(ht.Member(2), "bad", b.Genesis, []statute.Op{{Op: statute.OpReplace, NID: "/us/t1/s1", Pre: pre, Node: spec}}, s.last)
	s.do(t, n, tx)
	mb := s.open(t, n, ht.MR{Source: "bad", SourceHead: cb, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: rule})
	if ch := n.get(t, "/merge-requests/"+mb.String()+"/checks"); field(ch, "checks", "blocked") != true || field(ch, "checks", "checks", 0, "status") != "block" {
		t.Fatalf("S14 forbidden kind: %v", ch["checks"])
	}

	// Quorum made unreachable by void ballots.
	ballots := s.vote(t, n, mr, "approve", 0, 5)
	ballots = append(ballots, s.vote(t, n, mr, "reject", 0, 3)...)
	out, c3, _ := tallyOf(t, n, mr)
	if out != "rejected" || c3 != [3]uint64{2, 0, 3} {
		t.Fatalf("S14: %s %v, want rejected with A=2 V=3", out, c3)
	}
	s.do(t, n, b.Determine(ht.Member(9), mr, ballots, "rejected", s.last))
	if st := status(t, n, mr); st != "rejected" {
		t.Fatalf("S14: status %s", st)
	}
}

// TestS22ObserversHTTP: S22's L1 part (D78). A session declares an
// observers group; an observer key's ballot, mr.open, group.create and
// branch.create are each refused observer_not_allowed and not stored; its
// key.register is accepted; a group.update putting an observer in the
// roster is refused observer_not_allowed.
func TestS22ObserversHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{Observers: true}, 5)
	b := s.b
	obs := ht.Member(20)
	s.do(t, n, b.GroupCreate(ht.Member(0), "observers", []dag.Key{obs.Key()}, []dag.Key{ht.Member(0).Key()}, s.last))
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})

	n.refuse(t, b.Ballot(obs, mr, "approve", dag.ID{}, s.last), dag.CodeObserverNotAllowed)
	o, _ := b.Open(obs, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Summary: "by an observer"}, s.last)
	n.refuse(t, o, dag.CodeObserverNotAllowed)
	n.refuse(t, b.GroupCreate(obs, "watchers", []dag.Key{obs.Key()}, []dag.Key{obs.Key()}, s.last), dag.CodeObserverNotAllowed)
	n.refuse(t, b.Determine(obs, mr, nil, "pending", s.last), dag.CodeObserverNotAllowed)
	n.refuse(t, b.GroupUpdate(ht.Member(0), "roster", append(ht.Members(0, 5), obs.Key()), ht.Members(0, 1), s.last), dag.CodeObserverNotAllowed)
	s.do(t, n, b.KeyRegister(obs, s.last))
}

// TestS19SunsetHTTP: S19's L1 part on /law (D58, D43). An MR adding a
// 90-day sunset to /us/t1/s1 merges; until this node's checkpoint
// includes the determination the merge has no on_merge date and is held
// back. The checkpoint is at 2026-09-21 (the node's clock), the merge's
// effective date; with that as day 1, day 90 is 2026-12-19 (10 days of
// September, 31 of October, 30 of November, 19 of December) and the
// text is gone on day 91, 2026-12-20 (docs/statute.md: d >= start + 90).
func TestS19SunsetHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days. [[sunset:90]]")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	s.do(t, n, b.Determine(ht.Member(3), mr, s.vote(t, n, mr, "approve", 0, 3), "approved", s.last))
	s1 := func(date string) (any, int) {
		law := n.get(t, "/law?date="+date)
		held, _ := law["held_back"].([]any)
		return field(law, "root", "children", 0, "children", 0, "text"), len(held)
	}
	if txt, held := s1("2026-12-19"); txt != "The period is 30 days." || held != 1 {
		t.Fatalf("before the checkpoint: %v, %d held back", txt, held)
	}
	n.checkpointNow(t, s.space)
	if txt, held := s1("2026-12-19"); txt != "The period is 45 days. [[sunset:90]]" || held != 0 {
		t.Fatalf("day 90: %v, %d held back", txt, held)
	}
	if txt, _ := s1("2026-12-20"); txt != nil && txt != "" {
		t.Fatalf("day 91: the text is still in force: %v", txt)
	}
}

// TestS17NoticeAdvisoryHTTP: S17's notice part on an eventual node
// (D42, open point 7). The root rule needs 259200 s (72 hours) of notice
// from the checkpoint that includes mr.open. A strong node would refuse
// an earlier determination (notice_not_elapsed); an eventual node
// records the elapsed checkpoint time in the determination's evaluation
// instead. Checkpoint at 2026-09-21T00:00Z includes the open; the
// determination's checkpoint 24 hours later records 86400 s elapsed,
// notice not met, outcome pending; a second MR's determination
// checkpointed 72 hours after its open's records notice met, approved.
func TestS17NoticeAdvisoryHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	n.checkpointNow(t, s.space) // 2026-09-21T00:00:00Z
	s.do(t, n, b.Determine(ht.Member(3), mr, s.vote(t, n, mr, "approve", 0, 3), "approved", s.last))
	n.clk.t = n.clk.t.Add(24 * time.Hour)
	n.checkpointNow(t, s.space)
	ev := field(n.get(t, "/merge-requests/"+mr.String())["evaluations"], 0)
	tm := field(ev, "result", "timing")
	if num(field(tm, "notice_required")) != 259200 || num(field(tm, "notice_elapsed")) != 86400 || field(tm, "notice_met") != false || field(ev, "result", "outcome") != "pending" || field(ev, "authoritative") != false {
		t.Fatalf("24 hours: evaluation %v", ev)
	}
	root := rootHead(t, n, s.space)
	b.Trees[root] = b.Trees[c]
	c2 := s.amend(t, n, "draft", c, "/us/t1/s2", "The period is 50 days.")
	mr2 := s.open(t, n, ht.MR{Source: "draft", SourceHead: c2, TargetHead: root, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	n.checkpointNow(t, s.space) // 2026-09-22T00:00:00Z
	s.do(t, n, b.Determine(ht.Member(3), mr2, s.vote(t, n, mr2, "approve", 0, 3), "approved", s.last))
	n.clk.t = n.clk.t.Add(72 * time.Hour)
	n.checkpointNow(t, s.space)
	ev = field(n.get(t, "/merge-requests/"+mr2.String())["evaluations"], 0)
	if tm := field(ev, "result", "timing"); num(field(tm, "notice_elapsed")) != 259200 || field(tm, "notice_met") != true || field(ev, "result", "outcome") != "approved" {
		t.Fatalf("72 hours: evaluation %v", ev)
	}
}
