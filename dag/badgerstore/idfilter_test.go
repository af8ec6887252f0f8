package badgerstore

import (
	"strconv"
	"sync"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func filterID(i int) dag.ID { return dag.Sum([]byte("filter " + strconv.Itoa(i))) }

// The filter never forgets an id, across layer growth, and answers "not
// held" for most ids it was not given.
func TestIDFilter(t *testing.T) {
	f := newIDFilter(0)
	const n = 3 * filterMinCap // two layers or more
	for i := range n {
		f.add(filterID(i))
	}
	if got := len(*f.layers.Load()); got < 2 {
		t.Fatalf("%d layers after %d ids; want growth", got, n)
	}
	for i := range n {
		if !f.mayHold(filterID(i)) {
			t.Fatalf("id %d added but not held", i)
		}
	}
	fp := 0
	const probes = 100_000
	for i := n; i < n+probes; i++ {
		if f.mayHold(filterID(i)) {
			fp++
		}
	}
	// About 0.2 % per layer; allow a wide margin, but far below 100 %.
	if fp > probes/50 {
		t.Fatalf("%d false positives in %d probes", fp, probes)
	}
	t.Logf("%d layers, %d KiB, false positives %d/%d", len(*f.layers.Load()), f.size()>>10, fp, probes)
}

// Readers run concurrently with add (run with -race).
func TestIDFilterConcurrent(t *testing.T) {
	f := newIDFilter(0)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range filterMinCap + 1000 {
			f.add(filterID(i))
		}
	}()
	go func() {
		defer wg.Done()
		for i := range filterMinCap + 1000 {
			f.mayHold(filterID(i))
		}
	}()
	wg.Wait()
	for i := range filterMinCap + 1000 {
		if !f.mayHold(filterID(i)) {
			t.Fatalf("id %d lost", i)
		}
	}
}
