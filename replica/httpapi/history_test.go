package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// TestHistory (D44) over a real listener: before the merge a node has no
// history; after the amendment merges into the root, /history of the
// amended section lists that MR with the proposer's summary labelled as
// the proposer's words, empty opinion lists and authoritative false.
func TestHistory(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	var h httpapi.HistoryAnswer
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.History) != 0 || h.Authoritative || h.NID != "/us/t1/s1" {
		t.Fatalf("history before any merge %+v", h)
	}
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		tx := s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	det := s.b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last)
	n.submit(t, s, det)
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.History) != 1 || h.Finality != replica.Provisional {
		t.Fatalf("history after the merge, before its checkpoint %+v", h)
	}
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	n.getMap(t, "/history/us/t1/s1", nil)
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	it := h.History[0]
	if len(h.History) != 1 || it.MR != s.mr || it.Determination != det.ID || it.ProposerSummary.Text != "Extends the period to 45 days" ||
		it.ProposerSummary.Label == "" || len(it.MemberOpinions)+len(it.GroupPositions)+len(it.OtherOpinions) != 0 ||
		it.MemberOpinions == nil || h.Finality != replica.FinalAdvisory || h.Authoritative {
		t.Fatalf("history %+v", h)
	}
	n.problem(t, http.MethodGet, httpapi.Base+"/history/us/t9/nope", "", nil, http.StatusNotFound, httpapi.CodeNotFound)
}

// TestHistoryOpinionsHTTP (D44): the merged MR's opinions in three
// labelled lists, by author_kind, over a real listener with envelopes
// signed and tx ids computed in the test. On the MR: member 5's opinion
// (member_opinions), the party's position signed by its admin 2
// (group_positions), advisor 10's opinion (other_opinions); member 6's
// opinion on the spec is not about the MR and is listed nowhere. Every
// list is sorted by id, opinions_next is null (3 < the limit), and the
// item's finality is provisional until a checkpoint includes the
// opinions too: member 7's opinion after the checkpoint makes it
// provisional again.
func TestHistoryOpinionsHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	onMR := func(kind string, extra map[string]any) map[string]any {
		return ht.OpinionBody(kind, "mr", s.mr.String(), extra)
	}
	acc := func(tx ht.Tx) string {
		t.Helper()
		id := n.accept(t, tx)
		s.last = tx.ID
		return id
	}
	member := acc(b.Opinion(ht.Member(5), onMR("member", map[string]any{"stance": "support"}), s.last))
	party := acc(b.Opinion(ht.Member(2), onMR("group", map[string]any{"on_behalf_of": "group:party", "disclosure": ht.Full(), "stance": "oppose"}), s.last))
	advisor := acc(b.Opinion(ht.Member(10), onMR("advisor", nil), s.last))
	acc(b.Opinion(ht.Member(6), ht.OpinionBody("member", "spec", "30k-v0.13", nil), s.last))
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		ballots = append(ballots, dag.MustParseID(acc(b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last))))
	}
	acc(b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last))
	ids := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(map[string]any)["id"].(string))
		}
		return out
	}
	members := []string{member}
	check := func(fin string) {
		t.Helper()
		h := n.get(t, "/history/us/t1/s1")
		items := h["history"].([]any)
		if len(items) != 1 {
			t.Fatalf("history %v", h)
		}
		it := items[0].(map[string]any)
		if it["mr"] != s.mr.String() || it["opinions_next"] != nil || it["finality"] != fin || h["authoritative"] != false {
			t.Fatalf("item %v", it)
		}
		for list, want := range map[string][]string{"member_opinions": members, "group_positions": {party}, "other_opinions": {advisor}} {
			if got := ids(it[list]); !slices.Equal(got, want) {
				t.Errorf("%s %v, want %v", list, got, want)
			}
		}
		g := it["group_positions"].([]any)[0].(map[string]any)
		if g["on_behalf_of"] != "group:party" || g["stance"] != "oppose" || g["author"] != ht.Member(2).Key().String() {
			t.Errorf("group position %v", g)
		}
	}
	check("provisional")
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	n.checkpointNow(t, s.space)
	check("final_advisory")
	// A later opinion on the merged MR joins its list, and the item is
	// provisional again until a checkpoint includes it.
	late := acc(b.Opinion(ht.Member(7), onMR("member", nil), s.last))
	members = []string{member, late}
	slices.Sort(members)
	check("provisional")
}

// TestHistoryBranchesHTTP (D44): /history follows the merges into every
// branch, in merge order, over a real listener with envelopes signed and
// ids computed in the test. The session's amendment (draft: section 1 to
// 45 days) merges into the root first; then a branch "side" forked from
// the draft's head sets section 1 to 60 days and merges into "draft"
// under always_allow (a determination listing no ballots). By hand: the
// history of section 1 is the root merge (before: the genesis change),
// then the draft merge (before: the draft's head, the amendment's
// change), each with its branch and summary; section 2, which neither
// changed, has none.
func TestHistoryBranchesHTTP(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	b := s.b
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		tx := b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	rootDet := b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last)
	n.submit(t, s, rootDet)

	n.submit(t, s, b.BranchCreate(ht.Member(1), "side", "drafters", "draft", s.change, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, side := b.Append(ht.Member(2), "side", s.change, []statute.Op{ht.Replace(b.Trees[s.change], "/us/t1/s1", "The period is 60 days.")}, s.last)
	n.submit(t, s, tx)
	open, mr2 := b.Open(ht.Member(1), ht.MR{Source: "side", SourceHead: side, Target: "draft", TargetHead: s.change,
		Members: ht.Members(0, 10), Rule: ht.AlwaysAllow(), Summary: "Sixty days"}, s.last)
	n.submit(t, s, open)
	draftDet := b.Determine(ht.Member(1), mr2, []dag.ID{}, "approved", s.last)
	n.submit(t, s, draftDet)

	var h httpapi.HistoryAnswer
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.History) != 2 || h.Authoritative {
		t.Fatalf("history of section 1: %+v", h)
	}
	root, draft := h.History[0], h.History[1]
	if root.MR != s.mr || root.Branch != "root" || root.Before != b.Genesis || root.Determination != rootDet.ID ||
		root.ProposerSummary.Text != "Extends the period to 45 days" {
		t.Fatalf("first item, the root merge: %+v", root)
	}
	if draft.MR != mr2 || draft.Branch != "draft" || draft.Before != s.change || draft.Determination != draftDet.ID ||
		draft.ProposerSummary.Text != "Sixty days" || draft.MemberOpinions == nil {
		t.Fatalf("second item, the draft merge: %+v", draft)
	}
	var heads httpapi.TreeAnswer
	if err := n.c.Get(ctx, "/branches/draft/tree", url.Values{"nid": {"/us/t1/s1"}}, &heads); err != nil {
		t.Fatal(err)
	}
	if heads.Head == nil || *heads.Head != draft.Merge || heads.Node.Text != "The period is 60 days." {
		t.Fatalf("the draft's head is not the merge of the second item: %+v", heads)
	}
	if err := n.c.Get(ctx, "/history/us/t1/s2", nil, &h); err != nil || len(h.History) != 0 {
		t.Fatalf("history of section 2: %+v %v", h, err)
	}
}
