package sync_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
	"pgregory.net/rapid"
)

// Whatever the order in which the spans' batches arrive from one to four
// peers whose logs agree — interleaved at random, some peers leaving in
// the middle of a span — the catch-up ingests in order of position: every
// entry once, none pending, none a duplicate, and the replica ends with
// the source's heads; and no more spans than the window are ever claimed
// ahead of the ingest.
func TestCatchUpArrivalOrders(t *testing.T) {
	ctx := context.Background()
	n := 1500
	if testing.Short() {
		n = 400 // the race run
	}
	src, space := build(t, n)
	ids, err := src.Log(ctx, space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var log []ws.Item
	for _, id := range ids {
		e, err := src.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, ws.Item{Data: e.Data})
	}
	length := uint64(len(log))
	want := heads(t, src, space)
	rapid.Check(t, func(rt *rapid.T) {
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 1))
		peers := rapid.IntRange(1, 4).Draw(rt, "peers")
		slow := rapid.Bool().Draw(rt, "slow")
		dst := synctest.NewMem(synctest.Options{})
		names := []string{"a", "b", "c", "d"}[:peers]
		sim := ws.NewCatchUpSim(dst, space, 32, names...)
		defer sim.Close()
		left := 0
		deadline := time.Now().Add(time.Minute)
		for done := false; !done; {
			select {
			case <-sim.Done():
				done = true
				continue
			default:
			}
			if time.Now().After(deadline) {
				rt.Fatalf("the catch-up did not end")
			}
			name := names[rnd.IntN(len(names))]
			if sim.Gone(name) || (name == "a" && slow && rnd.IntN(8) != 0) {
				// a slow peer: the others run ahead of its spans
				continue
			}
			switch a := rnd.IntN(20); {
			case a == 0 && left < peers-1:
				sim.Drop(name)
				left++
			case a < 6:
				if _, _, ok := sim.Claim(name); !ok {
					time.Sleep(time.Millisecond) // the window waits for the ingest
				}
				if n, most := sim.Ahead(); n > most {
					rt.Fatalf("%d spans claimed and not ingested, past the window (%d): memory unbounded", n, most)
				}
			default:
				lo, hi, got, ok := sim.Inflight(name)
				if !ok {
					continue
				}
				end := min(hi, length)
				if lo+got >= end {
					sim.Finish(name, length)
					continue
				}
				k := min(end-(lo+got), uint64(1+rnd.IntN(64)))
				if err := sim.Deliver(name, slices.Clone(log[lo+got:lo+got+k])); err != nil {
					rt.Fatalf("deliver: %v", err)
				}
			}
		}
		if err := sim.Err(); err != nil {
			rt.Fatalf("catch-up: %v", err)
		}
		var st ws.Stats
		for _, n := range names {
			s := sim.Stats(n)
			st.Received += s.Received
			st.Accepted += s.Accepted
			st.Pending += s.Pending
			st.Duplicate += s.Duplicate
		}
		if st.Received != int(length) || st.Accepted != int(length) || st.Pending != 0 || st.Duplicate != 0 {
			rt.Fatalf("received %d, accepted %d, pending %d, duplicate %d; want each of the %d entries accepted once", st.Received, st.Accepted, st.Pending, st.Duplicate, length)
		}
		if got := heads(t, dst, space); !slices.Equal(got, want) {
			rt.Fatalf("heads %v, want %v", got, want)
		}
	})
}
