package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// liveNode is a real node (Badger in memory) behind the HTTP API.
func liveNode(t *testing.T, key *dag.Signer, txs []ht.Tx) *node.Node {
	t.Helper()
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key, Clock: func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	submitAll(t, n, txs)
	return n
}

func submitAll(t *testing.T, n *node.Node, txs []ht.Tx) {
	t.Helper()
	for _, tx := range txs {
		rc, err := n.Replica().Submit(context.Background(), tx.Bytes, tx.Attach)
		if err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %+v %v", tx.Env.Type, rc, err)
		}
		if _, err := n.Replica().Checkpoint(context.Background(), tx.Env.Session); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyForkDetected is S10, a lying operator: witan verify -state
// remembers the checkpoint it verified; an honest node that grows passes
// again (its consistency proof verifies); then the operator swaps in a
// doctored store — the same node key, the same session, one ballot of the
// checkpointed history changed and the log re-signed, so that the node is
// self-consistent — and verify exits non-zero with fork_detected, leaving
// the state file as it was.
func TestVerifyForkDetected(t *testing.T) {
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	honest := []ht.Tx{b.Create, roster, open, b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, open.ID)}
	a := liveNode(t, key, honest)
	// The doctored store: member 0 voted reject, and more came after.
	doctored := []ht.Tx{b.Create, roster, open, b.Ballot(ht.Member(0), mr, "reject", dag.ID{}, open.ID),
		b.Ballot(ht.Member(1), mr, "reject", dag.ID{}, open.ID), b.Ballot(ht.Member(2), mr, "reject", dag.ID{}, open.ID)}
	forged := liveNode(t, key, doctored)

	serve := func(n *node.Node) http.Handler {
		s, err := httpapi.New(httpapi.Options{Node: n})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var cur atomic.Value
	cur.Store(serve(a))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cur.Load().(http.Handler).ServeHTTP(w, r) }))
	defer srv.Close()
	state := filepath.Join(t.TempDir(), "verify.json")
	verify := func() (Verification, int) {
		t.Helper()
		var out, errb bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		err := m.Run(context.Background(), []string{"verify", "-json", "-state", state, srv.URL})
		var v Verification
		if jerr := json.Unmarshal(out.Bytes(), &v); jerr != nil {
			t.Fatalf("verify: %v %s %s", err, out.String(), errb.String())
		}
		return v, m.ExitCode(err)
	}
	if v, code := verify(); code != 0 || v.History != "first_seen" || v.CheckpointSize != 4 {
		t.Fatalf("first run: exit %d %+v", code, v)
	}
	// The honest node grows: consistent.
	submitAll(t, a, []ht.Tx{b.Ballot(ht.Member(1), mr, "approve", dag.ID{}, open.ID)})
	if v, code := verify(); code != 0 || v.History != "consistent" || v.SeenSize != 4 || v.CheckpointSize != 5 {
		t.Fatalf("second run: exit %d %+v", code, v)
	}
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	// The operator rewrites history.
	cur.Store(serve(forged))
	v, code := verify()
	if code != exitRefused || v.OK || v.History != CodeForkDetected || v.SeenSize != 5 || !v.SignatureOK || !v.RootMatches {
		t.Fatalf("rewritten history: exit %d %+v", code, v)
	}
	if !strings.Contains(v.ForkDetail, "not the") {
		t.Fatalf("fork detail %q", v.ForkDetail)
	}
	after, _ := os.ReadFile(state)
	if !bytes.Equal(before, after) {
		t.Fatal("a fork changed the state file")
	}
	// Still caught on the next run (the evidence is kept).
	if _, code := verify(); code != exitRefused {
		t.Fatalf("second run against the forged node: exit %d", code)
	}
}
