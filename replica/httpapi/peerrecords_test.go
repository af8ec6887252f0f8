package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// diskNode opens a node with key on the Badger directory dir (sync on
// loopback with cfg when cfg is not nil) and serves it over HTTP on a
// real listener. Closing is the caller's (restarts), and the cleanup's.
func diskNode(t *testing.T, key *dag.Signer, dir string, cfg *sync.Config) (*node.Node, *httptest.Server) {
	t.Helper()
	if cfg != nil {
		cfg.ListenAddrs = []string{"/ip4/127.0.0.1/tcp/0"}
		cfg.Debounce, cfg.Interval = 10*time.Millisecond, time.Second
	}
	n, err := node.Open(context.Background(), node.Options{Dir: dir, InMemory: dir == "", NodeKey: key, Sync: cfg,
		Clock: func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); n.Close() })
	return n, srv
}

// forkHistory is a session whose honest history A holds (4 entries,
// member 0 approves) and whose rewritten one (member 0 rejects, and
// member 1's ballot more: 5 entries) A's operator starts A on.
type forkHistory struct {
	space          string
	honest, forged []ht.Tx
}

func newForkHistory() forkHistory {
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	return forkHistory{space: b.Session.String(),
		honest: []ht.Tx{b.Create, roster, open, b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, open.ID)},
		forged: []ht.Tx{b.Create, roster, open, b.Ballot(ht.Member(0), mr, "reject", dag.ID{}, open.ID), b.Ballot(ht.Member(1), mr, "reject", dag.ID{}, open.ID)}}
}

// getForks GETs srv's /forks with query q.
func getForks(t *testing.T, srv *httptest.Server, q string) httpapi.ForksPage {
	t.Helper()
	resp, err := http.Get(srv.URL + httpapi.Base + "/forks" + q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p httpapi.ForksPage
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /forks%s: %s %s", q, resp.Status, resp.Header.Get("Content-Type"))
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkForkEvidence checks that B's /forks holds exactly one fork of A:
// the checkpoint B verified (A's honest one, size 4) and the one that
// contradicts it (the rewritten history's, size 5), both signed by A's
// key, as the fork's evidence.
func checkForkEvidence(t *testing.T, srvB *httptest.Server, peer, space string, keyA dag.Key, honestRoot dag.ID) {
	t.Helper()
	p := getForks(t, srvB, "")
	if p.Size != 1 || len(p.Forks) != 1 || p.Full || p.Next != nil || p.Finality != replica.Provisional {
		t.Fatalf("B's forks: %+v", p)
	}
	f := p.Forks[0]
	if f.Index != 0 || f.Peer != peer || f.Session != space || !strings.Contains(f.Detail, "the consistency proof 4..5 names roots") {
		t.Fatalf("B's fork: %+v (peer want %s)", f, peer)
	}
	for _, c := range []struct {
		raw  json.RawMessage
		size uint64
	}{{f.Verified, 4}, {f.Claimed, 5}} {
		cp, err := replica.DecodeCheckpoint(c.raw)
		if err != nil || cp.Verify() != nil || cp.Node != keyA || cp.Space != space || cp.Size != c.size {
			t.Fatalf("evidence %s: %+v %v", c.raw, cp, err)
		}
		if c.size == 4 && cp.Root != honestRoot {
			t.Fatalf("the verified checkpoint's root %s is not honest A's %s", cp.Root, honestRoot)
		}
	}
}

// TestPeerCheckpointsSurviveRestartLibp2p (S10 over libp2p, real hosts
// on loopback, B on a real Badger directory): B verifies honest A's
// checkpoint (first_seen, size 4) and is restarted on the same
// directory; A's operator then starts A on a doctored store (the same
// keys, member 0's ballot rewritten and a ballot more, checkpointed at
// 5). B's first pull after its restart catches it — fork_detected, which
// a B that had forgotten A would have called first_seen — and B's GET
// /forks shows the fork with both signed checkpoints, after another
// restart too, once however often B pulls the forged A again.
func TestPeerCheckpointsSurviveRestartLibp2p(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{31}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{32}, 32))
	idA, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	h := newForkHistory()
	a, _ := p2pNode(t, keyA, sync.Config{Identity: idA, Manual: true})
	submitCheckpointed(t, a, h.honest...)
	honest := a.Replica().Checkpoints(dag.MustParseID(h.space))
	dirB := t.TempDir()
	nb, _ := diskNode(t, keyB, dirB, &sync.Config{Manual: true})
	res, err := nb.Connect(ctx, a.Sync().Addrs()[0], []string{h.space})
	if err != nil || len(res) != 1 || res[0].Checkpoint != "first_seen" || res[0].Error != "" {
		t.Fatalf("B syncs honest A: %+v %v", res, err)
	}
	if err := nb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	forged, _ := p2pNode(t, keyA, sync.Config{Identity: idA, Manual: true})
	submitCheckpointed(t, forged, h.forged...)

	nb, srvB := diskNode(t, keyB, dirB, &sync.Config{Manual: true})
	if p := getForks(t, srvB, ""); p.Size != 0 || len(p.Forks) != 0 || p.Next != nil {
		t.Fatalf("B's forks before any: %+v", p)
	}
	for i := range 2 {
		res, err = nb.Connect(ctx, forged.Sync().Addrs()[0], []string{h.space})
		if err != nil || len(res) != 1 || res[0].Checkpoint != string(node.CodeForkDetected) || res[0].Witness != "" ||
			!strings.Contains(res[0].ForkDetail, "the consistency proof 4..5 names roots") {
			t.Fatalf("restarted B syncs forged A (%d): %+v %v", i, res, err)
		}
	}
	peerA := forged.Sync().ID().String()
	checkForkEvidence(t, srvB, peerA, h.space, keyA.Key(), honest[len(honest)-1].Root)
	if err := nb.Close(); err != nil {
		t.Fatal(err)
	}
	_, srvB = diskNode(t, keyB, dirB, nil)
	checkForkEvidence(t, srvB, peerA, h.space, keyA.Key(), honest[len(honest)-1].Root)
}

// TestPeerCheckpointsSurviveRestartHTTP is the same over HTTP
// federation (-peer-http): A is reached at one URL throughout (a real
// listener whose handler is the honest node, then the node started on
// the doctored store); B, on a real Badger directory, pulls honest A
// (first_seen), is restarted, and its first pull after the restart is
// fork_detected, the fork served at B's GET /forks with its evidence.
// The paging of /forks and its refusal of a bad limit are checked on
// the way.
func TestPeerCheckpointsSurviveRestartHTTP(t *testing.T) {
	ctx := context.Background()
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{33}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{34}, 32))
	h := newForkHistory()
	var target atomic.Pointer[http.Handler]
	srvA := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*target.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srvA.Close)
	a, honestSrv := diskNode(t, keyA, "", nil)
	submitCheckpointed(t, a, h.honest...)
	honest := a.Replica().Checkpoints(dag.MustParseID(h.space))
	hh := honestSrv.Config.Handler
	target.Store(&hh)

	dirB := t.TempDir()
	nb, _ := diskNode(t, keyB, dirB, nil)
	res, err := nb.PullHTTP(ctx, node.NewHTTPPeer(srvA.URL, nil))
	if err != nil || len(res) != 1 || res[0].Checkpoint != "first_seen" || res[0].Accepted != 4 {
		t.Fatalf("B pulls honest A: %+v %v", res, err)
	}
	if err := nb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	forged, forgedSrv := diskNode(t, keyA, "", nil)
	submitCheckpointed(t, forged, h.forged...)
	fh := forgedSrv.Config.Handler
	target.Store(&fh)

	nb, srvB := diskNode(t, keyB, dirB, nil)
	for i := range 2 {
		// A new HTTPPeer each time, as a restarted witan up makes: what
		// B verified of A is the node's, not the puller's.
		res, err = nb.PullHTTP(ctx, node.NewHTTPPeer(srvA.URL, nil))
		if len(res) != 1 || res[0].Checkpoint != string(node.CodeForkDetected) || res[0].Witness != "" ||
			!strings.Contains(res[0].ForkDetail, "the consistency proof 4..5 names roots") || err == nil || !strings.Contains(err.Error(), "fork_detected") {
			t.Fatalf("restarted B pulls forged A (%d): %+v %v", i, res, err)
		}
	}
	checkForkEvidence(t, srvB, srvA.URL, h.space, keyA.Key(), honest[len(honest)-1].Root)
	if p := getForks(t, srvB, "?after=1&limit=5"); p.Size != 1 || len(p.Forks) != 0 || p.Next != nil {
		t.Fatalf("B's forks after 1: %+v", p)
	}
	resp, err := http.Get(srvB.URL + httpapi.Base + "/forks?limit=0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != httpapi.ContentTypeProblem {
		t.Fatalf("GET /forks?limit=0: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
}
