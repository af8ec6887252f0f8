package replica

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// openPipeTest opens a replica over a Badger store in memory (dir "") or
// on disk whose Ingest parts hold at most part envelopes, pipelined or not.
func openPipeTest(t testing.TB, dir string, part int, pipe bool) *Replica {
	t.Helper()
	st, err := badgerstore.Open(dir, badgerstore.Options{InMemory: dir == ""})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), Options{Store: st, NodeKey: testNode(t),
		Clock: func() time.Time { return time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	r.partMax, r.noPipeline = part, !pipe
	r.ownsStore = true
	return r
}

// pipeView is what a replica answers about a space, as text: log, heads,
// pending, state hash, quarantine.
func pipeView(t testing.TB, r *Replica, session dag.ID) string {
	ctx := context.Background()
	var b strings.Builder
	log, err := r.Log(ctx, session, 0, 0)
	fmt.Fprintf(&b, "log %v %v\n", log, err)
	heads, err := r.Heads(ctx, session)
	fmt.Fprintf(&b, "heads %v %v\n", heads, err)
	p, err := r.Pending(ctx, session)
	fmt.Fprintf(&b, "pending %v %v\n", p, err)
	if _, h, err := r.State(ctx, session); err == nil {
		fmt.Fprintf(&b, "state %s\n", h)
	} else {
		fmt.Fprintf(&b, "state: %v\n", err)
	}
	for _, q := range r.Quarantine(session.String()) {
		fmt.Fprintf(&b, "quarantined %s %s\n", q.ID, q.Code)
	}
	return b.String()
}

// TestPipelinedIngestMatches: two replicas take the same random history
// (forks, objects, entries first without their objects, forged copies,
// duplicates, in a random order) in the same Ingest calls, cut into parts
// of one to four envelopes; one writes each part while the commit of the
// part before it is under way (pipeline.go), the other waits for each
// commit. After every call both answer the same: outcomes, log, heads,
// pending, state hash, quarantine.
func TestPipelinedIngestMatches(t *testing.T) {
	ctx := context.Background()
	var started atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		space := hs.B.Session
		var order []Submission
		for _, tx := range hs.All {
			order = append(order, Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(hs.All)-1), 0, 2, rapid.ID[int]).Draw(rt, "forge") {
			env := *hs.All[i].Env
			env.Sig = slices.Clone(env.Sig)
			env.Sig[9] ^= 0x20
			order = append(order, Submission{Envelope: env.Canonical(), Attachments: hs.All[i].Attach})
		}
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(hs.All)-1), 0, 3).Draw(rt, "dup") {
			order = append(order, Submission{Envelope: hs.All[i].Bytes, Attachments: hs.All[i].Attach})
		}
		order = rapid.Permutation(order).Draw(rt, "order")
		for _, d := range rapid.SliceOfN(rapid.IntRange(0, len(order)-1), 0, 4).Draw(rt, "strip") {
			if len(order[d].Attachments) == 0 {
				continue
			}
			order = append(order, order[d])
			order[d] = Submission{Envelope: order[d].Envelope}
		}
		part := rapid.IntRange(1, 4).Draw(rt, "part")
		// On disk, the next part is planned while the commit before it
		// syncs, which Badger does not show yet.
		a, b := openPipeTest(t, t.TempDir(), part, true), openPipeTest(t, "", part, false)
		defer func() { a.Close(); b.Close() }()
		for call := 0; len(order) > 0; call++ {
			k := rapid.IntRange(1, min(len(order), 16)).Draw(rt, "call")
			oa, errA := a.Ingest(ctx, order[:k])
			ob, errB := b.Ingest(ctx, order[:k])
			if errA != nil || errB != nil {
				rt.Fatalf("call %d: %v / %v", call, errA, errB)
			}
			if fmt.Sprint(oa) != fmt.Sprint(ob) {
				rt.Fatalf("call %d: outcomes, pipelined\n%v\nnot\n%v", call, oa, ob)
			}
			order = order[k:]
			if va, vb := pipeView(t, a, space), pipeView(t, b, space); va != vb {
				rt.Fatalf("call %d: pipelined\n%s\nnot\n%s", call, va, vb)
			}
		}
		if n := b.started.Load(); n != 0 {
			rt.Fatalf("the replica that does not pipeline started %d commits", n)
		}
		started.Add(a.started.Load())
	})
	if started.Load() == 0 {
		t.Fatal("no part was pipelined: the test compared nothing")
	}
}

// gatedStore holds back the end of every pipelined commit until the test
// lets it go (closes gate), and until then hides the objects of its batch,
// as Badger shows a commit only once it landed: the commit itself runs as
// usual (a fault injection around the real store, as faultyStore is).
type gatedStore struct {
	*badgerstore.Store
	gate    chan struct{}
	started atomic.Int32
	mu      sync.Mutex
	hidden  map[dag.ID]bool
}

func (g *gatedStore) PutStart(ctx context.Context, b dag.Batch) (dag.Result, func() error, error) {
	gate := g.gate
	g.mu.Lock()
	for _, o := range b.Objects {
		if g.hidden == nil {
			g.hidden = map[dag.ID]bool{}
		}
		g.hidden[o.ID] = true
	}
	g.mu.Unlock()
	res, wait, err := g.Store.PutStart(ctx, b)
	g.started.Add(1)
	return res, func() error {
		<-gate
		g.mu.Lock()
		for _, o := range b.Objects {
			delete(g.hidden, o.ID)
		}
		g.mu.Unlock()
		return wait()
	}, err
}

func (g *gatedStore) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	g.mu.Lock()
	hide := g.hidden[id]
	g.mu.Unlock()
	if hide {
		return nil, fmt.Errorf("gated: object %s: %w", id, dag.ErrNotFound)
	}
	return g.Store.Object(ctx, id)
}

// openGated opens a replica on a gatedStore over a Badger store on disk,
// its gate shut, that cuts an Ingest into parts of at most partMax
// entries; both close when the test ends.
func openGated(t *testing.T, partMax int) (*gatedStore, *Replica) {
	t.Helper()
	st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g := &gatedStore{Store: st, gate: make(chan struct{})}
	r, err := Open(context.Background(), Options{Store: g, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.partMax = partMax
	return g, r
}

// TestPipelinedPartReadsObjectInFlight: an entry of part 2 (a branch.create)
// names an object (a rule text) that came attached to an entry of part 1
// (the session.create), whose commit has not landed
// (the store does not show the object yet): the House reads it from part
// 1's flight, and the entry is accepted, as it would be were each part
// durable before the next.
func TestPipelinedPartReadsObjectInFlight(t *testing.T) {
	ctx := context.Background()
	g, r := openGated(t, 3)
	// Part 1: the session (the rule text attached), its roster and a
	// group; part 2: a branch whose rule names the same text, sent
	// without it.
	b, txs := chain(0)
	txs = append(txs, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 4), ht.Members(1, 3), txs[1].ID))
	br := b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.Majority(-1), txs[2].ID)
	text := dag.Sum(ht.RuleText)
	if !slices.ContainsFunc(txs[0].Attach, func(a []byte) bool { return dag.Sum(a) == text }) {
		t.Fatal("the session.create does not carry the rule text")
	}
	in := append(subs(txs), Submission{Envelope: br.Bytes})
	for _, a := range br.Attach {
		if dag.Sum(a) != text {
			in[3].Attachments = append(in[3].Attachments, a)
		}
	}
	if len(in[3].Attachments) == len(br.Attach) {
		t.Fatal("the branch.create does not carry the rule text")
	}
	ingested := make(chan []Outcome, 1)
	go func() {
		out, err := r.Ingest(ctx, in)
		if err != nil {
			t.Error(err)
		}
		ingested <- out
	}()
	waitUntil(t, "two parts planned", func() bool { return g.started.Load() >= 2 })
	close(g.gate)
	for i, o := range <-ingested {
		if o.Status != Accepted {
			t.Errorf("outcome %d: %+v", i, o)
		}
	}
	if log, _ := r.Log(ctx, b.Session, 0, 0); len(log) != len(in) {
		t.Errorf("log of %d entries, want %d", len(log), len(in))
	}
}

// TestReadersWaitForPipelinedCommit: until the commits of a peer's parts
// have landed (here: until the test lets their waits end), no reader of
// the replica answers, since what it holds in memory is ahead of them,
// and the Ingest call does not return; then the read answers the state
// with every entry.
func TestReadersWaitForPipelinedCommit(t *testing.T) {
	ctx := context.Background()
	g, r := openGated(t, 2)
	close(g.gate)
	b, txs := chain(6)
	space := b.Session
	// The session and its roster first, landed.
	if _, err := r.Ingest(ctx, subs(txs[:2])); err != nil {
		t.Fatal(err)
	}
	g.gate = make(chan struct{})
	g.started.Store(0)

	ingested := make(chan []Outcome, 1)
	go func() {
		out, err := r.Ingest(ctx, subs(txs[2:]))
		if err != nil {
			t.Error(err)
		}
		ingested <- out
	}()
	// Two parts planned: the second on top of the first's commit.
	waitUntil(t, "two parts planned", func() bool { return g.started.Load() >= 2 })
	read := make(chan dag.ID, 1)
	go func() {
		_, h, _ := r.State(ctx, space)
		read <- h
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-read:
		t.Fatal("a state read answered while the commits of the entries it holds had not landed")
	case <-ingested:
		t.Fatal("Ingest returned before its commits landed")
	default:
	}
	close(g.gate)
	during := <-read
	out := <-ingested
	for i, o := range out {
		if o.Status != Accepted {
			t.Errorf("outcome %d: %+v", i, o)
		}
	}
	// The read answered once the two parts it waited for had landed,
	// before the third was planned: the state of the first six entries.
	ref := openPipeTest(t, "", 0, false)
	defer ref.Close()
	if _, err := ref.Ingest(ctx, subs(txs[:6])); err != nil {
		t.Fatal(err)
	}
	if _, want, err := ref.State(ctx, space); err != nil || during != want {
		t.Errorf("the read that waited answered %s, the state of the entries of the landed parts is %s (%v)", during, want, err)
	}
	if log, _ := r.Log(ctx, space, 0, 0); len(log) != len(txs) {
		t.Errorf("log of %d entries, want %d", len(log), len(txs))
	}
}
