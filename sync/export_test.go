package sync

import (
	"context"
	"time"

	"github.com/witan-dev/witan/dag"
)

// LogTail and RegionIDs expose, to the external tests, the two ways the
// requester's filter finds its entries.
var LogTail = logTail

func RegionIDs(ctx context.Context, x Local, starts, known []dag.ID, limit int) ([]dag.ID, error) {
	nodes, err := region(ctx, x, starts, known, limit, false)
	if err != nil {
		return nil, err
	}
	ids := make([]dag.ID, len(nodes))
	for i, n := range nodes {
		ids[i] = n.id
	}
	return ids, nil
}

// SetCatchUpStall sets the period of a node's catch-up stall rule: a peer
// that brings fewer than 256 entries in it is dropped from the catch-up.
func SetCatchUpStall(n *Node, d time.Duration) { n.catchStall = d }
