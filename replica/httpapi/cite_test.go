package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestCiteS12 (D16, S12 citation part) over a real listener: /cite on the
// pre-amendment hash (the genesis change) still returns the original text
// after the amendment merged into the root, with latest pointing at the
// root's new head (status superseded); /cite on that head is current with
// latest null; nothing says final.
func TestCiteS12(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	var before httpapi.TreeAnswer
	if err := n.c.Get(ctx, "/branches/root/tree", url.Values{"nid": {"/us/t1/s1"}}, &before); err != nil {
		t.Fatal(err)
	}
	if before.Node.Text == "The period is 45 days." || before.Node.Text == "" {
		t.Fatalf("original text %q", before.Node.Text)
	}
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		tx := s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	if _, err := n.node.Replica().Checkpoint(ctx, s.space); err != nil {
		t.Fatal(err)
	}
	n.submit(t, s, s.b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last))
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	if _, err := n.node.Replica().Checkpoint(ctx, s.space); err != nil {
		t.Fatal(err)
	}
	var root httpapi.TreeAnswer
	if err := n.c.Get(ctx, "/branches/root/tree", url.Values{"nid": {"/us/t1/s1"}}, &root); err != nil {
		t.Fatal(err)
	}
	if root.Node.Text != "The period is 45 days." || *root.Head == s.b.Genesis {
		t.Fatalf("the amendment did not merge: %+v", root)
	}
	m := n.getMap(t, "/cite/"+s.b.Genesis.String(), url.Values{"nid": {"/us/t1/s1"}})
	var c httpapi.CiteAnswer
	if err := n.c.Get(ctx, "/cite/"+s.b.Genesis.String(), url.Values{"nid": {"/us/t1/s1"}}, &c); err != nil {
		t.Fatal(err)
	}
	if c.Object.Text != before.Node.Text || c.AsOf != s.b.Genesis || c.Latest == nil || *c.Latest != *root.Head || *c.LatestBranch != "root" ||
		c.Status != "superseded" || c.Authoritative || c.Finality == "final" || m["finality"] == "final" {
		t.Fatalf("cite of the pre-amendment hash: %+v", c)
	}
	if err := n.c.Get(ctx, "/cite/"+root.Head.String(), url.Values{"nid": {"/us/t1/s1"}}, &c); err != nil {
		t.Fatal(err)
	}
	if c.Object.Text != "The period is 45 days." || c.Latest != nil || c.Status != "current" || c.Finality != replica.FinalAdvisory {
		t.Fatalf("cite of the root head: %+v", c)
	}
	// The amendment's own change, on the draft branch: the root now
	// contains it, so latest is the root head.
	if err := n.c.Get(ctx, "/cite/"+s.change.String(), nil, &c); err != nil {
		t.Fatal(err)
	}
	if c.Latest == nil || *c.Latest != *root.Head || c.Status != "superseded" {
		t.Fatalf("cite of the amendment's change: %+v", c)
	}
	n.problem(t, http.MethodGet, httpapi.Base+"/cite/nope", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/cite/"+s.mr.String(), "", nil, http.StatusNotFound, httpapi.CodeNotFound)
	n.problem(t, http.MethodGet, httpapi.Base+"/cite/"+s.b.Genesis.String()+"?nid=/nope", "", nil, http.StatusNotFound, httpapi.CodeNotFound)
}
