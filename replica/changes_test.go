package replica_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
)

// movedHead builds two MRs opened on the same root head (the genesis
// change): MR 1 merges "draft" (section 1 to 45 days), MR 2 merges
// "draft2" (section 2 to 60 days). Both pass; MR 1 executes first, so MR 2
// executes on a moved root head.
func movedHead(t *testing.T) (s *session, change2, mr1, mr2, merge1, merge2 dag.ID) {
	t.Helper()
	s = newSession(t, ht.Options{Simulation: true})
	b := s.b
	s.ok(t, b.BranchCreate(ht.Member(1), "draft2", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	change2 = s.amend(t, "draft2", b.Genesis, "/us/t1/s2", "The period is 60 days.")
	open := func(src string, head dag.ID) dag.ID {
		tx, id := b.Open(ht.Member(1), ht.MR{Source: src, SourceHead: head, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
		s.ok(t, tx)
		return id
	}
	mr1, mr2 = open("draft", s.change), open("draft2", change2)
	s.ok(t, b.Determine(ht.Member(3), mr1, s.vote(t, mr1, 0, 6, "approve"), "approved", s.last))
	s.ok(t, b.Determine(ht.Member(3), mr2, s.vote(t, mr2, 0, 7, "approve"), "approved", s.last))
	m1, m2 := s.mr(t, mr1), s.mr(t, mr2)
	if m1.Merge == nil || m2.Merge == nil {
		t.Fatalf("not merged: %s %s", m1.Status, m2.Status)
	}
	return s, change2, mr1, mr2, *m1.Merge, *m2.Merge
}

func TestChangeDAGAfterMovedHeadMerge(t *testing.T) {
	ctx := context.Background()
	s, change2, _, mr2, merge1, merge2 := movedHead(t)
	c, err := view.New(s.r).Change(ctx, s.space, merge2)
	if err != nil || !slices.Equal(c.Parents, []dag.ID{merge1, change2}) {
		t.Fatalf("merge 2's change: %+v %v; want parents [%s %s]", c, err, merge1, change2)
	}
	if _, err := view.New(s.r).Change(ctx, s.space, dag.Sum([]byte("none"))); !errors.Is(err, dag.ErrNotFound) {
		t.Fatalf("unknown change: %v", err)
	}
	tree, err := view.New(s.r).Snapshot(ctx, s.space, merge2)
	if err != nil {
		t.Fatal(err)
	}
	for nid, want := range map[string]string{"/us/t1/s1": "The period is 45 days.", "/us/t1/s2": "The period is 60 days."} {
		if n, _ := tree.Get(nid); n.Text != want {
			t.Fatalf("%s after both merges: %q", nid, n.Text)
		}
	}
	if _, err := view.New(s.r).Snapshot(ctx, s.space, dag.Sum([]byte("none"))); !errors.Is(err, dag.ErrNotFound) {
		t.Fatalf("unknown snapshot: %v", err)
	}

	// MR 2's review is its patch against the genesis, what was voted on.
	rv, err := view.New(s.r).Review(ctx, s.space, mr2)
	if err != nil {
		t.Fatal(err)
	}
	if d := rv.Diff(); d == nil || !slices.Equal(d.Modified, []string{"/us/t1/s2"}) || rv.Base != s.b.Genesis {
		t.Fatalf("MR 2's diff %+v, base %s", d, rv.Base)
	}

	// MR 3 reverts section 1 from draft, onto the moved head: its
	// merge-base is draft's head, found through merge 2's real parents,
	// and the fact sheet sees the revert to the genesis text (D41).
	s.b.Trees[merge2] = tree
	back := s.amend(t, "draft", s.change, "/us/t1/s1", "The period is 30 days.")
	tx, mr3 := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: back, TargetHead: merge2, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.ok(t, tx)
	rv3, err := view.New(s.r).Review(ctx, s.space, mr3)
	if err != nil {
		t.Fatal(err)
	}
	if rv3.Base != s.change {
		t.Fatalf("MR 3's merge-base %s, want draft's earlier head %s", rv3.Base, s.change)
	}
	fs, err := rv3.Facts(replica.Provisional)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Reverts) != 1 || fs.Reverts[0].NID != "/us/t1/s1" || fs.Reverts[0].PreviouslyIn != s.b.Genesis {
		t.Fatalf("reverts %+v, want /us/t1/s1 previously in the genesis %s", fs.Reverts, s.b.Genesis)
	}
	if ch := rv3.Checks(); ch.Blocked {
		t.Fatalf("checks %+v", ch)
	}
	if _, err := view.New(s.r).Review(ctx, s.space, dag.Sum([]byte("none"))); !errors.Is(err, dag.ErrNotFound) {
		t.Fatalf("unknown MR: %v", err)
	}
}

// TestLawAtAfterMovedHeadMerge: both merges are in force from the date of
// the checkpoint that includes their determinations, in the order they
// executed, and the law is provisional until every root merge is
// checkpointed.
func TestLawAtAfterMovedHeadMerge(t *testing.T) {
	ctx := context.Background()
	s, _, mr1, mr2, _, merge2 := movedHead(t)
	l, err := view.New(s.r).LawAt(ctx, s.space, statute.MustDate("2030-01-01"), "")
	if err != nil || l.Merges != 0 || !slices.Equal(l.HeldBack, []dag.ID{mr1, mr2}) || l.Finality != replica.Provisional {
		t.Fatalf("law before any checkpoint: %+v %v", l, err)
	}
	s.c.advance(73 * time.Hour)
	s.checkpoint(t)
	l, err = view.New(s.r).LawAt(ctx, s.space, statute.MustDate("2026-09-24"), "")
	if err != nil || l.Merges != 2 || l.Head != merge2 || l.Finality != replica.FinalAdvisory || len(l.HeldBack) != 0 {
		t.Fatalf("law on 2026-09-24: %+v %v", l, err)
	}
	if n, _ := l.Tree.Get("/us/t1/s2"); n.Text != "The period is 60 days." {
		t.Fatalf("section 2 in force: %q", n.Text)
	}
	if l, _ = view.New(s.r).LawAt(ctx, s.space, statute.MustDate("2026-09-23"), ""); l.Merges != 0 {
		t.Fatalf("law on 2026-09-23: %+v", l)
	}
}
