package main

// This file holds the checks of witan verify that catch a node that lies
// (L0's negative side): a served entry whose envelope does not
// hash to its tx id (altered), positions that skip or repeat (removed),
// an entry served before one of its parents (reordered), a checkpoint
// whose root the served log does not reproduce, and checkpoints read at
// different times (or saved from an earlier run, -since) that are not
// prefixes of one log (history rewritten). Each finding names what is
// wrong; any finding makes verify exit 3.

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/httpapi"
)

// logCheck follows the served log page by page.
type logCheck struct {
	next     uint64          // the position the next entry must have
	seen     map[dag.ID]bool // tx ids served so far
	problems []string
	ids      []dag.ID // the served order, as served
}

func newLogCheck() *logCheck { return &logCheck{next: 1, seen: map[dag.ID]bool{}} }

func (lc *logCheck) fail(format string, args ...any) {
	if len(lc.problems) < 20 {
		lc.problems = append(lc.problems, fmt.Sprintf(format, args...))
	}
}

// entry checks one served log entry.
func (lc *logCheck) entry(e httpapi.LogEntry) {
	if e.Position != lc.next {
		lc.fail("log: position %d where %d was due: an entry was removed or repeated", e.Position, lc.next)
		lc.next = e.Position
	}
	lc.next++
	c, err := dag.Canonicalize(e.Envelope)
	if err != nil {
		lc.fail("log: position %d: the envelope is not JSON: %v", e.Position, err)
		return
	}
	if id := dag.Sum(c); id != e.Tx {
		lc.fail("log: position %d: served as tx %s but its envelope hashes to %s: the entry was altered", e.Position, e.Tx, id)
	}
	if lc.seen[e.Tx] {
		lc.fail("log: position %d: tx %s was served before", e.Position, e.Tx)
	}
	if env, _, _, err := dag.DecodeEnvelope(e.Envelope); err == nil {
		for _, p := range env.Parents {
			if !lc.seen[p] {
				lc.fail("log: position %d: tx %s is served before its parent %s: the log was reordered or the parent removed", e.Position, e.Tx, p)
				break
			}
		}
	}
	lc.seen[e.Tx] = true
	lc.ids = append(lc.ids, e.Tx)
}

// checkpointAgainst checks that cp (read at when) is a signed prefix of
// the served log: its first cp.Size entries hash to cp.Root.
func (lc *logCheck) checkpointAgainst(cp replica.Checkpoint, nodeKey dag.Key, when string) {
	if cp.Verify() != nil || cp.Node != nodeKey {
		lc.fail("%s: the checkpoint (size %d) is not signed by the node's key %s", when, cp.Size, nodeKey)
		return
	}
	if cp.Size > uint64(len(lc.ids)) {
		lc.fail("%s: the checkpoint covers %d entries but the node serves %d: the log shrank or was rewritten", when, cp.Size, len(lc.ids))
		return
	}
	if root := replica.MerkleRoot(lc.ids[:cp.Size]); root != cp.Root {
		lc.fail("%s: the first %d served entries hash to %s, not the checkpoint's root %s: history was rewritten", when, cp.Size, root, cp.Root)
	}
}

// readCheckpointFile reads a checkpoint saved from an earlier run: the
// signed checkpoint object, or a /checkpoint answer holding one.
func readCheckpointFile(path string) (replica.Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return replica.Checkpoint{}, err
	}
	var ans struct {
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	if json.Unmarshal(b, &ans) == nil && len(ans.Checkpoint) > 0 {
		b = ans.Checkpoint
	}
	return httpapi.DecodeCheckpoint(b)
}
