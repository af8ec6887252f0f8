package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/view"
	"pgregory.net/rapid"
)

// TestMRExtractBoundsHTTP (D45) over a real listener: an MR extract is
// refused, never truncated, past the entry bound (the open and three
// ballots are 4 entries: 422 witan:extract_too_large with a bound of 3,
// served with the default bound, and it verifies); an MR under
// designated_approvers is served with its approvers' group entry.
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
	x, _, err := extract.VerifyMR(body, dag.Key{}, nil)
	if err != nil || len(x.Entries) != 4 || x.Tally.Tally.Approve != 3 || x.Tally.Tally.Electorate != 10 || x.Finality != "provisional" {
		t.Fatalf("the extract: %v %+v", err, x)
	}

	// With a second session on the node, the MR is found without
	// ?session= (its id names one session); with another session named,
	// it is not there.
	other := startSession(t, n, ht.Options{Label: "a second session"}, 3)
	if resp, err := http.Get(n.srv.URL + path); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("with two sessions: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	n.problem(t, http.MethodGet, path+"?session="+other.space, "", nil, http.StatusNotFound, httpapi.CodeNotFound)

	n.submit(t, s, b.BranchCreate(ht.Member(1), "panel", "drafters", house.RootBranch, b.Genesis, false, ht.Approvers("drafters", 1), ht.TwoThirds(), s.last))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, Target: "panel", TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Approvers("drafters", 1)}, s.last)
	n.submit(t, s, open)
	n.checkpointNow(t, s.space)
	// Under designated_approvers, served with the approvers' group.create
	// (drafters {M1, M2}, no ballot: n = 2, A = 0 < 1, n-R-V = 2 >= 1:
	// pending); TestMRExtractApproversHTTP covers it in full.
	resp, err = http.Get(n.srv.URL + httpapi.Base + "/extract/" + mr.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if x, _, err := extract.VerifyMR(body, dag.Key{}, nil); resp.StatusCode != http.StatusOK || err != nil || len(x.Entries) != 2 ||
		x.Entries[1].Tx != open.ID || len(x.Electorate) != 2 || x.Tally.IfClosed != "pending" {
		t.Fatalf("designated_approvers: %d %v %s", resp.StatusCode, err, body)
	}
}

// TestMRExtractRotatedKeyHTTP (D45, D62): an MR on which a ballot counts
// for a member other than its signer (member 3's key rotated, the new key
// votes) is served with the key.rotate entry, and the verifier maps the
// new key to member 3 with the network off.
//
// By hand (threshold_vote gt 1/2 of the electorate, quorum 1/2,
// on_threshold; N = 5): M0, M1 approve: A=2, 2*2 > 5 fails: pending.
// Then M3's key is rotated to K33 (registrar admin M0 co-signs) and K33
// approves: counted for M3, A=3, 3*2 > 5 and quorum 3*2 >= 5: approved if
// closed. Were K33 not mapped to M3 it would not be in the electorate and
// the tally would stay A=2, pending.
func TestMRExtractRotatedKeyHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	open := s.last
	votes := s.vote(t, n, mr, "approve", 0, 2)
	n.checkpointNow(t, s.b.Session.String())
	path := httpapi.Base + "/extract/" + mr.String()
	get := func() []byte {
		t.Helper()
		resp, err := http.Get(n.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("extract: %d %s", resp.StatusCode, body)
		}
		return body
	}
	if x, _, err := extract.VerifyMR(get(), dag.Key{}, nil); err != nil || x.Tally.Tally.Approve != 2 || x.Tally.IfClosed != "pending" {
		t.Fatalf("before the rotation: %v %+v", err, x)
	}
	newKey := ht.Member(33)
	rot := s.do(t, n, rotateTx(t, b, newKey, ht.Member(0), ht.Member(3).Key(), newKey.Key(), open, s.last))
	ballot := s.do(t, n, b.Ballot(newKey, mr, "approve", dag.ID{}, s.last))
	n.checkpointNow(t, s.b.Session.String())
	body := get()
	n.srv.Close() // offline from here on
	x, _, err := extract.VerifyMR(body, dag.Key{}, nil)
	if err != nil {
		t.Fatalf("after the rotation: %v\n%s", err, body)
	}
	var txs []dag.ID
	for _, e := range x.Entries {
		txs = append(txs, e.Tx)
	}
	tl := x.Tally.Tally
	if !slices.Equal(txs, []dag.ID{open, votes[0], votes[1], rot, ballot}) || tl.Electorate != 5 || tl.Approve != 3 || tl.Reject != 0 || tl.Void != 0 ||
		x.Tally.IfClosed != "approved" {
		t.Fatalf("after the rotation: entries %v tally %+v %s", txs, tl, x.Tally.IfClosed)
	}
	for i := range body {
		y := bytes.Clone(body)
		y[i] ^= 0x01
		if _, _, err := extract.VerifyMR(y, dag.Key{}, nil); err == nil {
			t.Fatalf("byte %d changed (%q -> %q) still verifies: ...%s...", i, body[i], y[i], y[max(0, i-80):min(len(y), i+20)])
		}
	}
}

// TestMRExtractWitnessedHTTP (D45 cosigned): node B pulls A over HTTP and
// co-signs A's checkpoint, which holds the MR's open and ballots. After A
// checkpoints again over an entry that is not the MR's, the MR extract is
// still against the co-signed checkpoint and verifies with B required;
// once a ballot of the MR lies beyond it, the extract is against A's
// newest checkpoint, which no one co-signed, and requiring B fails.
func TestMRExtractWitnessedHTTP(t *testing.T) {
	ctx := context.Background()
	a, w := newNode(t), newNodeSeed(t, 9)
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	keyW, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	s := a.newSession(t)
	for i := 0; i < 2; i++ {
		a.submit(t, s, s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last))
	}
	a.checkpointNow(t, s.space)
	if res, err := w.node.PullHTTP(ctx, node.NewHTTPPeer(a.srv.URL, nil)); err != nil || len(res) != 1 || res[0].Witness != "sent" {
		t.Fatalf("pull: %+v %v", res, err)
	}
	getExtract := func() *extract.MR {
		t.Helper()
		resp, err := http.Get(a.srv.URL + httpapi.Base + "/extract/" + s.mr.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		x, _, err := extract.VerifyMR(body, keyA.Key(), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("extract: %d %v", resp.StatusCode, err)
		}
		_, _, errW := extract.VerifyMR(body, keyA.Key(), []dag.Key{keyW.Key()})
		if (len(x.Cosigned) == 1) != (errW == nil) {
			t.Fatalf("cosigned %+v, but requiring the witness: %v", x.Cosigned, errW)
		}
		return x
	}
	a.submit(t, s, s.b.GroupCreate(ht.Member(0), "extra", ht.Members(0, 2), ht.Members(0, 1), s.last))
	a.checkpointNow(t, s.space)
	x := getExtract()
	cps := a.node.Replica().Checkpoints(dag.MustParseID(s.space))
	if len(x.Cosigned) != 1 || x.Cosigned[0].Witness != keyW.Key() || len(x.Entries) != 3 || len(cps) < 2 ||
		x.Entries[0].Inclusion.TreeSize != cps[len(cps)-2].Size || x.Entries[0].Inclusion.TreeSize == cps[len(cps)-1].Size {
		t.Fatalf("with the co-signed checkpoint holding every entry: %+v", x)
	}
	a.submit(t, s, s.b.Ballot(ht.Member(2), s.mr, "approve", dag.ID{}, s.last))
	a.checkpointNow(t, s.space)
	x = getExtract()
	cps = a.node.Replica().Checkpoints(dag.MustParseID(s.space))
	if len(x.Cosigned) != 0 || len(x.Entries) != 4 || x.Entries[0].Inclusion.TreeSize != cps[len(cps)-1].Size {
		t.Fatalf("with a ballot beyond the co-signed checkpoint: %+v", x)
	}
}

// TestMRExtractTallyRapid (D45, §7): for rapid-drawn ballots on one MR —
// any member, any choice, some superseding the member's last ballot, some
// cast again without supersedes (equivocation) — the MR extract verifies
// offline, and the tally it states, which the verifier recomputes from
// the envelopes alone, is the node's own live tally (/tally, folded
// incrementally by the House), if_closed included. 12 drawn sessions.
func TestMRExtractTallyRapid(t *testing.T) {
	type vote struct {
		member    int
		choice    string
		supersede bool
	}
	type plan struct {
		roster int
		votes  []vote
	}
	gen := rapid.Custom(func(t *rapid.T) plan {
		k := rapid.IntRange(3, 7).Draw(t, "roster")
		votes := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) vote {
			return vote{rapid.IntRange(0, k-1).Draw(t, "member"), rapid.SampledFrom([]string{"approve", "reject", "abstain"}).Draw(t, "choice"), rapid.Bool().Draw(t, "supersede")}
		}), 0, 2*k).Draw(t, "votes")
		return plan{k, votes}
	})
	for seed := 0; seed < 12; seed++ {
		p := gen.Example(seed)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			n := newNode(t)
			s := startSession(t, n, ht.Options{}, p.roster)
			b := s.b
			s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
			c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
			mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, p.roster), Rule: ht.Majority(house.MinRootNotice)})
			last := map[int]dag.ID{}
			for _, v := range p.votes {
				sup := dag.ID{}
				if prev, ok := last[v.member]; ok && v.supersede {
					sup = prev
				}
				last[v.member] = s.do(t, n, b.Ballot(ht.Member(v.member), mr, v.choice, sup, s.last))
			}
			n.checkpointNow(t, s.space)
			resp, err := http.Get(n.srv.URL + httpapi.Base + "/extract/" + mr.String())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			x, _, err := extract.VerifyMR(body, dag.Key{}, nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("plan %+v: %d %v", p, resp.StatusCode, err)
			}
			var live view.Tally
			if err := n.c.Get(context.Background(), "/merge-requests/"+mr.String()+"/tally", nil, &live); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(x.Tally.Tally)
			want, _ := json.Marshal(live.Result.Tally)
			if !bytes.Equal(got, want) || x.Tally.IfClosed != live.Result.IfClosed || len(x.Entries) != 1+len(p.votes) {
				t.Fatalf("plan %+v:\nextract %s %s (%d entries)\n/tally  %s %s", p, got, x.Tally.IfClosed, len(x.Entries), want, live.Result.IfClosed)
			}
		})
	}
}

// TestMRExtractStolenKeyHTTP (D45, D62, S19): a thief's ballots signed by
// member 3's old key, which the rotation (compromised_after = the last
// approval, so the thief's reject is not in its past) makes ignored, are
// not in the extract: by hand M0, M1 approve and K33 (member 3's new key)
// approves: N=5 A=3 R=0 V=0, approved if closed, as /tally says; were
// the thief's reject counted, member 3 would be void (A=2, V=1).
func TestMRExtractStolenKeyHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	s.vote(t, n, mr, "approve", 0, 2)
	cut := s.last
	thief := s.do(t, n, b.Ballot(ht.Member(3), mr, "reject", dag.ID{}, s.last))
	newKey := ht.Member(33)
	s.do(t, n, rotateTx(t, b, newKey, ht.Member(0), ht.Member(3).Key(), newKey.Key(), cut, s.last))
	s.do(t, n, b.Ballot(newKey, mr, "approve", dag.ID{}, s.last))
	n.checkpointNow(t, s.b.Session.String())
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
	tl := x.Tally.Tally
	for _, e := range x.Entries {
		if e.Tx == thief {
			t.Fatalf("the thief's ignored ballot is in the extract")
		}
	}
	if tl.Electorate != 5 || tl.Approve != 3 || tl.Reject != 0 || tl.Void != 0 || x.Tally.IfClosed != "approved" {
		t.Fatalf("tally %+v %s, want N=5 A=3 R=0 V=0 approved", tl, x.Tally.IfClosed)
	}
}
