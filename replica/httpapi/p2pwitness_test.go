package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// p2pNode opens an in-memory node with key, its clock fixed, running
// sync on loopback with cfg, and serves it over HTTP.
func p2pNode(t *testing.T, key *dag.Signer, cfg sync.Config) (*node.Node, *httptest.Server) {
	t.Helper()
	cfg.ListenAddrs = []string{"/ip4/127.0.0.1/tcp/0"}
	cfg.Debounce, cfg.Interval = 10*time.Millisecond, time.Second
	n, err := node.Open(context.Background(), node.Options{InMemory: true, NodeKey: key, Sync: &cfg,
		Clock: func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	s, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return n, srv
}

// submitCheckpointed submits txs to n, each accepted, then checkpoints
// their session.
func submitCheckpointed(t *testing.T, n *node.Node, txs ...ht.Tx) {
	t.Helper()
	for _, tx := range txs {
		rc, err := n.Submit(context.Background(), tx.Bytes, tx.Attach)
		if err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %+v %v", tx.Env.Type, rc, err)
		}
	}
	if _, err := n.Replica().Checkpoint(context.Background(), txs[0].Env.Session); err != nil {
		t.Fatal(err)
	}
}

// extractOf GETs srv's /extract of tx: status and body.
func extractOf(t *testing.T, srv *httptest.Server, tx dag.ID) (int, []byte) {
	t.Helper()
	resp, err := http.Get(srv.URL + httpapi.Base + "/extract/" + tx.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestWitnessOverLibp2p (D45 over libp2p, real hosts on loopback): B is
// configured with A as its peer and joins A's session; its automatic
// pull (on connecting) is followed by the check of A's checkpoint over
// /witan/checkpoint/1 and B's cosignature sent back there, so A's
// /extract comes to carry B's cosignature and verifies with B required.
// A grows and checkpoints again; B's next automatic pull (A's
// announcement) checks A's consistency proof, carried by the same
// protocol, and co-signs the new checkpoint, which A's extract of the
// new entry then carries. No HTTP passes between the nodes.
func TestWitnessOverLibp2p(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{21}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{22}, 32))
	keyC, _ := dag.SignerFromSeed(bytes.Repeat([]byte{23}, 32))
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	space := b.Session.String()
	a, srvA := p2pNode(t, keyA, sync.Config{})
	submitCheckpointed(t, a, b.Create, roster)
	if st, body := extractOf(t, srvA, roster.ID); st != http.StatusOK || !bytes.Contains(body, []byte(`"cosigned":[]`)) {
		t.Fatalf("A's extract before any witness: %d %s", st, body)
	}
	_, _ = p2pNode(t, keyB, sync.Config{Peers: a.Sync().Addrs(), Spaces: []string{space}})

	witnessed := func(tx dag.ID) []byte {
		t.Helper()
		for {
			st, body := extractOf(t, srvA, tx)
			if st == http.StatusOK && bytes.Contains(body, []byte(`"witness":"`+keyB.Key().String()+`"`)) {
				return body
			}
			select {
			case <-ctx.Done():
				t.Fatalf("A's extract of %s never carried B's cosignature: %d %s", tx, st, body)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	raw := witnessed(roster.ID)
	if _, cp, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyB.Key()}); err != nil || cp.Size != 2 {
		t.Fatalf("A's extract with B required: size %d, %v\n%s", cp.Size, err, raw)
	}
	if _, _, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyC.Key()}); err == nil {
		t.Fatal("C required, C never co-signed: verifies")
	}

	// A grows: B's next pull verifies the consistency proof 2..3 that A
	// sends with its checkpoint, and co-signs the new checkpoint.
	open, _ := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	submitCheckpointed(t, a, open)
	raw = witnessed(open.ID)
	if _, cp, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyB.Key()}); err != nil || cp.Size != 3 {
		t.Fatalf("A's extract of the new entry with B required: size %d, %v\n%s", cp.Size, err, raw)
	}
}

// TestForkDetectedOverLibp2p (S10 over libp2p, real hosts on loopback):
// B syncs A with Connect — A's checkpoint first_seen and co-signed over
// libp2p. A's operator then starts A again on a doctored store: the same
// node key and libp2p identity, member 0's ballot changed from approve to
// reject and a ballot more, checkpointed at size 5. B's next Connect
// pulls it (each entry judged on its own) and catches the rewrite: the
// consistency proof 4..5 A sends starts from a root that is not the one
// A signed at size 4 — fork_detected in the SyncResult, with the detail
// and an error, and no cosignature sent. A third Connect still reports
// it (the honest checkpoint stays B's reference). C, pulling A by itself
// (automatic pulls, A its configured peer), logs A's checkpoint co-signed,
// then, connected to the forged A, logs the fork as an error with its
// code: where witan up's log shows it for -peer-http.
func TestForkDetectedOverLibp2p(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{24}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{25}, 32))
	keyC, _ := dag.SignerFromSeed(bytes.Repeat([]byte{26}, 32))
	idA, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	space := b.Session.String()
	a, srvA := p2pNode(t, keyA, sync.Config{Identity: idA, Manual: true})
	submitCheckpointed(t, a, b.Create, roster, open, b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, open.ID))
	nb, _ := p2pNode(t, keyB, sync.Config{Manual: true})
	res, err := nb.Connect(ctx, a.Sync().Addrs()[0], []string{space})
	if err != nil || len(res) != 1 || res[0].Error != "" || res[0].Checkpoint != "first_seen" || res[0].Witness != "sent" || res[0].HeldAfter != 4 {
		t.Fatalf("B syncs honest A: %+v %v", res, err)
	}
	// C pulls A by itself (A its configured peer, the session joined):
	// what its automatic pulls find of A's checkpoints is in its log.
	var logC lockedBuffer
	c, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: keyC, Logger: slog.New(slog.NewJSONHandler(&logC, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sync: &sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Peers: a.Sync().Addrs(), Spaces: []string{space}, Interval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitLog := func(what string) {
		t.Helper()
		for !strings.Contains(logC.String(), what) {
			select {
			case <-ctx.Done():
				t.Fatalf("C's log never said %s:\n%s", what, logC.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitLog(`"msg":"libp2p peer checkpoint co-signed"`)
	if st, body := extractOf(t, srvA, open.ID); st != http.StatusOK || !bytes.Contains(body, []byte(keyB.Key().String())) {
		t.Fatalf("honest A's extract lacks B's cosignature: %d %s", st, body)
	}
	aid := a.Sync().ID()
	srvA.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	forged, _ := p2pNode(t, keyA, sync.Config{Identity: idA, Manual: true})
	submitCheckpointed(t, forged, b.Create, roster, open, b.Ballot(ht.Member(0), mr, "reject", dag.ID{}, open.ID),
		b.Ballot(ht.Member(1), mr, "reject", dag.ID{}, open.ID))
	if forged.Sync().ID() != aid {
		t.Fatal("the forged node has another libp2p identity")
	}
	for i := range 2 {
		res, err = nb.Connect(ctx, forged.Sync().Addrs()[0], []string{space})
		if err != nil || len(res) != 1 {
			t.Fatalf("B syncs forged A (%d): %+v %v", i, res, err)
		}
		r := res[0]
		if r.Checkpoint != string(node.CodeForkDetected) || r.Witness != "" || !strings.Contains(r.ForkDetail, "the consistency proof 4..5 names roots") ||
			!strings.Contains(r.Error, node.ErrForkDetected.Error()) {
			t.Fatalf("B syncs forged A (%d): %+v", i, r)
		}
	}
	// C reaches the forged A: the pull the connection starts is checked,
	// and the fork logged as an error with its code.
	if err := c.Sync().Connect(ctx, forged.Sync().Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	waitLog(`"level":"ERROR","msg":"libp2p peer rewrote its history"`)
	if !strings.Contains(logC.String(), `"code":"fork_detected"`) {
		t.Fatalf("C's log: %s", logC.String())
	}
	if got := forged.Replica().CosignedCheckpoints(dag.MustParseID(space)); len(got) != 0 {
		t.Fatalf("the forged node holds cosignatures: %+v", got)
	}
}

// lockedBuffer is a bytes.Buffer that a logger writes from any goroutine.
type lockedBuffer struct {
	mu gosync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
