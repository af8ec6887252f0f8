package replica_test

import (
	"context"
	"slices"
	"testing"

	"github.com/witan-dev/witan/replica"
)

// One Ingest call may carry more envelopes than one store transaction
// holds: the replica puts them in several batches, and every outcome is
// what the replica holds at the end of the call. The S11 session (20,000
// envelopes at the CI size) goes in one call, and in calls of 1000; both
// end in the same heads, with every envelope accepted.
func TestIngestLargeCall(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the S11 session")
	}
	ctx := context.Background()
	d := s11Session(t)
	subs := make([]replica.Submission, 0, len(d.txs))
	for _, tx := range d.txs {
		subs = append(subs, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
	}
	heads := func(subs []replica.Submission, per int) []string {
		r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(t, 0)})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := 0; i < len(subs); i += per {
			outs, err := r.Ingest(ctx, subs[i:min(i+per, len(subs))])
			if err != nil {
				t.Fatalf("Ingest of %d envelopes: %v", min(per, len(subs)-i), err)
			}
			if per == len(subs) {
				for k, o := range outs {
					if o.Status != replica.Accepted {
						t.Fatalf("envelope %d of one call: %+v", k, o)
					}
				}
			}
		}
		h, err := r.Heads(ctx, d.b.Session)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, id := range h {
			out = append(out, id.String())
		}
		return out
	}
	one := heads(subs, len(subs))
	if got := heads(subs, 1000); !slices.Equal(got, one) {
		t.Fatalf("heads after calls of 1000 %v, after one call %v", got, one)
	}

	// The session's first envelope last: the first part of the call waits
	// for it, the second brings it, and every outcome says Accepted.
	late := append(slices.Clone(subs[1:1200]), subs[0])
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	outs, err := r.Ingest(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range outs {
		if o.Status != replica.Accepted {
			t.Fatalf("envelope %d, genesis last: %+v", k, o)
		}
	}
}
