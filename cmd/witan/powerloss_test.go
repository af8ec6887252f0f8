package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/crashtest"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// The power-loss tests of the node: `witan up` (built from this tree) with
// its data directory on a LazyFS disk, the power cut at a moment drawn from
// a seeded generator (WITAN_POWERLOSS_SEED replays one), the process
// killed right after, the node started again on what reached the disk.
// WITAN_POWERLOSS_ROUNDS sets the cuts of the loaded node (default 10),
// WITAN_POWERLOSS_WINDOW_MS the longest load after a round's first receipt
// before its cut (default 2000),
// WITAN_POWERLOSS_NEW the brand-new nodes cut in their first seconds
// (default 5).

// cutUp cuts the power under the node p and SIGKILLs it at once, so that
// nothing it runs after the cut (a Close, a deferred sync) can help it.
func cutUp(t *testing.T, d *crashtest.Disk, p *proc) {
	t.Helper()
	err := d.PowerCut()
	crashtest.Kill(p.cmd)
	<-p.done
	if err != nil {
		t.Fatal(err)
	}
}

// sessionLog reads the whole of the session's log (GET /log, page by page)
// and returns the set of its transactions.
func sessionLog(t *testing.T, base, session string) map[dag.ID]bool {
	t.Helper()
	c := &httpapi.Client{BaseURL: base, Session: session}
	got := map[dag.ID]bool{}
	q := url.Values{"limit": {"1000"}}
	for {
		var page httpapi.LogPage
		err := c.Get(context.Background(), "/log", q, &page)
		var problem *httpapi.Error
		if errors.As(err, &problem) && problem.Status == http.StatusNotFound {
			return got // the node holds no such session: nothing of it survived
		}
		if err != nil {
			t.Fatalf("GET /log: %v", err)
		}
		for _, e := range page.Entries {
			got[e.Tx] = true
		}
		if page.Next == nil {
			return got
		}
		q.Set("after", *page.Next)
	}
}

// TestPowerLossUnderLoad: `witan up` on a LazyFS disk, checkpointing every
// 100 ms and running GC every 300 ms, takes signed ballots from 16
// concurrent HTTP writers; the power is cut at a random moment 0.2–2 s
// after the round's first receipt (WITAN_POWERLOSS_WINDOW_MS). After each
// cut the node starts again on the disk, with the node key it had, and
// every ballot whose receipt said "accepted" is in the session's GET /log.
func TestPowerLossUnderLoad(t *testing.T) {
	d := crashtest.Mount(t)
	bin := buildWitan(t)
	rounds := crashtest.Count(t, "WITAN_POWERLOSS_ROUNDS", 10)
	window := crashtest.Count(t, "WITAN_POWERLOSS_WINDOW_MS", 2000)
	rng := crashtest.Rand(t, "WITAN_POWERLOSS_SEED", 1)
	dir := filepath.Join(d.Mnt, "data")
	extra := []string{"-gc-every", "300ms"}

	p := startUp(t, bin, dir, extra...)
	nodeKey := p.info.NodeKey
	b := ht.New(ht.Options{Simulation: true, Label: "power loss"})
	client := &httpapi.Client{BaseURL: p.info.HTTP, Session: b.Session.String()}
	perRound := max(6000, 4*window) // more than 16 writers submit in the window
	ballots := b.BallotLoad(rounds*perRound, 2000, func(tx ht.Tx) {
		if rc, err := client.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	})
	accepted := map[dag.ID]bool{}
	lost := 0
	for round := range rounds {
		batch := ballots[round*perRound : (round+1)*perRound]
		cutAfter := time.Duration(200+rng.IntN(max(window-200, 1))) * time.Millisecond
		got, first := submitUntilCut(p.info.HTTP, batch, 16, cutAfter, func() { cutUp(t, d, p) })
		if len(got) == 0 {
			t.Errorf("round %d: no receipt in a minute of load", round)
		}
		for _, id := range got {
			accepted[id] = true
		}
		if err := d.Remount(); err != nil {
			t.Fatal(err)
		}
		p = restartUp(t, d, round, bin, dir, extra...)
		if p.info.NodeKey != nodeKey {
			t.Fatalf("round %d: the node restarted as %s, not %s", round, p.info.NodeKey, nodeKey)
		}
		inLog := sessionLog(t, p.info.HTTP, b.Session.String())
		missing := 0
		for id := range accepted {
			if !inLog[id] {
				missing++
			}
		}
		t.Logf("round %d: first receipt after %v, cut %v later, %d ballots accepted in the round, %d accepted in all, %d of them missing from /log",
			round, first.Round(time.Millisecond), cutAfter, len(got), len(accepted), missing)
		lost += missing
		if missing > 0 {
			t.Errorf("round %d: %d of %d accepted ballots are not in the log after the power cut", round, missing, len(accepted))
		}
	}
	p.stop(t)
	if lost == 0 && len(accepted) == 0 {
		t.Fatal("no ballot was accepted before any cut: the test proved nothing")
	}
}

// TestPowerLossDiskDiesInRecovery: the power is cut under load, and the
// disk dies again while the restarted node opens its store (before Badger
// creates its new memtable file). That witan up exits saying why, rather
// than hanging; the disk is cut and remounted, the node starts, and every
// ballot it acknowledged before the first cut is in its log.
func TestPowerLossDiskDiesInRecovery(t *testing.T) {
	d := crashtest.Mount(t)
	bin := buildWitan(t)
	dir := filepath.Join(d.Mnt, "data")
	p := startUp(t, bin, dir)
	b := ht.New(ht.Options{Simulation: true, Label: "disk dies in recovery"})
	client := &httpapi.Client{BaseURL: p.info.HTTP, Session: b.Session.String()}
	ballots := b.BallotLoad(4000, 2000, func(tx ht.Tx) {
		if rc, err := client.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	})
	got, _ := submitUntilCut(p.info.HTTP, ballots, 8, 500*time.Millisecond, func() { cutUp(t, d, p) })
	if len(got) == 0 {
		t.Fatal("no ballot accepted before the cut: the test proves nothing")
	}
	if err := d.Remount(); err != nil {
		t.Fatal(err)
	}
	if err := d.CrashBefore("create", `\.mem$`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := tryStartUp(t, bin, dir); err == nil {
		t.Fatal("witan up started on a disk that died as it opened its store")
	} else if !strings.Contains(err.Error(), "exited") {
		t.Fatalf("witan up on a disk that died as it opened its store: %v", err)
	} else {
		t.Logf("witan up exited %v after the start: %.300s", time.Since(start).Round(time.Millisecond), err)
	}
	if why, died := d.Died(); !died {
		t.Fatal("the disk did not die")
	} else {
		t.Logf("the disk: %.200s", why)
	}
	if err := d.PowerCut(); err != nil {
		t.Fatal(err)
	}
	if err := d.Remount(); err != nil {
		t.Fatal(err)
	}
	p = startUp(t, bin, dir)
	inLog := sessionLog(t, p.info.HTTP, b.Session.String())
	missing := 0
	for _, id := range got {
		if !inLog[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d accepted ballots are not in the log", missing, len(got))
	}
	t.Logf("%d ballots accepted before the cut, all in the log after the second", len(got))
	p.stop(t)
}

// restartUp starts witan up again on a disk just remounted after a power
// cut. LazyFS itself aborts now and then ("Resource deadlock avoided" in
// its log) while the restarted node opens its store; every operation on
// the disk fails from then on, and witan up exits saying so. That is one
// more power cut, during recovery: the disk is cut and remounted and the
// node started again (at most twice), and what it acknowledged must
// still all be there.
func restartUp(t *testing.T, d *crashtest.Disk, round int, bin, dir string, extra ...string) *proc {
	t.Helper()
	p, err := tryStartUp(t, bin, dir, extra...)
	for try := 0; err != nil && try < 2; try++ {
		why, died := d.Died()
		if !died {
			break
		}
		t.Logf("round %d: the disk died during the restart (%s); a second power cut, during recovery", round, why)
		if err := d.PowerCut(); err != nil {
			t.Fatal(err)
		}
		if err := d.Remount(); err != nil {
			t.Fatal(err)
		}
		p, err = tryStartUp(t, bin, dir, extra...)
	}
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	return p
}

// submitUntilCut posts the envelopes from writers concurrent clients, each
// on its own connection, until cut ends them, and returns the transactions
// whose receipts said "accepted". cut is called once, the delay after the
// first receipt (a node just restarted takes a moment to answer, and a
// cut before any receipt would check nothing), or after a minute without
// one.
func submitUntilCut(base string, txs []ht.Tx, writers int, after time.Duration, cut func()) (ids []dag.ID, firstAfter time.Duration) {
	var (
		next atomic.Int64
		mu   sync.Mutex
		got  []dag.ID
		wg   sync.WaitGroup
		once sync.Once
	)
	first := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &httpapi.Client{BaseURL: base, HTTP: &http.Client{Timeout: 30 * time.Second}}
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(txs) {
					return
				}
				rc, err := c.Submit(ctx, txs[i].Bytes, txs[i].Attach)
				if err != nil || rc.Status != "accepted" {
					continue
				}
				mu.Lock()
				got = append(got, rc.Tx)
				mu.Unlock()
				once.Do(func() { close(first) })
			}
		}()
	}
	start := time.Now()
	select {
	case <-first:
	case <-time.After(time.Minute):
	}
	firstAfter = time.Since(start)
	time.Sleep(after)
	// The receipts read before the cut are the acknowledged ones; a
	// receipt that arrives while it happens was acknowledged too.
	cut()
	stop()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return append([]dag.ID(nil), got...), firstAfter
}

// TestPowerLossNewNode: a brand-new node (its node key and libp2p key
// made on this start) accepts a session's first transaction, and the power
// is cut at a random moment in the next 0–1.5 s. The node starts again on
// what reached the disk, with the same node key and peer id, and the
// session's create is in its log.
func TestPowerLossNewNode(t *testing.T) {
	bin := buildWitan(t)
	n := crashtest.Count(t, "WITAN_POWERLOSS_NEW", 5)
	rng := crashtest.Rand(t, "WITAN_POWERLOSS_SEED", 2)
	for i := range n {
		newNodeCut(t, bin, i, rng)
	}
}

func newNodeCut(t *testing.T, bin string, i int, rng *rand.Rand) {
	d := crashtest.Mount(t)
	dir := filepath.Join(d.Mnt, "data")
	p := startUp(t, bin, dir)
	b := ht.New(ht.Options{Simulation: true, Label: "new node"})
	client := &httpapi.Client{BaseURL: p.info.HTTP, Session: b.Session.String()}
	rc, err := client.Submit(context.Background(), b.Create.Bytes, b.Create.Attach)
	if err != nil || rc.Status != "accepted" {
		t.Fatalf("node %d: session.create: %v %+v", i, err, rc)
	}
	wait := time.Duration(rng.IntN(1500)) * time.Millisecond
	time.Sleep(wait)
	cutUp(t, d, p)
	// What reached the disk is Root: the node starts again there.
	q := startUp(t, bin, filepath.Join(d.Root, "data"))
	t.Logf("node %d: cut %v after its session was accepted; restarted as %s", i, wait, q.info.NodeKey)
	if q.info.NodeKey != p.info.NodeKey || q.info.PeerID != p.info.PeerID {
		t.Errorf("node %d: restarted as node %s peer %s, was node %s peer %s", i, q.info.NodeKey, q.info.PeerID, p.info.NodeKey, p.info.PeerID)
	}
	if !sessionLog(t, q.info.HTTP, b.Session.String())[b.Create.ID] {
		t.Errorf("node %d: the accepted session.create %s is not in the log after the cut", i, b.Create.ID)
	}
	q.stop(t)
}
