package replica_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
	"github.com/witan-dev/witan/rules"
)

// clock is a test clock that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func nodeKey(t testing.TB, i int) *dag.Signer {
	seed := make([]byte, 32)
	seed[0] = byte(i + 1)
	s, err := dag.SignerFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openReplica opens a replica on an in-memory Badger store.
func openReplica(t testing.TB, c *clock) *replica.Replica {
	t.Helper()
	if c == nil {
		c = &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	}
	r, err := replica.Open(context.Background(), replica.Options{InMemory: true, NodeKey: nodeKey(t, 0), Clock: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// submit submits tx and returns its receipt, failing unless its status is
// want ("accepted" or "rejected").
func submit(t testing.TB, r *replica.Replica, tx ht.Tx, want string) *replica.Receipt {
	t.Helper()
	rc, err := r.Submit(context.Background(), tx.Bytes, tx.Attach)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Verify(); err != nil {
		t.Fatalf("receipt: %v", err)
	}
	if rc.Status != want {
		t.Fatalf("%s: status %s %v, want %s", tx.Env.Type, rc.Status, rc.Errors, want)
	}
	return rc
}

func code(rc *replica.Receipt) dag.Code {
	if len(rc.Errors) == 0 {
		return ""
	}
	return rc.Errors[0].Code
}

// session is a small House: ten roster members, a drafters group owning
// the unprotected branch "draft" with one amendment of section 1.
type session struct {
	b      *ht.Builder
	r      *replica.Replica
	c      *clock
	space  dag.ID
	last   dag.ID // the latest accepted tx, parent of the next one
	change dag.ID // draft's head
}

func newSession(t *testing.T, o ht.Options) *session {
	t.Helper()
	c := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	s := &session{b: ht.New(o), c: c}
	s.r = openReplica(t, c)
	s.space = s.b.Session
	b := s.b
	s.ok(t, b.Create)
	s.ok(t, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	s.ok(t, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	s.ok(t, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	s.ok(t, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	s.change = s.amend(t, "draft", s.change0(), "/us/t1/s1", "The period is 45 days.")
	return s
}

func (s *session) change0() dag.ID { return s.b.Genesis }

func (s *session) ok(t *testing.T, tx ht.Tx) *replica.Receipt {
	t.Helper()
	rc := submit(t, s.r, tx, "accepted")
	s.last = tx.ID
	return rc
}

func (s *session) refused(t *testing.T, tx ht.Tx, want dag.Code) {
	t.Helper()
	rc := submit(t, s.r, tx, "rejected")
	if code(rc) != want {
		t.Fatalf("%s refused with %v, want %s", tx.Env.Type, rc.Errors, want)
	}
}

func (s *session) amend(t *testing.T, branch string, parent dag.ID, nid, text string) dag.ID {
	t.Helper()
	tx, id := s.b.Append(ht.Member(2), branch, parent, []statute.Op{ht.Replace(s.b.Trees[parent], nid, text)}, s.last)
	s.ok(t, tx)
	return id
}

// vote casts ballots of members from..to-1 with choice and returns their ids.
func (s *session) vote(t *testing.T, mr dag.ID, from, to int, choice string) []dag.ID {
	t.Helper()
	var ids []dag.ID
	for i := from; i < to; i++ {
		tx := s.b.Ballot(ht.Member(i), mr, choice, dag.ID{}, s.last)
		s.ok(t, tx)
		ids = append(ids, tx.ID)
	}
	return ids
}

func (s *session) mr(t *testing.T, id dag.ID) view.MR {
	t.Helper()
	m, err := view.New(s.r).MR(context.Background(), s.space, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (s *session) checkpoint(t *testing.T) replica.Checkpoint {
	t.Helper()
	c, err := s.r.Checkpoint(context.Background(), s.space)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Verify(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestS1LinearAmendment: a linear amendment passes a majority vote and is
// merged into the root; finality is provisional until checkpointed and
// final_advisory after, never final; the notice is recorded, not enforced.
func TestS1LinearAmendment(t *testing.T) {
	s := newSession(t, ht.Options{})
	ctx := context.Background()
	open, mr := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: s.b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Extends the period to 45 days"}, s.last)
	s.ok(t, open)
	s.checkpoint(t) // includes the open: notice starts
	ballots := s.vote(t, mr, 0, 6, "approve")
	ballots = append(ballots, s.vote(t, mr, 6, 8, "reject")...)
	tally, err := view.New(s.r).Tally(ctx, s.space, mr)
	if err != nil {
		t.Fatal(err)
	}
	if tally.Finality != replica.Provisional || tally.Result.Tally.Approve != 6 || tally.Result.Tally.Reject != 2 ||
		tally.Result.Tally.ApproveOfCast != (rules.Ratio{Num: 6, Den: 8}) || tally.Result.Tally.ApproveOfElectorate != (rules.Ratio{Num: 6, Den: 10}) {
		t.Fatalf("live tally %+v", tally)
	}
	if tally.Result.IfClosed != rules.Approved {
		t.Fatalf("6 of 10 approve a > 1/2 rule: %s", tally.Result.IfClosed)
	}
	// A wrong claim is refused: determinations are re-evaluated, never trusted.
	s.refused(t, s.b.Determine(ht.Member(5), mr, ballots, "rejected", s.last), dag.CodeNotAuthorized)
	det := s.b.Determine(ht.Member(5), mr, ballots, "approved", s.last)
	s.ok(t, det)
	m := s.mr(t, mr)
	if m.Status != house.StatusMerged || m.Merge == nil || m.Finality != replica.Provisional {
		t.Fatalf("after the determination: status %s merge %v finality %s", m.Status, m.Merge, m.Finality)
	}
	// Not yet checkpointed: an on_merge merge has no effective date yet.
	if l, err := view.New(s.r).LawAt(ctx, s.space, statute.MustDate("2030-01-01"), ""); err != nil || l.Merges != 0 {
		t.Fatalf("law before the checkpoint: %+v %v", l, err)
	}
	s.c.advance(73 * time.Hour) // 2026-09-24T01:00Z
	cp := s.checkpoint(t)
	for _, c := range []struct {
		date   string
		merges int
	}{{"2026-09-23", 0}, {"2026-09-24", 1}} {
		l, err := view.New(s.r).LawAt(ctx, s.space, statute.MustDate(c.date), "")
		if err != nil || l.Merges != c.merges || l.Finality != replica.FinalAdvisory {
			t.Fatalf("law on %s: %+v %v", c.date, l, err)
		}
		if n, _ := l.Tree.Get("/us/t1/s1"); (c.merges == 1) != (n.Text == "The period is 45 days.") {
			t.Fatalf("law on %s reads %q", c.date, n.Text)
		}
	}
	m = s.mr(t, mr)
	if m.Finality != replica.FinalAdvisory {
		t.Fatalf("checkpointed merge: finality %s", m.Finality)
	}
	ev := m.Evaluations[0]
	if ev.Result.Timing.NoticeElapsed == nil || *ev.Result.Timing.NoticeElapsed < house.MinRootNotice || !ev.Result.Timing.NoticeMet {
		t.Fatalf("evaluation timing %+v: 73 h of checkpoint time elapsed", ev.Result.Timing)
	}
	law, err := view.New(s.r).Law(ctx, s.space)
	if err != nil {
		t.Fatal(err)
	}
	if law.Head != *m.Merge {
		t.Fatalf("law head %s, merge %s", law.Head, *m.Merge)
	}
	// The checkpoint's root is the RFC 9162 root of the log.
	log, _ := s.r.Log(ctx, s.space, 0, 0)
	if cp.Size != uint64(len(log)) || cp.Root != replica.MerkleRoot(log) {
		t.Fatalf("checkpoint %d %s, log %d %s", cp.Size, cp.Root, len(log), replica.MerkleRoot(log))
	}
	// A ballot after the merge is accepted but ignored.
	s.vote(t, mr, 8, 10, "reject")
	if m2 := s.mr(t, mr); m2.Live.Tally.Reject != 2 || m2.Status != house.StatusMerged {
		t.Fatalf("late ballots changed the closed MR: %+v", m2.Live.Tally)
	}
}

// TestReopen: a replica on disk, closed and reopened, derives the same
// state from its store (the full derivation from genesis).
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := ht.New(ht.Options{})
	txs := []ht.Tx{b.Create}
	txs = append(txs, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), txs[len(txs)-1].ID))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, txs[1].ID)
	txs = append(txs, open)
	for i := 0; i < 4; i++ {
		txs = append(txs, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, txs[len(txs)-1].ID))
	}
	r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txs {
		submit(t, r, tx, "accepted")
	}
	_, want, err := r.State(ctx, b.Session)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st, got, err := r.State(ctx, b.Session)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || st.Ballots != 4 {
		t.Fatalf("reopened state %s (%d ballots), want %s", got, st.Ballots, want)
	}
}

// TestS3GovernanceMR: a governance MR changes a branch's merge rule through
// the branch's governance rule; the root's governance rule is entrenched
// (D38) and its notice cannot be lowered (D42).
func TestS3GovernanceMR(t *testing.T) {
	s := newSession(t, ht.Options{})
	newRule := ht.Majority(3600)
	open, mr := s.b.Open(ht.Member(1), ht.MR{Kind: "governance", Target: "draft", TargetHead: s.change, Members: ht.Members(0, 10),
		Rule: ht.TwoThirds(), Set: map[string]any{"merge_rule": newRule}}, s.last)
	s.ok(t, open)
	ballots := s.vote(t, mr, 0, 6, "approve")
	s.refused(t, s.b.Determine(ht.Member(0), mr, ballots, "approved", s.last), dag.CodeNotAuthorized) // 6/10 < 2/3
	ballots = append(ballots, s.vote(t, mr, 6, 7, "approve")...)
	s.ok(t, s.b.Determine(ht.Member(0), mr, ballots, "approved", s.last))
	if m := s.mr(t, mr); m.Status != house.StatusMerged {
		t.Fatalf("governance MR status %s (%s)", m.Status, m.Reason)
	}
	br, err := s.r.Branch(context.Background(), s.space, "draft")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := br.MergeRule.MarshalJSON()
	want, _ := newRule.MarshalJSON()
	if string(got) != string(want) {
		t.Fatalf("draft merge rule %s, want %s", got, want)
	}
	// The root's governance rule cannot be changed (D38) ...
	root, _ := s.r.Branch(context.Background(), s.space, house.RootBranch)
	bad, _ := s.b.Open(ht.Member(1), ht.MR{Kind: "governance", Target: house.RootBranch, TargetHead: root.Heads[0], Members: ht.Members(0, 10),
		Rule: ht.TwoThirds(), Set: map[string]any{"governance_rule": ht.Majority(-1)}}, s.last)
	s.refused(t, bad, dag.CodeNotAuthorized)
	// ... nor its merge notice lowered below 72 hours (D42).
	low, _ := s.b.Open(ht.Member(1), ht.MR{Kind: "governance", Target: house.RootBranch, TargetHead: root.Heads[0], Members: ht.Members(0, 10),
		Rule: ht.TwoThirds(), Set: map[string]any{"merge_rule": ht.Majority(3600)}}, s.last)
	s.refused(t, low, dag.CodeNotAuthorized)
	// A merge MR into draft must now name the new rule.
	old, _ := s.b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: root.Heads[0], Target: "draft", TargetHead: s.change,
		Members: ht.Members(0, 10), Rule: ht.AlwaysAllow()}, s.last)
	s.refused(t, old, dag.CodeNotAuthorized)
}

// TestS4Equivocation: two ballots of one member not linked by supersedes
// void all of that member's ballots on the MR; a superseding ballot counts.
func TestS4Equivocation(t *testing.T) {
	s := newSession(t, ht.Options{})
	open, mr := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: s.b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.ok(t, open)
	first := s.b.Ballot(ht.Member(3), mr, "approve", dag.ID{}, s.last)
	s.ok(t, first)
	s.ok(t, s.b.Ballot(ht.Member(3), mr, "reject", dag.ID{}, s.last)) // equivocation
	a := s.b.Ballot(ht.Member(4), mr, "reject", dag.ID{}, s.last)
	s.ok(t, a)
	s.ok(t, s.b.Ballot(ht.Member(4), mr, "approve", a.ID, s.last)) // a change of mind
	// A ballot by someone else superseding member 4's is invalid, and one
	// signed by a non-member counts for nobody (D37).
	s.refused(t, s.b.Ballot(ht.Member(5), mr, "approve", a.ID, s.last), dag.CodeBallotInvalid)
	s.refused(t, s.b.Ballot(ht.Member(11), mr, "approve", dag.ID{}, s.last), dag.CodeBallotInvalid)
	tl, err := view.New(s.r).Tally(context.Background(), s.space, mr)
	if err != nil {
		t.Fatal(err)
	}
	if got := tl.Result.Tally; got.Void != 1 || got.Approve != 1 || got.Reject != 0 {
		t.Fatalf("tally %+v: member 3 void, member 4 approves", got)
	}
	if !slices.Equal(tl.Result.Voided, []dag.Key{ht.Member(3).Key()}) {
		t.Fatalf("voided %v", tl.Result.Voided)
	}
}

// TestS5BaitAndSwitch: once the target's head moves under an MR whose
// patch no longer applies, the MR is stale and its approval cannot merge;
// moving the source after the ballots changes nothing that was voted on.
func TestS5BaitAndSwitch(t *testing.T) {
	s := newSession(t, ht.Options{})
	ctx := context.Background()
	// A second drafters branch edits the same section differently.
	s.ok(t, s.b.BranchCreate(ht.Member(1), "rival", "drafters", house.RootBranch, s.b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	rival := s.amend(t, "rival", s.b.Genesis, "/us/t1/s1", "The period is 60 days.")
	o1, mr1 := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: s.b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.ok(t, o1)
	o2, mr2 := s.b.Open(ht.Member(1), ht.MR{Source: "rival", SourceHead: rival, TargetHead: s.b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.ok(t, o2)
	b1 := s.vote(t, mr1, 0, 6, "approve")
	b2 := s.vote(t, mr2, 0, 6, "approve")
	// Bait and switch: the drafters move draft's head after the ballots.
	switched := s.amend(t, "draft", s.change, "/us/t1/s2", "Nobody may appeal.")
	s.ok(t, s.b.Determine(ht.Member(0), mr2, b2, "approved", s.last))
	if m := s.mr(t, mr1); m.Status != house.StatusStale {
		t.Fatalf("MR 1 after MR 2 merged: %s", m.Status)
	}
	// An approval of the stale MR executes nothing.
	s.ok(t, s.b.Determine(ht.Member(0), mr1, b1, "approved", s.last))
	m1 := s.mr(t, mr1)
	if m1.Status != house.StatusStale || m1.Merge != nil {
		t.Fatalf("stale MR after approval: %s %v", m1.Status, m1.Merge)
	}
	law, _ := view.New(s.r).Law(ctx, s.space)
	if m2 := s.mr(t, mr2); law.Head != *m2.Merge {
		t.Fatal("the root head is not MR 2's merge")
	}
	// The voted content was pinned: the switched change was never merged.
	root, _ := s.r.Branch(ctx, s.space, house.RootBranch)
	if root.Heads[0] == switched {
		t.Fatal("switched head merged")
	}
	// An MR naming an old target head is refused as stale.
	o3, _ := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: switched, TargetHead: s.b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.refused(t, o3, dag.CodeStaleMR)
}

// TestS14UnreachableQuorum: an on_threshold MR whose quorum becomes
// unreachable through void ballots is rejected, not left pending.
func TestS14UnreachableQuorum(t *testing.T) {
	rule := ht.Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":3,"quorum_den":4,"closing":"on_threshold"}`, house.MinRootNotice)
	s := newSession(t, ht.Options{RootRule: &rule})
	open, mr := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: s.b.Genesis, Members: ht.Members(0, 10), Rule: rule}, s.last)
	s.ok(t, open)
	var ballots []dag.ID
	ballots = append(ballots, s.vote(t, mr, 0, 5, "approve")...)
	ballots = append(ballots, s.vote(t, mr, 0, 2, "reject")...) // members 0 and 1 equivocate: V = 2
	s.refused(t, s.b.Determine(ht.Member(9), mr, ballots, "rejected", s.last), dag.CodeNotAuthorized)
	ballots = append(ballots, s.vote(t, mr, 2, 3, "reject")...) // member 2 equivocates: V = 3, N-V = 7 < 3/4 of 10
	tl, _ := view.New(s.r).Tally(context.Background(), s.space, mr)
	if tl.Result.IfClosed != rules.Rejected || !slices.Contains(tl.Result.Reasons, rules.ReasonQuorumUnreachable) {
		t.Fatalf("tally %+v: quorum is unreachable", tl.Result)
	}
	s.refused(t, s.b.Determine(ht.Member(9), mr, ballots, "pending", s.last), dag.CodeNotAuthorized)
	s.ok(t, s.b.Determine(ht.Member(9), mr, ballots, "rejected", s.last))
	if m := s.mr(t, mr); m.Status != house.StatusRejected {
		t.Fatalf("status %s", m.Status)
	}
}

// TestIngestQuarantineAndPending: a peer's entries arrive out of order,
// some forged; forged and unauthorised entries and their descendants are
// quarantined with codes, the rest wait for parents and are then applied.
func TestIngestQuarantineAndPending(t *testing.T) {
	ctx := context.Background()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	forged := b.GroupCreate(ht.Member(1), "g1", ht.Members(0, 2), ht.Members(1, 2), roster.ID)
	forged.Bytes = append([]byte(nil), forged.Bytes...)
	forged.Env.Sig[0] ^= 1
	forged.Bytes = forged.Env.Canonical()
	forgedID := forged.Env.ID()
	child := b.GroupCreate(ht.Member(1), "g2", ht.Members(0, 2), ht.Members(1, 2), forgedID)
	unauth := b.GroupUpdate(ht.Member(3), "roster", ht.Members(0, 10), ht.Members(3, 4), roster.ID) // not an admin
	key := b.KeyRegister(ht.Member(7), roster.ID)
	sub := func(txs ...ht.Tx) []replica.Submission {
		var out []replica.Submission
		for _, tx := range txs {
			out = append(out, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		return out
	}
	r := openReplica(t, nil)
	outs, err := r.Ingest(ctx, sub(key, unauth, child, roster))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Status != replica.Pending {
			t.Fatalf("before session.create: %+v", o)
		}
	}
	outs, err = r.Ingest(ctx, sub(forged, b.Create, roster))
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Status != replica.Quarantined || outs[0].Code != dag.CodeBadSignature || outs[1].Status != replica.Accepted || outs[2].Status != replica.Accepted {
		t.Fatalf("outcomes %+v", outs)
	}
	space := b.Session
	q := r.Quarantine(space.String())
	codes := map[dag.ID]dag.Code{}
	for _, x := range q {
		codes[x.ID] = x.Code
	}
	// The child of the forgery came first and waits: the forgery was
	// refused without being stored, so nothing tells the store that
	// child's parent will never come (pending entries are bounded).
	want := map[dag.ID]dag.Code{forgedID: dag.CodeBadSignature, unauth.ID: dag.CodeNotAuthorized}
	if len(codes) != len(want) {
		t.Fatalf("quarantine %v, want %v", codes, want)
	}
	for id, c := range want {
		if codes[id] != c {
			t.Fatalf("quarantine %v, want %v", codes, want)
		}
	}
	if p, _ := r.Pending(ctx, space); len(p) != 1 || p[0] != child.ID {
		t.Fatalf("still pending: %v, want only the forgery's child", p)
	}
	if f, err := r.Finality(ctx, space, key.ID); err != nil || f != replica.Provisional {
		t.Fatalf("finality %s %v", f, err)
	}
}

// TestMissingObjectWaits: a peer's entry whose object has not arrived waits
// for it (never quarantined for arriving early); a client's submission
// without it is refused.
func TestMissingObjectWaits(t *testing.T) {
	ctx := context.Background()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	upd := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 6), ht.Members(0, 1), roster.ID)
	r := openReplica(t, nil)
	submit(t, r, b.Create, "accepted")
	submit(t, r, roster, "accepted")
	rc, err := r.Submit(ctx, upd.Bytes, nil)
	if err != nil || rc.Status != "rejected" || code(rc) != dag.CodeUnknownParent {
		t.Fatalf("submission without its object: %+v %v", rc, err)
	}
	outs, err := r.Ingest(ctx, []replica.Submission{{Envelope: upd.Bytes}})
	if err != nil || outs[0].Status != replica.Pending {
		t.Fatalf("peer entry without its object: %+v %v", outs, err)
	}
	outs, err = r.Ingest(ctx, []replica.Submission{{Envelope: upd.Bytes, Attachments: upd.Attach}})
	if err != nil || outs[0].Status != replica.Accepted {
		t.Fatalf("with its object: %+v %v", outs, err)
	}
	if q := r.Quarantine(b.Session.String()); len(q) != 0 {
		t.Fatalf("quarantine %v", q)
	}
	g, _ := r.Group(ctx, b.Session, "roster")
	if len(g.Members) != 6 {
		t.Fatalf("roster %d members", len(g.Members))
	}
}

// TestConcurrentUse: submissions, reads and checkpoints from several
// goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	b := ht.New(ht.Options{})
	r := openReplica(t, nil)
	space := b.Session
	submit(t, r, b.Create, "accepted")
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 40), ht.Members(0, 1), b.Create.ID)
	submit(t, r, roster, "accepted")
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 40), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	submit(t, r, open, "accepted")
	var ballots []ht.Tx
	for i := 0; i < 40; i++ {
		ballots = append(ballots, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID))
	}
	done := make(chan error, 8)
	for w := 0; w < 4; w++ {
		go func(w int) {
			for i := w; i < len(ballots); i += 4 {
				rc, err := r.Submit(ctx, ballots[i].Bytes, nil)
				if err == nil && rc.Status != "accepted" {
					err = fmt.Errorf("ballot %d: %v", i, rc.Errors)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(w)
	}
	for w := 0; w < 4; w++ {
		go func() {
			for i := 0; i < 20; i++ {
				if _, err := view.New(r).Tally(ctx, space, mr); err != nil {
					done <- err
					return
				}
				if _, _, err := r.State(ctx, space); err != nil {
					done <- err
					return
				}
				if _, err := r.Checkpoint(ctx, space); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	tl, _ := view.New(r).Tally(ctx, space, mr)
	if tl.Result.Tally.Approve != 40 {
		t.Fatalf("approve %d", tl.Result.Tally.Approve)
	}
}

// TestRestartKeepsQuarantineAndPending: the quarantine and the entries
// waiting for parents live in the store, so a restarted replica still
// lists what it refused (and refuses its descendants without judging
// them), still tells sync which parent to fetch (Store.Missing), and
// applies the waiting entry when that parent arrives after the restart.
func TestRestartKeepsQuarantineAndPending(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	unauth := b.GroupUpdate(ht.Member(3), "roster", ht.Members(0, 10), ht.Members(3, 4), roster.ID) // not an admin
	parent := b.KeyRegister(ht.Member(6), roster.ID)
	waiting := b.KeyRegister(ht.Member(7), parent.ID)
	late := b.KeyRegister(ht.Member(8), unauth.ID)
	space := b.Session
	sub := func(txs ...ht.Tx) []replica.Submission {
		var out []replica.Submission
		for _, tx := range txs {
			out = append(out, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		return out
	}
	open := func() (*replica.Replica, *badgerstore.Store) {
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey(t, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return r, st
	}
	r, st := open()
	outs, err := r.Ingest(ctx, sub(b.Create, roster, unauth, waiting))
	if err != nil {
		t.Fatal(err)
	}
	if outs[2].Status != replica.Quarantined || outs[2].Code != dag.CodeNotAuthorized || outs[3].Status != replica.Pending {
		t.Fatalf("outcomes %+v", outs)
	}
	wantQ := fmt.Sprint(r.Quarantine(space.String()))
	_, wantState, err := r.State(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	st.Close()

	r, st = open()
	defer st.Close()
	defer r.Close()
	// The quarantine is a record in memory: nothing refused was stored,
	// so a restart forgets it; the refused entry, sent again, is refused
	// again with the same code.
	if q := r.Quarantine(space.String()); len(q) != 0 {
		t.Fatalf("quarantine after restart %v, want none (nothing refused is stored)", q)
	}
	if st, err := st.Has(ctx, unauth.ID); err != nil || st != dag.Absent {
		t.Fatalf("refused entry held as %s %v", st, err)
	}
	if outs, err := r.Ingest(ctx, sub(unauth)); err != nil || outs[0].Status != replica.Quarantined || outs[0].Code != dag.CodeNotAuthorized {
		t.Fatalf("the refused entry again: %+v %v", outs, err)
	}
	if q := fmt.Sprint(r.Quarantine(space.String())); q != wantQ {
		t.Fatalf("quarantine after refusing it again %s, want %s", q, wantQ)
	}
	if _, h, _ := r.State(ctx, space); h != wantState {
		t.Fatalf("state after restart %s, want %s", h, wantState)
	}
	if p, err := r.Pending(ctx, space); err != nil || len(p) != 1 || p[0] != waiting.ID {
		t.Fatalf("pending after restart %v %v, want [%s]", p, err, waiting.ID)
	}
	if m, err := st.Missing(ctx, space.String()); err != nil || len(m) != 1 || m[0] != parent.ID {
		t.Fatalf("Missing after restart %v %v, want [%s]", m, err, parent.ID)
	}
	outs, err = r.Ingest(ctx, sub(parent, late, unauth))
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Status != replica.Accepted {
		t.Fatalf("the missing parent: %+v", outs[0])
	}
	if outs[1].Status != replica.Quarantined || outs[1].Code != dag.CodeUnknownParent {
		t.Fatalf("a child of a quarantined entry: %+v", outs[1])
	}
	if outs[2].Status != replica.Quarantined || outs[2].Code != dag.CodeNotAuthorized {
		t.Fatalf("the quarantined entry again: %+v", outs[2])
	}
	if f, err := r.Finality(ctx, space, waiting.ID); err != nil || f != replica.Provisional {
		t.Fatalf("the waiting entry after its parent arrived: %s %v", f, err)
	}
	if p, _ := r.Pending(ctx, space); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
	if m, _ := st.Missing(ctx, space.String()); len(m) != 0 {
		t.Fatalf("still missing: %v", m)
	}
	if q := r.Quarantine(space.String()); len(q) != 2 {
		t.Fatalf("quarantine %v, want the refused entry and its late child", q)
	}
}
