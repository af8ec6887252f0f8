package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
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
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	n.submit(t, s, s.b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last))
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
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
	n.problem(t, http.MethodGet, httpapi.Base+"/cite/"+dag.Sum([]byte("no such object")).String(), "", nil, http.StatusNotFound, httpapi.CodeNotFound)
	n.problem(t, http.MethodGet, httpapi.Base+"/cite/"+s.b.Genesis.String()+"?nid=/nope", "", nil, http.StatusNotFound, httpapi.CodeNotFound)

	// diff_to_latest (D16): the URL of the diff from the cited text to the
	// latest; following it gives, by hand from the amendment (section 1's
	// text 30 -> 45 days, nothing else), section 1 modified and this
	// unified text: its header, the unchanged kind-and-heading line, the
	// old text removed, the new added. The whole root diffs the same (a
	// change to a node's children alone is not a modification). A current
	// citation has none.
	wantUnified := "@@ /us/t1/s1 (modified) @@\n [section] Section 1\n-The period is 30 days.\n+The period is 45 days.\n"
	for _, nid := range []string{"/us/t1/s1", ""} {
		q := url.Values{}
		if nid != "" {
			q.Set("nid", nid)
		}
		if err := n.c.Get(ctx, "/cite/"+s.b.Genesis.String(), q, &c); err != nil {
			t.Fatal(err)
		}
		want := httpapi.Base + "/cite/" + s.b.Genesis.String() + "/diff?" + url.Values{"nid": q["nid"], "session": {s.space}, "to": {root.Head.String()}}.Encode()
		if c.DiffToLatest == nil || *c.DiffToLatest != want {
			t.Fatalf("diff_to_latest %v, want %s", c.DiffToLatest, want)
		}
		resp, err := http.Get(n.srv.URL + *c.DiffToLatest)
		if err != nil {
			t.Fatal(err)
		}
		var d httpapi.CiteDiff
		err = json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		wantNID := nid
		if nid == "" {
			wantNID = "/us"
		}
		if err != nil || resp.StatusCode != http.StatusOK || d.From != s.b.Genesis || d.To != *root.Head || d.NID != wantNID ||
			len(d.Nodes.Added)+len(d.Nodes.Removed)+len(d.Nodes.Moved) != 0 || len(d.Nodes.Modified) != 1 || d.Nodes.Modified[0] != "/us/t1/s1" ||
			d.Unified != wantUnified || d.Authoritative || d.Finality == "final" {
			t.Fatalf("diff of %q: %d %v %+v", nid, resp.StatusCode, err, d)
		}
	}
	// Section 2, which the amendment left alone: its diff to the latest is
	// cut to its subtree, so it is empty.
	if err := n.c.Get(ctx, "/cite/"+s.b.Genesis.String(), url.Values{"nid": {"/us/t1/s2"}}, &c); err != nil || c.DiffToLatest == nil {
		t.Fatalf("cite of section 2: %+v %v", c, err)
	}
	var d2 httpapi.CiteDiff
	if resp, err := http.Get(n.srv.URL + *c.DiffToLatest); err != nil {
		t.Fatal(err)
	} else {
		err = json.NewDecoder(resp.Body).Decode(&d2)
		resp.Body.Close()
		if err != nil || d2.NID != "/us/t1/s2" || d2.Unified != "" || len(d2.Nodes.Added)+len(d2.Nodes.Removed)+len(d2.Nodes.Moved)+len(d2.Nodes.Modified) != 0 || d2.Nodes.Modified == nil {
			t.Fatalf("diff of section 2: %v %+v", err, d2)
		}
	}
	if err := n.c.Get(ctx, "/cite/"+root.Head.String(), nil, &c); err != nil || c.DiffToLatest != nil {
		t.Fatalf("a current citation's diff_to_latest: %v %v", c.DiffToLatest, err)
	}
	diff := httpapi.Base + "/cite/" + s.b.Genesis.String() + "/diff?to="
	n.problem(t, http.MethodGet, diff+"nope", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, diff+dag.Sum([]byte("no such change")).String(), "", nil, http.StatusNotFound, httpapi.CodeNotFound)
	n.problem(t, http.MethodGet, diff+root.Head.String()+"&nid=/nope", "", nil, http.StatusNotFound, httpapi.CodeNotFound)
}

// TestCiteRecordsS12 (S12, D16): /cite of an opinion and of an MR over a
// real listener, envelopes signed and tx ids computed in the test. An
// advisor's opinion corrected by its author: citing the original returns
// the original body byte for byte, corrected_by [the correction], latest
// the correction, superseded; citing the correction: current, latest
// null. An MR superseded by a second version: citing the first returns
// its MR object as signed (sha256 of the object is the MR id), latest the
// second, superseded; the second is current. Another id is 404.
func TestCiteRecordsS12(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	acc := func(tx ht.Tx) string {
		t.Helper()
		id := n.accept(t, tx)
		s.last = tx.ID
		return id
	}
	onMR := func(extra map[string]any) map[string]any {
		return ht.OpinionBody("advisor", "mr", s.mr.String(), extra)
	}
	orig := b.Opinion(ht.Member(10), onMR(map[string]any{"summary": "the summary says 35"}), s.last)
	origID := acc(orig)
	fixID := acc(b.Opinion(ht.Member(10), onMR(map[string]any{"corrects": origID, "summary": "the summary says 35; the text says 45"}), s.last))

	c := n.get(t, "/cite/"+origID)
	body, _ := json.Marshal(c["object"])
	if c["kind"] != "opinion" || !bytes.Equal(body, orig.Env.Body) || c["latest"] != fixID || c["status"] != "superseded" ||
		len(c["corrected_by"].([]any)) != 1 || c["corrected_by"].([]any)[0] != fixID || c["authoritative"] != false || c["as_of"] != origID {
		t.Fatalf("cite of the corrected opinion: %v (body %s, want %s)", c, body, orig.Env.Body)
	}
	if d, ok := c["diff_to_latest"]; !ok || d != nil {
		t.Fatalf("an opinion's diff_to_latest: %v (present %v), want null", d, ok)
	}
	if c := n.get(t, "/cite/"+fixID); c["latest"] != nil || c["status"] != "current" || len(c["corrected_by"].([]any)) != 0 {
		t.Fatalf("cite of the correction: %v", c)
	}

	tx, c2 := b.Append(ht.Member(2), "draft", s.change, []statute.Op{ht.Replace(b.Trees[s.change], "/us/t1/s1", "The period is 40 days.")}, s.last)
	acc(tx)
	o2, mr2 := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c2, TargetHead: b.Genesis, Members: ht.Members(0, 10),
		Rule: ht.Majority(house.MinRootNotice), Supersedes: s.mr}, s.last)
	acc(o2)
	c = n.get(t, "/cite/"+s.mr.String())
	obj, _ := json.Marshal(c["object"])
	canon, err := dag.Canonicalize(obj)
	if err != nil {
		t.Fatal(err)
	}
	if c["kind"] != "mr" || dag.Sum(canon) != s.mr || c["latest"] != mr2.String() || c["status"] != "superseded" || len(c["corrected_by"].([]any)) != 0 {
		t.Fatalf("cite of the superseded MR: %v", c)
	}
	if d, ok := c["diff_to_latest"]; !ok || d != nil {
		t.Fatalf("an MR's diff_to_latest: %v (present %v), want null", d, ok)
	}
	if c := n.get(t, "/cite/"+mr2.String()); c["latest"] != nil || c["status"] != "current" || c["kind"] != "mr" {
		t.Fatalf("cite of the new version: %v", c)
	}
	n.problem(t, http.MethodGet, httpapi.Base+"/cite/"+dag.Sum([]byte("nothing")).String(), "", nil, http.StatusNotFound, httpapi.CodeNotFound)
}
