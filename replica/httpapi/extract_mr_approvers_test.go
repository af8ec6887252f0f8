package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestMRExtractApproversHTTP (D45, §7 designated_approvers) over a real
// listener: the extract of an MR under designated_approvers carries the
// group.update that defined the approvers group at the open (with its
// inclusion proof, and the group object in supporting), and the verifier
// pins the electorate from it with the network off.
//
// By hand: drafters is created as {M1, M2}, then updated to {M1, M2, M3}
// before the open; the rule is designated_approvers of drafters with
// required 2, so n = 3. Ballots M1 approve, M3 reject, M2 approve: A = 2,
// R = 1, V = 0; A >= required: approved if closed. Had the verifier used
// the group.create instead, M3 would not be an approver (electorate 2).
// The group.create is an ancestor of the update, so only the update is a
// maximal write: entries are the update, the open and three ballots.
func TestMRExtractApproversHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	b := s.b
	update := b.GroupUpdate(ht.Member(1), "drafters", ht.Members(1, 4), ht.Members(1, 2), s.last)
	n.submit(t, s, update)
	rule := ht.Approvers("drafters", 2)
	n.submit(t, s, b.BranchCreate(ht.Member(1), "panel", "drafters", house.RootBranch, b.Genesis, false, rule, ht.TwoThirds(), s.last))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, Target: "panel", TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: rule}, s.last)
	n.submit(t, s, open)
	var ballots []dag.ID
	for _, v := range []struct {
		m      int
		choice string
	}{{1, "approve"}, {3, "reject"}, {2, "approve"}} {
		tx := b.Ballot(ht.Member(v.m), mr, v.choice, dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	n.checkpointNow(t, s.space)
	resp, err := http.Get(n.srv.URL + httpapi.Base + "/extract/" + mr.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(httpapi.HeaderPendingEntries) != "0" {
		t.Fatalf("extract: %d %s", resp.StatusCode, body)
	}
	n.srv.Close() // offline from here on

	x, _, err := extract.VerifyMR(body, dag.Key{}, nil)
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, body)
	}
	var txs []dag.ID
	for _, e := range x.Entries {
		txs = append(txs, e.Tx)
	}
	wantEl := []string{ht.Member(1).Key().String(), ht.Member(2).Key().String(), ht.Member(3).Key().String()}
	slices.Sort(wantEl)
	var gotEl []string
	for _, k := range x.Electorate {
		gotEl = append(gotEl, k.String())
	}
	tl := x.Tally.Tally
	if !slices.Equal(txs, append([]dag.ID{update.ID, open.ID}, ballots...)) || !slices.Equal(gotEl, wantEl) || len(x.Supporting) < 1 ||
		x.Tally.IfClosed != "approved" || tl.Electorate != 3 || tl.Approve != 2 || tl.Reject != 1 || tl.Abstain != 0 || tl.Void != 0 || x.Finality != "provisional" {
		t.Fatalf("the extract: entries %v electorate %v tally %+v %s\n%s", txs, gotEl, tl, x.Tally.IfClosed, body)
	}

	// An electorate without M3, kept canonical and sorted, fails: the
	// group entries pin it.
	m3 := `"` + ht.Member(3).Key().String() + `"`
	at := bytes.Index(body, []byte(`"electorate":[`))
	end := at + bytes.IndexByte(body[at:], ']')
	el := bytes.Replace(bytes.Replace(body[at:end], []byte(","+m3), nil, 1), []byte(m3+","), nil, 1)
	forged := append(append(append([]byte{}, body[:at]...), el...), body[end:]...)
	if at < 0 || bytes.Equal(forged, body) {
		t.Fatal("M3 not found in the extract")
	}
	if _, _, err := extract.VerifyMR(forged, dag.Key{}, nil); err == nil || !strings.Contains(err.Error(), "not the approvers group") {
		t.Fatalf("an electorate without M3 verifies: %v", err)
	}
	// Every byte changed anywhere fails.
	for i := range body {
		y := bytes.Clone(body)
		y[i] ^= 0x01
		if _, _, err := extract.VerifyMR(y, dag.Key{}, nil); err == nil {
			t.Fatalf("byte %d changed (%q -> %q) still verifies: ...%s...", i, body[i], y[i], y[max(0, i-80):min(len(y), i+20)])
		}
	}
}

// TestMRExtractApproversConcurrentOpensHTTP (D45, §7): one MR body opened
// twice concurrently, once before and once after drafters gained M3: the
// electorate is what both opens agree on, {M1, M2} (house), and the
// extract carries both opens' group writes (the group.create and the
// group.update), whose intersection the verifier takes. By hand: n = 2,
// required 2; M1 approve, M2 reject: A=1 R=1, n-R-V = 1 < 2: rejected if
// closed.
func TestMRExtractApproversConcurrentOpensHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	b := s.b
	rule := ht.Approvers("drafters", 2)
	n.submit(t, s, b.BranchCreate(ht.Member(1), "panel", "drafters", house.RootBranch, b.Genesis, false, rule, ht.TwoThirds(), s.last))
	fork := s.last
	m := ht.MR{Source: "draft", SourceHead: s.change, Target: "panel", TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: rule}
	open1, mr := b.Open(ht.Member(1), m, fork)
	n.submit(t, s, open1)
	update := b.GroupUpdate(ht.Member(1), "drafters", ht.Members(1, 4), ht.Members(1, 2), fork)
	n.submit(t, s, update)
	open2, mr2 := b.Open(ht.Member(1), m, update.ID)
	n.submit(t, s, open2)
	if mr2 != mr || open1.ID == open2.ID {
		t.Fatalf("not one MR opened twice: %s %s", mr, mr2)
	}
	b1 := b.Ballot(ht.Member(1), mr, "approve", dag.ID{}, open1.ID, open2.ID)
	n.submit(t, s, b1)
	b2 := b.Ballot(ht.Member(2), mr, "reject", dag.ID{}, b1.ID)
	n.submit(t, s, b2)
	n.checkpointNow(t, s.space)
	resp, err := http.Get(n.srv.URL + httpapi.Base + "/extract/" + mr.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	x, _, err := extract.VerifyMR(body, dag.Key{}, nil)
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("extract: %d %v %s", resp.StatusCode, err, body)
	}
	var txs []dag.ID
	for _, e := range x.Entries {
		txs = append(txs, e.Tx)
	}
	wantEl := []string{ht.Member(1).Key().String(), ht.Member(2).Key().String()}
	slices.Sort(wantEl)
	var gotEl []string
	for _, k := range x.Electorate {
		gotEl = append(gotEl, k.String())
	}
	tl := x.Tally.Tally
	if len(txs) != 6 || !slices.Contains(txs, update.ID) || !slices.Contains(txs, open1.ID) || !slices.Contains(txs, open2.ID) || !slices.Equal(gotEl, wantEl) ||
		tl.Electorate != 2 || tl.Approve != 1 || tl.Reject != 1 || x.Tally.IfClosed != "rejected" {
		t.Fatalf("entries %v electorate %v tally %+v %s", txs, gotEl, tl, x.Tally.IfClosed)
	}
}
