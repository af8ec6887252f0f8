package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestMRExtractBoundsHTTP (D45) over a real listener: an MR extract is
// refused, never truncated, past the entry bound (the open and three
// ballots are 4 entries: 422 witan:extract_too_large with a bound of 3,
// served with the default bound, and it verifies); an MR under
// designated_approvers, whose electorate no hash in the MR pins, is 501.
func TestMRExtractBoundsHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	b := s.b
	for i := 0; i < 3; i++ {
		n.submit(t, s, b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last))
	}
	n.checkpointNow(t, s.space)
	path := httpapi.Base + "/extract/" + s.mr.String()

	small, err := httpapi.New(httpapi.Options{Node: n.node, MaxExtractEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(small)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || resp.Header.Get("Content-Type") != httpapi.ContentTypeProblem ||
		!bytes.Contains(body, []byte(httpapi.CodeExtractTooLarge)) {
		t.Fatalf("past the bound: %d %s", resp.StatusCode, body)
	}

	resp, err = http.Get(n.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(httpapi.HeaderPendingEntries) != "0" {
		t.Fatalf("within the default bound: %d %s", resp.StatusCode, body)
	}
	x, _, err := httpapi.VerifyMRExtract(body, dag.Key{}, nil)
	if err != nil || len(x.Entries) != 4 || x.Tally.Tally.Approve != 3 || x.Tally.Tally.Electorate != 10 || x.Finality != "provisional" {
		t.Fatalf("the extract: %v %+v", err, x)
	}

	n.submit(t, s, b.BranchCreate(ht.Member(1), "panel", "drafters", house.RootBranch, b.Genesis, false, ht.Approvers("drafters", 1), ht.TwoThirds(), s.last))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, Target: "panel", TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Approvers("drafters", 1)}, s.last)
	n.submit(t, s, open)
	n.checkpointNow(t, s.space)
	n.problem(t, http.MethodGet, httpapi.Base+"/extract/"+mr.String(), "", nil, http.StatusNotImplemented, httpapi.CodeNotImplemented)
}
