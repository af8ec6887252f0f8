package author_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// A class from the template on a real node: the teacher starts it and
// enrols two students; a student plans an amendment (the diff, worked out
// by hand, before anything is signed), signs it, the three vote, the
// teacher plans the determination the rule allows (approved: 3 of 3 >
// 1/2) and the law reads the new text.
func TestClassTemplateWalk(t *testing.T) {
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	teacher, ana, ben := signer(t, 1), signer(t, 2), signer(t, 3)
	au := func(s *dag.Signer) *author.Author {
		a, err := author.New(author.Options{Signer: s, Heads: n})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	put := func(txs ...author.Tx) {
		t.Helper()
		for _, tx := range txs {
			rc, err := n.Submit(ctx, tx.Bytes, tx.Attach)
			if err != nil || rc.Status != "accepted" {
				t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
			}
		}
	}
	start, err := au(teacher).StartClass(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	put(start...)
	sid := start[0].Made
	space := sid
	state := func() *house.State {
		st, _, err := n.Replica().State(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := state(); st.Label != "Class rules" || !st.Education || !st.Simulation {
		t.Fatalf("session %q education %v simulation %v", st.Label, st.Education, st.Simulation)
	}
	// A second class of the same name is another session.
	if again, err := au(teacher).StartClass(ctx, ""); err != nil || again[0].Made == sid {
		t.Fatalf("a second class of the same name: %v, session %s", err, again[0].Made)
	}
	g, added, err := author.Enrol(state(), []dag.Key{ana.Key(), ben.Key(), ana.Key(), teacher.Key()})
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 || len(g.Members) != 3 || len(g.Admins) != 1 || g.Admins[0] != teacher.Key() {
		t.Fatalf("enrol: added %v, group %+v", added, g)
	}
	up, err := au(teacher).GroupUpdate(ctx, sid, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(up)

	lawTree := func() (*statute.Tree, dag.ID) {
		l, err := n.Views().Law(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := n.Views().Snapshot(ctx, space, l.Head)
		if err != nil {
			t.Fatal(err)
		}
		return tr, l.Head
	}
	law, head := lawTree()
	am := author.Amendment{NID: "/us/t1/s1", Text: "Homework is due 14 days after it is set.", Summary: "Two weeks for homework"}
	if _, err := author.PlanAmendment(state(), law, head, signer(t, 9).Key(), am); err == nil || !strings.Contains(err.Error(), "not in the roster") {
		t.Errorf("a stranger's plan: %v", err)
	}
	p, err := author.PlanAmendment(state(), law, head, ana.Key(), am)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := "@@ /us/t1/s1 (modified) @@\n [section] Homework\n-Homework is due 7 days after it is set.\n+Homework is due 14 days after it is set.\n"
	if p.Diff != wantDiff {
		t.Errorf("diff:\n%s\nwant:\n%s", p.Diff, wantDiff)
	}
	if !p.NewGroup || p.Group != author.DraftGroup(ana.Key()) || !strings.HasPrefix(p.Branch, "amend-") {
		t.Errorf("plan group %q (new %v), branch %q", p.Group, p.NewGroup, p.Branch)
	}
	txs, err := au(ana).Amend(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(txs) != 4 || txs[3].Made != p.MRID {
		t.Fatalf("%d transactions, MR %s, plan %s", len(txs), txs[len(txs)-1].Made, p.MRID)
	}
	put(txs...)
	var ballots []dag.ID
	for _, s := range []*dag.Signer{ana, ben, teacher} {
		tx, err := au(s).BallotCast(ctx, sid, author.Ballot{MR: p.MRID, Choice: "approve"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		put(tx)
		ballots = append(ballots, tx.ID)
		if s == ana {
			// One approval of three: closing now leaves it pending.
			tl, _ := n.Views().Tally(ctx, space, p.MRID)
			if _, err := author.PlanClose(p.MRID, tl.Result, ballots); !errors.Is(err, author.ErrNothingToClose) {
				t.Errorf("close after one approval: %v", err)
			}
		}
	}
	tl, err := n.Views().Tally(ctx, space, p.MRID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := author.PlanClose(p.MRID, tl.Result, ballots[:2]); err == nil {
		t.Error("a determination over fewer ballots than the tally counted was planned")
	}
	d, err := author.PlanClose(p.MRID, tl.Result, ballots)
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != string(rules.Approved) {
		t.Fatalf("outcome %s, want approved", d.Outcome)
	}
	det, err := au(teacher).Determine(ctx, sid, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(det)
	law, _ = lawTree()
	if got, _ := law.Get("/us/t1/s1"); got.Text != am.Text {
		t.Errorf("law reads %q, want %q", got.Text, am.Text)
	}
	// The same amendment again, on the new law, is no change.
	law, head = lawTree()
	if _, err := author.PlanAmendment(state(), law, head, ana.Key(), am); err == nil {
		t.Error("an amendment to the text in force was planned")
	}
}
