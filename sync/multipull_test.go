package sync_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// stallingReplica is a real replica whose log reads past position 0 block
// while stall is set (until release is closed or the read's ctx ends): a
// peer that stops sending in the middle of a run of its log.
type stallingReplica struct {
	*synctest.Replica
	mu      gosync.Mutex
	stall   bool
	release chan struct{}
}

func (r *stallingReplica) Log(ctx context.Context, space string, after uint64, limit int) ([]dag.ID, error) {
	if err := r.wait(ctx, after); err != nil {
		return nil, err
	}
	return r.Replica.Log(ctx, space, after, limit)
}

// LogEntries stalls as Log does: the responder reads the log with it.
func (r *stallingReplica) LogEntries(ctx context.Context, space string, after uint64, limit int) ([]dag.Entry, error) {
	if err := r.wait(ctx, after); err != nil {
		return nil, err
	}
	return r.Replica.LogEntries(ctx, space, after, limit)
}

// wait blocks a read of the log past position 0 while stall is set.
func (r *stallingReplica) wait(ctx context.Context, after uint64) error {
	r.mu.Lock()
	stall := r.stall && after > 0
	r.mu.Unlock()
	if stall {
		select {
		case <-r.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// catchUpRig is three holders of one space, each its own copy of the same
// log, and a fresh node connected to the three.
type catchUpRig struct {
	space   string
	n       int // entries of the space
	whole   uint64
	holders []*ws.Node
	locals  []*stallingReplica
	fresh   *synctest.Replica
	node    *ws.Node
	want    []dag.ID // the holders' heads

	mu      gosync.Mutex
	bytes   uint64            // entry bytes the fresh node received in all
	byPeer  map[string]uint64 // entries received from each peer
	errs    map[string]string // why a peer's catch-up ended, if it failed
	open    map[string]int    // pulls begun and not ended, by peer
	stalled map[string]bool   // the holders that stall
	onEvent func(ws.Event)
}

// rigOptions shape a catchUpRig: serial sets Config.SerialCatchUp on the
// fresh node, stall makes holder i stall, order gives the order in which
// holder i applies the space (the source's log order if nil).
type rigOptions struct {
	serial bool
	stall  func(i int) bool
	order  func(i int, log []dag.Entry) []dag.Entry
}

func newCatchUpRig(t *testing.T, n int, o rigOptions) *catchUpRig {
	t.Helper()
	ctx := context.Background()
	src, space := build(t, n)
	ids, err := src.Log(ctx, space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rig := &catchUpRig{space: space, n: len(ids), byPeer: map[string]uint64{}, errs: map[string]string{},
		open: map[string]int{}, stalled: map[string]bool{}}
	var log []dag.Entry
	for _, id := range ids {
		e, err := src.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rig.whole += uint64(len(e.Data))
		log = append(log, e)
	}
	rig.want = heads(t, src, space)
	cfg := func() ws.Config {
		return ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Debounce: 20 * time.Millisecond, Interval: time.Hour}
	}
	for i := range 3 {
		r := &stallingReplica{Replica: synctest.NewMem(synctest.Options{}), release: make(chan struct{})}
		order := log
		if o.order != nil {
			order = o.order(i, log)
		}
		for _, e := range order {
			if res, err := r.Submit(ctx, e.Data); err != nil || res.Outcome != ws.Accepted {
				t.Fatalf("copy: %v %+v", err, res)
			}
		}
		r.stall = o.stall != nil && o.stall(i)
		h, err := ws.NewNode(ctx, r, cfg())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { close(r.release); h.Close() })
		rig.holders = append(rig.holders, h)
		if r.stall {
			rig.stalled[h.ID().String()] = true
		}
		rig.locals = append(rig.locals, r)
	}
	rig.fresh = synctest.NewMem(synctest.Options{})
	fc := cfg()
	fc.SerialCatchUp = o.serial
	fc.Engine.OnEvent = func(ev ws.Event) {
		if ev.Space != space {
			return
		}
		rig.mu.Lock()
		if ev.Kind == ws.EventSyncStart {
			rig.open[ev.Peer]++
		}
		if ev.Kind == ws.EventSyncDone {
			rig.open[ev.Peer]--
			rig.bytes += ev.Stats.EntryBytes
			rig.byPeer[ev.Peer] += uint64(ev.Stats.Received)
			if ev.Err != nil && rig.errs[ev.Peer] == "" {
				rig.errs[ev.Peer] = ev.Err.Error()
			}
		}
		fn := rig.onEvent
		rig.mu.Unlock()
		if fn != nil {
			fn(ev)
		}
	}
	rig.node, err = ws.NewNode(ctx, rig.fresh, fc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rig.node.Close() })
	for _, h := range rig.holders {
		if err := rig.node.Connect(ctx, h.Addrs()[0]); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "the three holders among the offers", func() bool {
		for _, o := range rig.node.Available() {
			if o.Space == space && len(o.Peers) == 3 {
				return true
			}
		}
		return false
	})
	return rig
}

// join joins the space and waits until the fresh node holds it whole,
// with the holders' heads.
func (rig *catchUpRig) join(t *testing.T) {
	t.Helper()
	if err := rig.node.Join(rig.space); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, "the space at the fresh node", func() bool { return count(t, rig.fresh, rig.space) == rig.n })
	if got := heads(t, rig.fresh, rig.space); !slices.Equal(got, rig.want) {
		t.Fatalf("fresh node's heads %v, the holders' %v", got, rig.want)
	}
	// The catch-up's and the pulls' stats arrive as they end, which can
	// be well after the last entry landed on a loaded machine: wait for
	// the catch-up to be over (it reports its workers as it ends) and for
	// every pull from a holder that does not stall to have ended.
	waitFor(t, 30*time.Second, "the catch-up and the pulls ended", func() bool {
		if ws.CatchingUp(rig.node, rig.space) {
			return false
		}
		rig.mu.Lock()
		defer rig.mu.Unlock()
		for p, k := range rig.open {
			if k > 0 && !rig.stalled[p] {
				return false
			}
		}
		return true
	})
}

// receivedOnce fails t when the fresh node received more than the
// space's entries once (10 % allowed for the pulls after the catch-up).
// The caller holds rig.mu.
func (rig *catchUpRig) receivedOnce(t *testing.T) {
	t.Helper()
	if rig.bytes > rig.whole*11/10 {
		t.Errorf("the fresh node received %d bytes of entries for a space of %d: more than once", rig.bytes, rig.whole)
	}
}

// contributors counts the peers from which the fresh node received at
// least min entries.
func (rig *catchUpRig) contributors(min uint64) int {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	k := 0
	for _, n := range rig.byPeer {
		if n >= min {
			k++
		}
	}
	return k
}

// A fresh node that sees three connected peers offer a space pulls
// disjoint runs of their logs from all three at once, and receives each
// entry about once in all: the entries' bytes received are within 10 % of
// the space's (a few at the edges of what the pulls after the catch-up
// find in common), and each of the three sent a share.
func TestCatchUpFromThreePeers(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	rig := newCatchUpRig(t, 3000, rigOptions{})
	rig.join(t)
	rig.mu.Lock()
	defer rig.mu.Unlock()
	t.Logf("received %d bytes of entries for a space of %d entries, %d bytes; entries by peer %v; errors %v", rig.bytes, rig.n, rig.whole, rig.byPeer, rig.errs)
	rig.receivedOnce(t)
	k := 0
	for _, n := range rig.byPeer {
		if n >= 256 {
			k++
		}
	}
	if k != 3 {
		t.Errorf("%d peers sent 256 entries or more (%v); want all three", k, rig.byPeer)
	}
	if len(rig.errs) > 0 {
		t.Errorf("pulls ended with errors: %v", rig.errs)
	}
}

// The same with SerialCatchUp: one holder at a time (freshGate), the
// space once, from one peer in the main.
func TestCatchUpSerialSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	rig := newCatchUpRig(t, 1500, rigOptions{serial: true})
	rig.join(t)
	if k := rig.contributors(256); k != 1 {
		t.Errorf("%d peers sent 256 entries or more (%v); want one with SerialCatchUp", k, rig.byPeer)
	}
}

// A holder that stops sending in the middle of a run of its log does not
// stall the catch-up: after the stall period it is dropped and its part
// comes from the other two, each entry still about once.
func TestCatchUpPeerStalls(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	rig := newCatchUpRig(t, 3000, rigOptions{stall: func(i int) bool { return i == 1 }})
	ws.SetCatchUpStall(rig.node, 3*time.Second)
	start := time.Now()
	rig.join(t)
	rig.mu.Lock()
	defer rig.mu.Unlock()
	stalled := rig.holders[1].ID().String()
	t.Logf("caught up in %v; entries by peer %v; errors %v", time.Since(start).Round(time.Millisecond), rig.byPeer, rig.errs)
	if !strings.Contains(rig.errs[stalled], "stalled") {
		t.Errorf("the stalling holder's catch-up ended with %q, want it dropped as stalled", rig.errs[stalled])
	}
	rig.receivedOnce(t)
}

// A holder that leaves in the middle of the catch-up (stuck in the middle
// of a run of its log, then its node closes) does not stall it: its
// stream ends, and what it did not send comes from the other two at once,
// not after the stall period (an hour here).
func TestCatchUpPeerLeaves(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	rig := newCatchUpRig(t, 3000, rigOptions{stall: func(i int) bool { return i == 2 }})
	ws.SetCatchUpStall(rig.node, time.Hour)
	leaving := rig.holders[2]
	var once gosync.Once
	rig.mu.Lock()
	rig.onEvent = func(ev ws.Event) {
		if ev.Kind == ws.EventProgress && ev.Progress.EntriesDone > 0 {
			once.Do(func() {
				go func() {
					time.Sleep(300 * time.Millisecond)
					leaving.Close()
				}()
			})
		}
	}
	rig.mu.Unlock()
	rig.join(t)
	rig.mu.Lock()
	defer rig.mu.Unlock()
	t.Logf("entries by peer %v; errors %v", rig.byPeer, rig.errs)
	if e := rig.errs[leaving.ID().String()]; e == "" || strings.Contains(e, "stalled") {
		t.Errorf("the leaving holder's catch-up ended with %q, want its stream's end", e)
	}
	rig.receivedOnce(t)
}

// Holders whose logs differ (each applied the space in its own
// topological order) still give the fresh node the whole space with the
// same heads: where a run of one log holds entries another's run does
// not, the pulls after the catch-up fetch them.
func TestCatchUpLogsDiffer(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	rig := newCatchUpRig(t, 2000, rigOptions{order: func(i int, log []dag.Entry) []dag.Entry {
		if i == 0 {
			return log
		}
		return reorder(log, uint64(i))
	}})
	rig.join(t)
	rig.mu.Lock()
	defer rig.mu.Unlock()
	t.Logf("received %d bytes of entries for a space of %d entries, %d bytes; entries by peer %v; errors %v", rig.bytes, rig.n, rig.whole, rig.byPeer, rig.errs)
	rig.receivedOnce(t)
}

// reorder returns log (a topological order) in another topological order:
// at each step the oldest entry whose parents are all placed, or, one
// time in four, a random one of those.
func reorder(log []dag.Entry, seed uint64) []dag.Entry {
	rnd := rand.New(rand.NewPCG(seed, 7))
	placed := map[dag.ID]bool{}
	left := slices.Clone(log)
	var out []dag.Entry
	for len(left) > 0 {
		var ready []int
		for j, e := range left {
			ok := true
			for _, p := range e.Parents {
				ok = ok && placed[p]
			}
			if ok {
				ready = append(ready, j)
				if len(ready) == 8 {
					break
				}
			}
		}
		j := ready[0]
		if rnd.IntN(4) == 0 {
			j = ready[rnd.IntN(len(ready))]
		}
		out = append(out, left[j])
		placed[left[j].ID] = true
		left = slices.Delete(left, j, j+1)
	}
	return out
}
