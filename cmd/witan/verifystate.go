package main

// This file is what witan verify remembers between runs (30k S10, a lying
// operator): with -state FILE it keeps, per node and session, the largest
// checkpoint it has verified (size and root) and, on every later run,
// checks that the node's history still extends it: the replayed log's
// prefix of that size has that root, and the node's RFC 9162 consistency
// proof from that size to its new checkpoint verifies against the
// remembered root and the new signed root. A node that rewrote, reordered
// or dropped anything it had checkpointed fails both, and verify exits
// non-zero with fork_detected; the file is then left as it was, so the
// evidence is kept.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/durable"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/httpapi"
)

// CodeForkDetected is the 30k §9 code verify reports for a rewritten
// history.
const CodeForkDetected = "fork_detected"

// maxSeen bounds the state file: at most this many (node, session) pairs
// are kept, the most recently verified.
const maxSeen = 1000

// verifyState is the state file.
type verifyState struct {
	Version int                  `json:"version"`
	Seen    map[string]seenEntry `json:"seen"` // key: node URL + " " + session
}

// seenEntry is the largest checkpoint verified of one node's session.
type seenEntry struct {
	NodeKey string `json:"node_key"`
	Size    uint64 `json:"size"`
	Root    dag.ID `json:"root"`
	TS      string `json:"ts"`
	Run     uint64 `json:"run"` // order of verification, for the bound
}

func loadVerifyState(path string) (*verifyState, error) {
	st := &verifyState{Version: 1, Seen: map[string]seenEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("verify state %s: %w", path, err)
	}
	if st.Seen == nil {
		st.Seen = map[string]seenEntry{}
	}
	return st, nil
}

func (st *verifyState) save(path string) error {
	if len(st.Seen) > maxSeen {
		keys := make([]string, 0, len(st.Seen))
		for k := range st.Seen {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return st.Seen[keys[i]].Run < st.Seen[keys[j]].Run })
		for _, k := range keys[:len(keys)-maxSeen] {
			delete(st.Seen, k)
		}
	}
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := durable.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return durable.WriteFile(path, append(b, '\n'), 0o644)
}

// checkHistory compares the verified checkpoint cp and the replayed log
// (rep) with what the state file remembers, sets v.History and
// v.ForkDetail, and records cp when everything holds.
func (c *VerifyCommand) checkHistory(ctx context.Context, path string, client *httpapi.Client, rep *replica.Replica, v *Verification, cp replica.Checkpoint) error {
	st, err := loadVerifyState(path)
	if err != nil {
		return err
	}
	key := v.Node + " " + v.Session
	prev, seen := st.Seen[key]
	v.History = "first_seen"
	if seen {
		v.SeenSize, v.SeenRoot = prev.Size, prev.Root.String()
		if detail := c.extends(ctx, client, rep, v.Session, prev, cp); detail != "" {
			v.History, v.ForkDetail, v.OK = CodeForkDetected, detail, false
			return nil
		}
		v.History = "consistent"
	}
	if !v.OK || (seen && cp.Size < prev.Size) {
		return nil
	}
	var run uint64
	for _, e := range st.Seen {
		run = max(run, e.Run)
	}
	st.Seen[key] = seenEntry{NodeKey: v.NodeKey, Size: cp.Size, Root: cp.Root, TS: cp.TS.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"), Run: run + 1}
	return st.save(path)
}

// extends returns "" when the node's checkpoint cp and its replayed log
// extend the remembered checkpoint prev, else what does not hold.
func (c *VerifyCommand) extends(ctx context.Context, client *httpapi.Client, rep *replica.Replica, session string, prev seenEntry, cp replica.Checkpoint) string {
	if cp.Size < prev.Size {
		return fmt.Sprintf("the node's checkpoint has size %d, smaller than the %d it signed before (root %s)", cp.Size, prev.Size, prev.Root)
	}
	// The log the node serves now must begin with what it checkpointed.
	sid, _ := dag.ParseID(session) // malformed: the zero ID, which names no session
	ids, err := rep.Log(ctx, sid, 0, int(prev.Size))
	if err != nil && !errors.Is(err, replica.ErrUnknownSpace) {
		return fmt.Sprintf("replayed log: %v", err)
	}
	if uint64(len(ids)) < prev.Size {
		return fmt.Sprintf("the node's log has %d valid entries, fewer than the %d it checkpointed before", len(ids), prev.Size)
	}
	if got := replica.MerkleRoot(ids); got != prev.Root {
		return fmt.Sprintf("the first %d entries of the node's log have root %s, not the %s it signed before", prev.Size, got, prev.Root)
	}
	// And the node must prove it: RFC 9162 consistency from the
	// remembered root to its new signed root (roots taken from the state
	// file and the checkpoint, never from the proof's answer).
	var ca httpapi.ConsistencyAnswer
	q := url.Values{"from": {strconv.FormatUint(prev.Size, 10)}, "to": {strconv.FormatUint(cp.Size, 10)}}
	if err := client.Get(ctx, "/proofs/consistency", q, &ca); err != nil {
		return fmt.Sprintf("no consistency proof from %d to %d: %v", prev.Size, cp.Size, err)
	}
	p := replica.ConsistencyProof{FirstSize: prev.Size, SecondSize: cp.Size, ConsistencyPath: ca.ConsistencyPath, FirstRoot: prev.Root, SecondRoot: cp.Root}
	if err := p.Verify(); err != nil {
		return fmt.Sprintf("consistency proof from %d to %d does not verify: %v", prev.Size, cp.Size, err)
	}
	return ""
}
