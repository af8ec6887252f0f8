package replica_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// What a node records with RecordRefusal (its refused memory blocks) is in
// the one bounded quarantine record: per source, the oldest forgotten
// first, counted by QuarantineStats, paged by Refusals, answered by
// Refused; and a reason is kept to MaxRefusalReason bytes.
func TestRecordRefusalBounded(t *testing.T) {
	ctx := context.Background()
	const perSource = 8
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(t, 0), QuarantinePerSource: perSource})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	id := func(i int) dag.ID { return dag.Sum([]byte(fmt.Sprintf("not a block %d", i))) }
	flood := dag.WithSource(ctx, "peer:flood")
	for i := range 20 {
		r.RecordRefusal(flood, "mem:harbour", id(i), "BLOCK_MALFORMED", strings.Repeat("x", 5000))
	}
	r.RecordRefusal(dag.WithSource(ctx, "peer:other"), "mem:harbour", id(100), "BLOCK_MALFORMED", "short")
	if st := r.QuarantineStats(); st.Held != perSource+1 || st.Refused != 21 || st.Evicted != 20-perSource || st.Sources != 2 {
		t.Fatalf("stats %+v, want %d held (8 of the flood's, the other's one), 21 refused, 12 evicted, 2 sources", st, perSource+1)
	}
	for i := range 20 {
		if _, ok := r.Refused(id(i)); ok != (i >= 20-perSource) {
			t.Errorf("record of flood block %d kept: %v; want only the newest %d", i, ok, perSource)
		}
	}
	q, ok := r.Refused(id(19))
	if !ok || q.Source != "peer:flood" || q.Space != "mem:harbour" || q.Code != "BLOCK_MALFORMED" || q.Time.IsZero() ||
		len(q.Reason) > replica.MaxRefusalReason+len("…") || !strings.HasPrefix(q.Reason, "xxxx") {
		t.Fatalf("record %+v (reason %d bytes)", q, len(q.Reason))
	}
	if q, ok := r.Refused(id(100)); !ok || q.Source != "peer:other" || q.Reason != "short" {
		t.Fatalf("the other source's record: %+v %v", q, ok)
	}
	page, more := r.Refusals("mem:harbour", 0, 100)
	if len(page) != perSource+1 || more {
		t.Fatalf("page of %d records (more %v), want %d", len(page), more, perSource+1)
	}
}
