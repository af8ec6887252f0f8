package replica

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// ballotSession submits to r a session with a roster of n
// and an open MR on the root; it returns the builder, the MR and the
// open's id.
func ballotSession(t testing.TB, r *Replica, n int) (*ht.Builder, dag.ID, dag.ID) {
	t.Helper()
	ctx := context.Background()
	b := ht.New(ht.Options{Simulation: true})
	last := b.Create.ID
	for _, tx := range []ht.Tx{b.Create,
		b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), b.Create.ID)} {
		if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
		last = tx.ID
	}
	open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, n), Rule: ht.Majority(house.MinRootNotice)}, last)
	if rc, err := r.Submit(ctx, open.Bytes, open.Attach); err != nil || rc.Status != "accepted" {
		t.Fatalf("open: %v %+v", err, rc)
	}
	return b, mr, open.ID
}

// TestGroupCommitAnswersAsAlone: one group of submitted ballots, in this
// order: b1, whose parent b0 comes later in the same group; b0; and b2,
// whose parent this node has never seen. Submitted one after another, b1
// would be refused (its parent not held yet), b0 accepted, b2 refused;
// in a group, b1's answer is the one it would have had submitted after
// b0, the submission queued with it: accepted. b2 stays refused and
// nothing of it is kept.
func TestGroupCommitAnswersAsAlone(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, mr, open := ballotSession(t, r, 4)
	b0 := b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, open)
	b1 := b.Ballot(ht.Member(1), mr, "approve", dag.ID{}, b0.ID)
	b2 := b.Ballot(ht.Member(2), mr, "approve", dag.ID{}, dag.Sum([]byte("never seen")))
	var group []*groupReq
	var sub []Submission
	for _, tx := range []ht.Tx{b1, b0, b2} {
		group = append(group, &groupReq{ctx: ctx, sub: Submission{Envelope: tx.Bytes}})
		sub = append(sub, Submission{Envelope: tx.Bytes})
	}
	out := make([]Outcome, len(group))
	errs := r.commitGroup(group, r.verify(sub, out, false), out)
	for i, want := range []Status{Accepted, Accepted, Pending} {
		if errs[i] != nil || out[i].Status != want {
			t.Errorf("submission %d: %v %+v, want %s", i, errs[i], out[i], want)
		}
	}
	if got, _ := r.LogSize(ctx, b.Session); got != 5 {
		t.Errorf("log size %d, want 5 (create, roster, open, b0, b1)", got)
	}
}

// TestGroupCommitConcurrentDurable: ballots submitted by many clients at
// once into a store on disk (fsync on) are all accepted, each at its own
// log position, and every one is there after the replica is closed and
// opened again: a receipt is only given for what a commit made durable.
func TestGroupCommitConcurrentDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 120
	r, err := Open(ctx, Options{Dir: dir, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	b, mr, open := ballotSession(t, r, n)
	ballots := make([]ht.Tx, n)
	for i := range ballots {
		ballots[i] = b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open)
	}
	pos := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range ballots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc, err := r.Submit(ctx, ballots[i].Bytes, nil)
			if err != nil || rc.Status != "accepted" || rc.LogIndex == nil {
				t.Errorf("ballot %d: %v %+v", i, err, rc)
				return
			}
			if rc.Verify() != nil {
				t.Errorf("ballot %d: the receipt does not verify", i)
			}
			pos[i] = *rc.LogIndex
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	byID := map[dag.ID]uint64{}
	for i, tx := range ballots {
		byID[tx.ID] = pos[i]
	}
	slices.Sort(pos)
	if len(slices.Compact(pos)) != n {
		t.Fatal("two receipts give the same log index")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = Open(ctx, Options{Dir: dir, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	log, err := r.Log(ctx, b.Session, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range ballots {
		if !slices.Contains(log, tx.ID) {
			t.Fatalf("ballot %d acknowledged but not in the log after a restart", i)
		}
		// The receipt's log index (read for the whole group from the
		// log in memory) is where the entry is in the stored log.
		if idx := byID[tx.ID]; idx >= uint64(len(log)) || log[idx] != tx.ID {
			t.Fatalf("ballot %d: the receipt says log index %d, the log has it elsewhere", i, idx)
		}
	}
}

// TestGroupCommitLatecomersJoin: submissions that queue while a leader
// waits for the commit before it join the leader's group, instead of
// leaving the leader to commit alone and forming the next group: one
// group of three, not a group of one then one of two.
func TestGroupCommitLatecomersJoin(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, mr, open := ballotSession(t, r, 4)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	var ballots [3]ht.Tx // made here: the builder is not safe for concurrent use
	for i := range ballots {
		ballots[i] = b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open)
	}
	r.cmu.Lock() // a commit under way
	answers := make(chan error, 3)
	submit := func(i int) {
		rc, err := r.Submit(ctx, ballots[i].Bytes, nil)
		if err == nil && rc.Status != "accepted" {
			err = fmt.Errorf("ballot %d: %+v", i, rc)
		}
		answers <- err
	}
	go submit(0)
	waitFor("the first submission to lead", func() bool {
		r.gmu.Lock()
		defer r.gmu.Unlock()
		return r.gbusy && len(r.gq) == 0
	})
	go submit(1)
	go submit(2)
	waitFor("two latecomers to queue", func() bool { return r.queued() == 2 })
	r.cmu.Unlock()
	for range 3 {
		if err := <-answers; err != nil {
			t.Fatal(err)
		}
	}
	r.gmu.Lock()
	defer r.gmu.Unlock()
	if r.glast != 3 {
		t.Errorf("the last group had %d submissions, want 3 (the leader and both latecomers)", r.glast)
	}
}

// TestGroupCommitForgetsBursts: after a burst (the last groups were
// large), submissions that come one at a time stop waiting for the
// burst's clients to come back: the memory of the groups' size decays to
// one, so a lone client's submission is not held back for good.
func TestGroupCommitForgetsBursts(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const n = 40
	b, mr, open := ballotSession(t, r, n)
	r.gmu.Lock()
	r.glast = 200 // as after a burst of 200 clients
	r.gmu.Unlock()
	for i := range n {
		if rc, err := r.Submit(ctx, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open).Bytes, nil); err != nil || rc.Status != "accepted" {
			t.Fatalf("ballot %d: %v %+v", i, err, rc)
		}
	}
	r.gmu.Lock()
	defer r.gmu.Unlock()
	if r.glast > 1 {
		t.Errorf("after %d submissions one at a time the groups' size is remembered as %d, want 1", n, r.glast)
	}
}
