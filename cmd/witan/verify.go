package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/httpapi"
)

// VerifyCommand is the L0 verifier. It reads a node's capability document
// and signed checkpoint, fetches its log in the node's order, replays every
// entry into a fresh in-memory replica (decoding, signatures, causal
// admission: nothing is trusted), recomputes the derived state, and checks
// that the replay reproduces the checkpoint's size and Merkle root, and
// the node's state hash when the node has not moved on meanwhile.
type VerifyCommand struct {
	main *Main
}

// Verification is what verify found.
type Verification struct {
	Node           string `json:"node"`
	NodeKey        string `json:"node_key"`
	Session        string `json:"session"`
	CheckpointSize uint64 `json:"checkpoint_size"`
	CheckpointRoot string `json:"checkpoint_root"`
	SignatureOK    bool   `json:"checkpoint_signature_ok"`
	Replayed       int    `json:"replayed"`
	Refused        int    `json:"refused"`
	ReplayRoot     string `json:"replay_root"`
	RootMatches    bool   `json:"root_matches"`
	StateHash      string `json:"state_hash"`
	NodeStateHash  string `json:"node_state_hash,omitempty"`
	StateCompared  bool   `json:"state_compared"`
	StateMatches   bool   `json:"state_matches"`
	FirstRefusal   string `json:"first_refusal,omitempty"`
	// Problems name what the node served wrong: altered, removed or
	// reordered entries, checkpoints the log does not reproduce, history
	// rewritten between checkpoints (verifycheck.go).
	Problems        []string `json:"problems,omitempty"`
	Receipts        int      `json:"receipts_checked,omitempty"` // -receipt files checked (problems name the withheld ones)
	OK              bool     `json:"ok"`
	ConformanceNote string   `json:"conformance_level"`
	// With -state (verifystate.go): first_seen, consistent or
	// fork_detected, against the checkpoint remembered from earlier runs.
	History    string `json:"history,omitempty"`
	SeenSize   uint64 `json:"seen_size,omitempty"`
	SeenRoot   string `json:"seen_root,omitempty"`
	ForkDetail string `json:"fork_detail,omitempty"`
}

var errVerify = errors.New("verification failed")

func (c *VerifyCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("verify", "verify [-node URL] [-session ID] [-since FILE] [-state FILE] [-receipt FILE]... [-json] [URL]")
	node := fs.String("node", defaultNode(), nodeHelp+" (a URL argument does the same)")
	session := fs.String("session", "", "session id (default: the node's only session)")
	since := fs.String("since", "", "a checkpoint saved earlier (the /checkpoint answer): the log must still extend it")
	asJSON := fs.Bool("json", false, "print JSON")
	state := fs.String("state", "", "state `file` remembering the checkpoints verified; later runs check the node's history extends them (fork_detected)")
	var receipts listFlag
	fs.Var(&receipts, "receipt", "a receipt `file` this node signed (the POST /transactions answer, or the receipt alone), repeatable: its entry must be in the log at its log_index, its refusal in the refusal log at its refusal_index (S10: withholding)")
	if err := parse(fs, args); err != nil {
		return err
	}
	target := *node
	switch fs.NArg() {
	case 0:
	case 1:
		target = fs.Arg(0)
	default:
		fs.Usage()
		return errUsage
	}
	var earlier *replica.Checkpoint
	if *since != "" {
		cp, err := readCheckpointFile(*since)
		if err != nil {
			return fmt.Errorf("-since: %w", err)
		}
		earlier = &cp
	}
	rcs, err := readReceipts(receipts)
	if err != nil {
		return err
	}
	v, err := c.verify(ctx, target, *session, earlier, *state, rcs)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(c.main.Stdout).Encode(v); err != nil {
			return err
		}
	} else {
		c.print(v)
	}
	if !v.OK {
		return errVerify
	}
	return nil
}

func (c *VerifyCommand) verify(ctx context.Context, node, session string, earlier *replica.Checkpoint, statePath string, receipts []namedReceipt) (*Verification, error) {
	client := &httpapi.Client{BaseURL: node, Session: session}
	var capa httpapi.Capability
	if err := client.Get(ctx, "/.well-known/oth", nil, &capa); err != nil {
		return nil, fmt.Errorf("capability document: %w", err)
	}
	var cpa httpapi.CheckpointAnswer
	if err := client.Get(ctx, "/checkpoint", nil, &cpa); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	client.Session = cpa.Session
	cp, err := httpapi.DecodeCheckpoint(cpa.Checkpoint)
	if err != nil {
		return nil, err
	}
	v := &Verification{Node: node, NodeKey: capa.NodeKey.String(), Session: cpa.Session, CheckpointSize: cp.Size,
		CheckpointRoot: cp.Root.String(), ConformanceNote: capa.ConformanceLevel}
	v.SignatureOK = cp.Verify() == nil && cp.Node == capa.NodeKey && (cp.Legacy || cp.Space == cpa.Session)
	// The session the replay reads back; a node that names none by a
	// well-formed id gives the zero ID, which the replica holds nothing of.
	sid, _ := dag.ParseID(cpa.Session)

	// A fresh replica with a throwaway key: nothing of the node is trusted.
	key, err := dag.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	rep, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: key})
	if err != nil {
		return nil, err
	}
	defer rep.Close()
	bar := newProgress(c.main.Stderr, "verify", int(cp.Size))
	q := url.Values{"limit": {strconv.Itoa(httpapi.MaxLogLimit)}}
	lc := newLogCheck()
	for {
		var p httpapi.LogPage
		if err := client.Get(ctx, "/log", q, &p); err != nil {
			return nil, fmt.Errorf("log: %w", err)
		}
		subs := make([]replica.Submission, len(p.Entries))
		for i, e := range p.Entries {
			lc.entry(e)
			subs[i] = replica.Submission{Envelope: e.Envelope}
			for _, a := range e.Attachments {
				obj, err := dag.AttachmentObject(a)
				if err != nil {
					return nil, fmt.Errorf("log: position %d: %w", e.Position, err)
				}
				subs[i].Attachments = append(subs[i].Attachments, obj)
			}
		}
		outs, err := rep.Ingest(ctx, subs)
		if err != nil {
			return nil, err
		}
		for i, o := range outs {
			v.Replayed++
			if o.Status != replica.Accepted {
				v.Refused++
				if v.FirstRefusal == "" {
					v.FirstRefusal = fmt.Sprintf("position %d (%s): %s %s %s", p.Entries[i].Position, p.Entries[i].Tx, o.Status, o.Code, o.Detail)
				}
			}
		}
		bar.set(v.Replayed, int(cp.Size))
		if p.Next == nil {
			break
		}
		q.Set("after", *p.Next)
	}
	bar.done()
	// The replay applied the entries in the node's order, so the first
	// Size entries of its log are the node's checkpointed prefix.
	ids, err := rep.Log(ctx, sid, 0, int(cp.Size))
	if err != nil && !errors.Is(err, replica.ErrUnknownSpace) {
		return nil, err
	}
	if uint64(len(ids)) == cp.Size {
		root := replica.MerkleRoot(ids)
		v.ReplayRoot = root.String()
		v.RootMatches = root == cp.Root
	}
	// Every checkpoint seen must be a prefix of the one log served: the
	// one read first, one read again now, and one saved earlier.
	if earlier != nil {
		lc.checkpointAgainst(*earlier, capa.NodeKey, "the earlier checkpoint (-since)")
	}
	lc.checkpointAgainst(cp, capa.NodeKey, "the checkpoint read first")
	var again httpapi.CheckpointAnswer
	if err := client.Get(ctx, "/checkpoint", nil, &again); err == nil {
		if cp2, err := httpapi.DecodeCheckpoint(again.Checkpoint); err == nil && (cp2.Size != cp.Size || cp2.Root != cp.Root) {
			if cp2.Size < cp.Size {
				lc.fail("the checkpoint read last (size %d) is smaller than the one read first (size %d): the log shrank", cp2.Size, cp.Size)
			}
			lc.checkpointAgainst(cp2, capa.NodeKey, "the checkpoint read last")
		}
	}
	for _, rc := range receipts {
		lc.receipt(ctx, client, capa.NodeKey, rc)
	}
	v.Receipts = len(receipts)
	v.Problems = lc.problems
	st, h, err := rep.State(ctx, sid)
	if err == nil {
		v.StateHash = h.String()
	}
	var sa httpapi.SessionAnswer
	if err := client.Get(ctx, "/sessions/"+v.Session, nil, &sa); err == nil && st != nil && sa.State != nil && sa.State.Entries == st.Entries {
		v.NodeStateHash, v.StateCompared = sa.StateHash.String(), true
		v.StateMatches = v.NodeStateHash == v.StateHash
	}
	v.OK = v.SignatureOK && v.Refused == 0 && v.RootMatches && (!v.StateCompared || v.StateMatches) && len(v.Problems) == 0
	if statePath != "" {
		if err := c.checkHistory(ctx, statePath, client, rep, v, cp); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (c *VerifyCommand) print(v *Verification) {
	w := c.main.Stdout
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "FAIL"
	}
	fmt.Fprintf(w, "node     %s (%s, claims %s)\n", v.Node, v.NodeKey, v.ConformanceNote)
	fmt.Fprintf(w, "session  %s\n", v.Session)
	fmt.Fprintf(w, "%s checkpoint signature (size %d, root %s)\n", mark(v.SignatureOK), v.CheckpointSize, v.CheckpointRoot)
	fmt.Fprintf(w, "%s replayed %d entries, %d refused\n", mark(v.Refused == 0), v.Replayed, v.Refused)
	if v.FirstRefusal != "" {
		fmt.Fprintf(w, "     first refusal: %s\n", v.FirstRefusal)
	}
	fmt.Fprintf(w, "%s checkpoint root reproduced (%s)\n", mark(v.RootMatches), v.ReplayRoot)
	if v.StateCompared {
		fmt.Fprintf(w, "%s derived state hash %s\n", mark(v.StateMatches), v.StateHash)
	} else {
		fmt.Fprintf(w, "skip derived state %s (the node's log moved on while verifying)\n", v.StateHash)
	}
	if v.Receipts > 0 && len(v.Problems) == 0 {
		fmt.Fprintf(w, "ok   %d receipts: each entry in the log, each refusal in the refusal log\n", v.Receipts)
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "FAIL %s\n", p)
	}
	switch v.History {
	case "first_seen":
		fmt.Fprintf(w, "ok   first run against this node and session: checkpoint remembered\n")
	case "consistent":
		fmt.Fprintf(w, "ok   history extends the checkpoint seen before (size %d, root %s)\n", v.SeenSize, v.SeenRoot)
	case CodeForkDetected:
		fmt.Fprintf(w, "FAIL %s: %s\n", CodeForkDetected, v.ForkDetail)
	}
	if v.OK {
		fmt.Fprintln(w, "verified")
	}
}
