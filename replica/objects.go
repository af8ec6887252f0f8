package replica

// This file is the walk that finds the objects an entry needs besides its
// envelope: what sync sends with it (node.Node.Refs) and what a client's
// session.create or branch.append may name at most (dag.MaxEntryObjects,
// ingestItems).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
)

// BodyObjects returns the objects an envelope's body names, found by
// following every "sha256:…" string of the body, and of each object
// reached, that objs holds (a change, its snapshot's nodes, a branch or
// group object, a seed snapshot and its nodes), in the order found, at
// most limit of them.
//
// It is schema-blind on purpose: it cannot miss an object a future body
// type adds. The one thing it knows is a change: it gives the change and
// the nodes its result adds to its base, not the base snapshot or the
// parent changes, which came with earlier entries.
func BodyObjects(ctx context.Context, objs house.Objects, body []byte, limit int) ([]dag.ID, error) {
	var out []dag.ID
	seen := map[dag.ID]bool{}
	queue := idsIn(body)
	for len(queue) > 0 && len(out) < limit {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		data, err := objs.Object(ctx, id)
		if errors.Is(err, dag.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, id)
		if c, _, _, err := statute.DecodeChange(data); err == nil {
			if err := markTree(ctx, objs, c.Base, seen); err != nil {
				return nil, err
			}
			queue = append(queue, c.Result)
			continue
		}
		queue = append(queue, idsIn(data)...)
	}
	return out, nil
}

// maxMarked bounds the nodes markTree visits.
const maxMarked = 1 << 20

// markTree marks the node objects of the snapshot root that objs holds as
// seen.
func markTree(ctx context.Context, objs house.Objects, root dag.ID, seen map[dag.ID]bool) error {
	queue := []dag.ID{root}
	for k := 0; len(queue) > 0 && k < maxMarked; k++ {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		data, err := objs.Object(ctx, id)
		if errors.Is(err, dag.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		seen[id] = true
		queue = append(queue, idsIn(data)...)
	}
	return nil
}

// idsIn returns every "sha256:<64 hex>" string in canonical JSON b, in
// order of appearance.
func idsIn(b []byte) []dag.ID {
	var out []dag.ID
	s := string(b)
	for {
		i := strings.Index(s, `"`+dag.Prefix)
		if i < 0 {
			return out
		}
		s = s[i+1:]
		j := strings.IndexByte(s, '"')
		if j < 0 {
			return out
		}
		if id, err := dag.ParseID(s[:j]); err == nil {
			out = append(out, id)
		}
		s = s[j+1:]
	}
}

// tooManyObjects is the refusal's detail of a client's session.create or
// branch.append that names more objects than travel with one entry, or "".
func tooManyObjects(ctx context.Context, objs house.Objects, env *dag.Envelope) (string, error) {
	ids, err := BodyObjects(ctx, objs, env.Body, dag.MaxEntryObjects+1)
	if err != nil || len(ids) <= dag.MaxEntryObjects {
		return "", err
	}
	switch env.Type {
	case dag.TxSessionCreate:
		return fmt.Sprintf("the session.create names more than %d objects (its seed snapshot and nodes, rule texts, district table): at most %d travel with one entry to a peer, so the session could never sync; split the seed's text into fewer, larger nodes", dag.MaxEntryObjects, dag.MaxEntryObjects), nil
	case dag.TxBranchAppend:
		return fmt.Sprintf("the branch.append names more than %d objects (its change and the node objects the change's result adds to its base: each new node and each ancestor whose hash changes): at most %d travel with one entry to a peer, so peers would not receive every node of the result; split the change into several appends, each adding fewer nodes", dag.MaxEntryObjects, dag.MaxEntryObjects), nil
	}
	return fmt.Sprintf("the %s names more than %d objects: at most %d travel with one entry to a peer", env.Type, dag.MaxEntryObjects, dag.MaxEntryObjects), nil
}
