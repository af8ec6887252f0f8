package main

import (
	"strings"
	"testing"
	"time"
)

// A sample goes to the first stage, in the set's order, with a function on
// its stack; labels and the header are skipped; what no stage claims is
// "other". The figures are worked out by hand from the text below.
func TestAttribute(t *testing.T) {
	const traces = `File: x.test
Type: cpu
Duration: 1s, Total samples = 60ms (6%)
-----------+-------------------------------------------------------
      10ms   runtime.memmove
             github.com/witan-dev/witan/dag.(*BatchVerifier).Verify
             github.com/witan-dev/witan/replica.(*Replica).Ingest
-----------+-------------------------------------------------------
         k: v
      20ms   github.com/witan-dev/witan/replica/house.(*House).Admit
             github.com/witan-dev/witan/dag.planBatch
-----------+-------------------------------------------------------
     1.5ms   runtime.futex
-----------+-------------------------------------------------------
      30ms   github.com/witan-dev/witan/dag.planBatch
-----------+-------------------------------------------------------
`
	stages := []stage{
		{"verification", []string{"dag.(*BatchVerifier)"}},
		{"admission", []string{"house.(*House).Admit"}},
		{"plan", []string{"dag.planBatch"}},
	}
	got, err := attribute(strings.NewReader(traces), stages)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 1500 * time.Microsecond}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stage %d: %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	// 20 ms over 3 entries: 6,666.7 µs, in tenths.
	if v := micros(20*time.Millisecond, 3); tenths(v) != "6666.7" {
		t.Errorf("20 ms over 3 entries: %s µs", tenths(v))
	}
	if _, err := attribute(strings.NewReader("-----------+--\n      12 runtime.x\n"), stages); err == nil {
		t.Error("a value that is not a duration was taken")
	}
}
