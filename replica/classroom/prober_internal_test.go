package classroom

import (
	"context"
	gosync "sync"
	"testing"
	"time"
)

// blockingProber counts probes and holds each until release is closed.
type blockingProber struct {
	mu      gosync.Mutex
	calls   map[string]int
	release chan struct{}
}

func (b *blockingProber) Probe(_ context.Context, peer, _ string) {
	b.mu.Lock()
	b.calls[peer]++
	b.mu.Unlock()
	<-b.release
}

func (b *blockingProber) of(peer string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[peer]
}

func (b *blockingProber) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range b.calls {
		n += k
	}
	return n
}

// The teacher's view asks a peer at most once per probeEvery, and runs at
// most maxProbes probes at once: a page polled every second by a class of
// thirty costs a bounded number of pulls.
func TestProberBounds(t *testing.T) {
	b := &blockingProber{calls: map[string]int{}, release: make(chan struct{})}
	var q prober
	q.ask(b, "p0", "s")
	q.ask(b, "p0", "s") // within probeEvery: not again
	for _, p := range []string{"p1", "p2", "p3", "p4", "p5"} {
		q.ask(b, p, "s")
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.total() < maxProbes && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := b.total(); n != maxProbes {
		t.Fatalf("%d probes running, want %d (one for p0, the rest up to the limit)", n, maxProbes)
	}
	if n := b.of("p0"); n != 1 {
		t.Fatalf("p0 probed %d times", n)
	}
	close(b.release)
	for {
		q.mu.Lock()
		r := q.running
		q.mu.Unlock()
		if r == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// p5 was skipped while the others ran, not marked: it is asked now;
	// p0 is not, its last probe being within probeEvery.
	q.ask(b, "p5", "s")
	q.ask(b, "p0", "s")
	for b.total() < maxProbes+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if b.of("p5") != 1 || b.of("p0") != 1 || b.total() != maxProbes+1 {
		t.Fatalf("p5 %d, p0 %d, all %d", b.of("p5"), b.of("p0"), b.total())
	}
}
