package sync

import (
	"context"

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

// DeflateFrame and DecodeBatchFrame expose the deflated batch frames to
// the external benchmark.
var (
	DeflateFrame     = deflateFrame
	DecodeBatchFrame = decodeBatchFrame
)
