package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
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
	x, _, err := httpapi.VerifyMRExtract(body, dag.Key{}, nil)
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
	if x, _, err := httpapi.VerifyMRExtract(body, dag.Key{}, nil); resp.StatusCode != http.StatusOK || err != nil || len(x.Entries) != 2 ||
		x.Entries[1].Tx != open.ID || len(x.Electorate) != 2 || x.Tally.IfClosed != "pending" {
		t.Fatalf("designated_approvers: %d %v %s", resp.StatusCode, err, body)
	}
}

// TestMRExtractRotatedKeyHTTP (D45, D62): an MR on which a ballot counts
// for a member other than its signer (member 3's key rotated, the new key
// votes) is not served as an extract (501): the rotation is not in it, so
// a stranger would count that ballot for an unknown key. Before the
// rotation the same MR's extract is served and verifies.
func TestMRExtractRotatedKeyHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	open := s.last
	s.vote(t, n, mr, "approve", 0, 2)
	n.checkpointNow(t, s.b.Session.String())
	path := httpapi.Base + "/extract/" + mr.String()
	resp, err := http.Get(n.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, _, err := httpapi.VerifyMRExtract(body, dag.Key{}, nil); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("before the rotation: %d %v", resp.StatusCode, err)
	}
	newKey := ht.Member(33)
	s.do(t, n, rotateTx(t, b, newKey, ht.Member(0), ht.Member(3).Key(), newKey.Key(), open, s.last))
	s.do(t, n, b.Ballot(newKey, mr, "approve", dag.ID{}, s.last))
	n.checkpointNow(t, s.b.Session.String())
	if p := n.problem(t, http.MethodGet, path, "", nil, http.StatusNotImplemented, httpapi.CodeNotImplemented); !strings.Contains(p["detail"].(string), "rotated key") {
		t.Fatalf("refused for another reason: %v", p)
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
	extract := func() *httpapi.MRExtract {
		t.Helper()
		resp, err := http.Get(a.srv.URL + httpapi.Base + "/extract/" + s.mr.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		x, _, err := httpapi.VerifyMRExtract(body, keyA.Key(), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("extract: %d %v", resp.StatusCode, err)
		}
		_, _, errW := httpapi.VerifyMRExtract(body, keyA.Key(), []dag.Key{keyW.Key()})
		if (len(x.Cosigned) == 1) != (errW == nil) {
			t.Fatalf("cosigned %+v, but requiring the witness: %v", x.Cosigned, errW)
		}
		return x
	}
	a.submit(t, s, s.b.GroupCreate(ht.Member(0), "extra", ht.Members(0, 2), ht.Members(0, 1), s.last))
	a.checkpointNow(t, s.space)
	x := extract()
	cps := a.node.Replica().Checkpoints(s.space)
	if len(x.Cosigned) != 1 || x.Cosigned[0].Witness != keyW.Key() || len(x.Entries) != 3 || len(cps) < 2 ||
		x.Entries[0].Inclusion.TreeSize != cps[len(cps)-2].Size || x.Entries[0].Inclusion.TreeSize == cps[len(cps)-1].Size {
		t.Fatalf("with the co-signed checkpoint holding every entry: %+v", x)
	}
	a.submit(t, s, s.b.Ballot(ht.Member(2), s.mr, "approve", dag.ID{}, s.last))
	a.checkpointNow(t, s.space)
	x = extract()
	cps = a.node.Replica().Checkpoints(s.space)
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
			x, _, err := httpapi.VerifyMRExtract(body, dag.Key{}, nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("plan %+v: %d %v", p, resp.StatusCode, err)
			}
			var live replica.Tally
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
