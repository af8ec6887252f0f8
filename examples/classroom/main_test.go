package main

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/replica"
)

func TestClassroom(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	o, err := run(ctx, &out, options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	all := func(n int, v replica.Finality) []replica.Finality { return slices.Repeat([]replica.Finality{v}, n) }
	if o.Laptops != 4 || !slices.Equal(o.LiveApprove, []uint64{3, 3, 3, 3}) ||
		!slices.Equal(o.LiveFinality, all(4, replica.Provisional)) ||
		!slices.Equal(o.Status, []string{"merged", "merged", "merged", "merged"}) ||
		!slices.Equal(o.FinalFinality, all(4, replica.FinalAdvisory)) ||
		o.TallyOverHTTP != replica.FinalAdvisory || !o.StateHashesAgree || !o.Purged || !o.Ephemeral || !o.SimulationLabeled {
		t.Fatalf("outcome %+v\n%s", o, out.String())
	}
}
