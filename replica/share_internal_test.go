package replica

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// waitUntil polls cond every millisecond, for at most ten seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// partsWaiting returns how many peers' Ingest calls are under way.
func (r *Replica) partsWaiting() int {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	return r.partWait
}

// shareRun is one run of a peer's part and clients' ballots committed
// while a commit is under way (cmu held by the test): the peer's Ingest
// of peer, then the clients' Submits of clients, all started before the
// commit ends. It returns the peer's outcomes, the clients' receipts (nil
// and an error for a refusal) and how many store transactions the
// replica made once the commit ended.
type shareRun struct {
	peer     []Outcome
	receipts []*Receipt
	errs     []error
	puts     int64
}

func runShared(t *testing.T, r *Replica, peer, clients []ht.Tx) shareRun {
	t.Helper()
	ctx := context.Background()
	subs := make([]Submission, len(peer))
	for i, tx := range peer {
		subs[i] = Submission{Envelope: tx.Bytes}
	}
	var res shareRun
	res.receipts = make([]*Receipt, len(clients))
	res.errs = make([]error, len(clients))
	r.cmu.Lock() // a commit under way
	puts := r.puts.Load()
	peerDone := make(chan error, 1)
	go func() {
		var err error
		res.peer, err = r.Ingest(dag.WithSource(ctx, "peer"), subs)
		peerDone <- err
	}()
	if !r.noShare {
		waitUntil(t, "the peer's Ingest to start", func() bool { return r.partsWaiting() == 1 })
	}
	var wg sync.WaitGroup
	submit := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.receipts[i], res.errs[i] = r.Submit(dag.WithSource(ctx, fmt.Sprintf("client %d", i)), clients[i].Bytes, nil)
		}()
	}
	if r.noShare {
		// The first client leads: it takes itself from the queue and
		// waits for the commit; the others queue behind it.
		submit(0)
		waitUntil(t, "the first client to lead", func() bool {
			r.gmu.Lock()
			defer r.gmu.Unlock()
			return r.gbusy && len(r.gq) == 0
		})
		for i := 1; i < len(clients); i++ {
			submit(i)
		}
		waitUntil(t, "the clients to queue", func() bool { return r.queued() == len(clients)-1 })
	} else {
		for i := range clients {
			submit(i)
		}
		// The first client leaves the queue to the waiting part.
		waitUntil(t, "the clients to queue", func() bool { return r.queued() == len(clients) })
	}
	r.cmu.Unlock()
	if err := <-peerDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	res.puts = r.puts.Load() - puts
	return res
}

// TestShareClientsJoinPeerPart: ballots submitted by clients while a
// peer's part waits to be written go in the part's store transaction: one
// commit for the part and the clients, where, with sharing off, the
// clients' group commits on its own (two). Every client is answered
// accepted with the log index its ballot has in the log, and every entry
// of the peer's part is held.
func TestShareClientsJoinPeerPart(t *testing.T) {
	const nPeer, nClients = 300, 12
	for _, share := range []bool{true, false} {
		t.Run(fmt.Sprintf("share=%v", share), func(t *testing.T) {
			ctx := context.Background()
			r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			r.noShare = !share
			b, mr, open := ballotSession(t, r, nPeer+nClients)
			var peer, clients []ht.Tx
			for i := range nPeer {
				peer = append(peer, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open))
			}
			for i := range nClients {
				clients = append(clients, b.Ballot(ht.Member(nPeer+i), mr, "reject", dag.ID{}, open))
			}
			res := runShared(t, r, peer, clients)
			for i, o := range res.peer {
				if o.Status != Accepted {
					t.Fatalf("peer's entry %d: %+v", i, o)
				}
			}
			log, err := r.Log(ctx, b.Session, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if want := 3 + nPeer + nClients; len(log) != want {
				t.Fatalf("log of %d entries, want %d", len(log), want)
			}
			for i, rc := range res.receipts {
				if res.errs[i] != nil || rc.Status != "accepted" || rc.LogIndex == nil {
					t.Fatalf("client %d: %v %+v", i, res.errs[i], rc)
				}
				if rc.Verify() != nil {
					t.Fatalf("client %d: the receipt does not verify", i)
				}
				if idx := *rc.LogIndex; idx >= uint64(len(log)) || log[idx] != clients[i].ID {
					t.Fatalf("client %d: the receipt says log index %d, the log has it elsewhere", i, idx)
				}
			}
			want := int64(1) // the part and the clients' ballots
			if !share {
				want = 2 // the part, then the clients' group
			}
			if res.puts != want {
				t.Errorf("%d store transactions, want %d", res.puts, want)
			}
		})
	}
}

// TestShareRefusalsInSharedCommit: in a commit shared by a peer's part
// and clients' ballots, each is judged as it would be on its own. The
// peer's entry whose parent has not arrived waits (pending, in the
// store); a client's ballot whose parent the node has never seen is
// refused (unknown_parent) and kept nowhere, neither in the log nor
// among the pending entries; a client's ballot whose parent comes in the
// same part is accepted, after it; the other clients' ballots are
// accepted.
func TestShareRefusalsInSharedCommit(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const nPeer = 50
	b, mr, open := ballotSession(t, r, nPeer+10)
	var peer []ht.Tx
	for i := range nPeer {
		peer = append(peer, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open))
	}
	missing := b.Ballot(ht.Member(nPeer), mr, "approve", dag.ID{}, open) // never sent
	orphan := b.Ballot(ht.Member(nPeer+1), mr, "approve", dag.ID{}, missing.ID)
	peer = append(peer, orphan)
	clients := []ht.Tx{
		b.Ballot(ht.Member(nPeer+2), mr, "approve", dag.ID{}, open),
		b.Ballot(ht.Member(nPeer+3), mr, "approve", dag.ID{}, dag.Sum([]byte("never seen"))),
		b.Ballot(ht.Member(nPeer+4), mr, "approve", dag.ID{}, peer[7].ID),
		b.Ballot(ht.Member(nPeer+5), mr, "reject", dag.ID{}, open),
	}
	res := runShared(t, r, peer, clients)
	for i, o := range res.peer {
		want := Accepted
		if i == nPeer {
			want = Pending
		}
		if o.Status != want {
			t.Fatalf("peer's entry %d: %+v, want %s", i, o, want)
		}
	}
	space := b.Session.String()
	pending, err := r.store.Pending(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pending, orphan.ID) {
		t.Error("the peer's entry whose parent has not arrived is not kept pending")
	}
	if slices.Contains(pending, clients[1].ID) {
		t.Error("the refused client's ballot is kept pending")
	}
	log, err := r.Log(ctx, b.Session, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(log, clients[1].ID) {
		t.Fatal("the refused client's ballot is in the log")
	}
	if want := 3 + nPeer + 3; len(log) != want {
		t.Fatalf("log of %d entries, want %d", len(log), want)
	}
	for i, rc := range res.receipts {
		if res.errs[i] != nil {
			t.Fatalf("client %d: %v", i, res.errs[i])
		}
		if i == 1 {
			if rc.Status != "rejected" || len(rc.Errors) != 1 || rc.Errors[0].Code != dag.CodeUnknownParent {
				t.Errorf("client 1 (unknown parent): %+v, want rejected with %s", rc, dag.CodeUnknownParent)
			}
			continue
		}
		if rc.Status != "accepted" || rc.LogIndex == nil {
			t.Fatalf("client %d: %+v", i, rc)
		}
		if idx := *rc.LogIndex; idx >= uint64(len(log)) || log[idx] != clients[i].ID {
			t.Fatalf("client %d: the receipt says log index %d, the log has it elsewhere", i, idx)
		}
	}
	// The ballot whose parent came in the part follows it in the log.
	if slices.Index(log, clients[2].ID) < slices.Index(log, peer[7].ID) {
		t.Error("a client's ballot is before its parent in the log")
	}
}

// TestShareConcurrentDurable: a peer's Ingest of several parts into a
// store on disk (fsync on) while clients submit ballots, with no
// ordering forced: every client is answered accepted at its own log
// index, the peer's entries are all held, and everything acknowledged is
// there, at the same place, after the replica is closed and opened again,
// where the state derived from the store's log has the hash the state
// derived as the entries were written had.
func TestShareConcurrentDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const nPeer, nClients, perClient = 2500, 16, 10
	r, err := Open(ctx, Options{Dir: dir, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	b, mr, open := ballotSession(t, r, nPeer+nClients*perClient)
	subs := make([]Submission, nPeer)
	for i := range nPeer {
		subs[i] = Submission{Envelope: b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open).Bytes}
	}
	ballots := make([]ht.Tx, nClients*perClient)
	for i := range ballots {
		ballots[i] = b.Ballot(ht.Member(nPeer+i), mr, "reject", dag.ID{}, open)
	}
	pos := make([]uint64, len(ballots))
	var wg sync.WaitGroup
	for c := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c * perClient; i < (c+1)*perClient; i++ {
				rc, err := r.Submit(ctx, ballots[i].Bytes, nil)
				if err != nil || rc.Status != "accepted" || rc.LogIndex == nil {
					t.Errorf("ballot %d: %v %+v", i, err, rc)
					return
				}
				pos[i] = *rc.LogIndex
			}
		}()
	}
	out, err := r.Ingest(dag.WithSource(ctx, "peer"), subs)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, o := range out {
		if o.Status != Accepted {
			t.Fatalf("peer's entry %d: %+v", i, o)
		}
	}
	t.Logf("%d store transactions", r.puts.Load())
	// The state derived as the entries were written is the one derived
	// from the store's log after a restart.
	_, hash, err := r.State(ctx, b.Session)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = Open(ctx, Options{Dir: dir, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	log, err := r.Log(ctx, b.Session, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + nPeer + len(ballots); len(log) != want {
		t.Fatalf("log of %d entries after a restart, want %d", len(log), want)
	}
	if _, again, err := r.State(ctx, b.Session); err != nil || again != hash {
		t.Fatalf("state hash %s after a restart, %s before (%v)", again, hash, err)
	}
	for i, tx := range ballots {
		if idx := pos[i]; idx >= uint64(len(log)) || log[idx] != tx.ID {
			t.Fatalf("ballot %d: the receipt says log index %d, the stored log has it elsewhere", i, idx)
		}
	}
}
