package node

import (
	"context"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/sync"
)

// TestIngestTakesOnlyItsSession: sync's Ingest names the space its items
// are for; an envelope of another session is quarantined (schema) and
// not stored, whether the space is another session's id, text that is not
// an id, or the session's id written with upper-case hex (not its
// canonical text). The session's own items are judged as usual.
func TestIngestTakesOnlyItsSession(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		own := hs.B.Session.String()
		items := func() []sync.Item { return txItems(hs.All) }
		n := memNode(rt)
		defer n.Close()
		for _, space := range []string{
			dag.Sum([]byte("another session")).String(),
			"not an id",
			dag.Prefix + strings.ToUpper(own[len(dag.Prefix):]),
		} {
			res, err := n.Ingest(ctx, space, items())
			if err != nil {
				rt.Fatal(err)
			}
			for i, r := range res.Items {
				if r.Outcome != sync.Quarantined || r.Code != dag.CodeSchema || !strings.Contains(r.Reason, "sent for space") {
					rt.Fatalf("item %d for space %q: %+v, want quarantined (schema)", i, space, r)
				}
			}
			if log, _ := n.Log(ctx, own, 0, 0); len(log) != 0 {
				rt.Fatalf("after items for space %q, the session's log holds %d entries", space, len(log))
			}
		}
		res, err := n.Ingest(ctx, own, items())
		if err != nil {
			rt.Fatal(err)
		}
		for i, r := range res.Items {
			if r.Outcome == sync.Quarantined && strings.Contains(r.Reason, "sent for space") {
				rt.Fatalf("item %d of the session itself refused: %+v", i, r)
			}
		}
		if log, _ := n.Log(ctx, own, 0, 0); len(log) == 0 {
			rt.Fatal("the session's own items stored nothing")
		}
	})
}
