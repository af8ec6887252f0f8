package httpapi

// This file is GET /history/{nid}?session= (30k D44): the labelled,
// unweighted legislative history of one node of the root text — every MR
// merged into the root that changed the node (its subtree differs between
// the root head before and after the merge), in the order the derived
// state executed the merges, each with the proposer's summary labelled as
// the proposer's words. The opinion lists (member opinions, group
// positions, other opinions) are always empty: this node accepts no
// opinions yet. "authoritative": false.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// HistoryItem is one merged MR of a node's history.
type HistoryItem struct {
	MR              dag.ID            `json:"mr"`
	Merge           dag.ID            `json:"merge"`
	Before          dag.ID            `json:"before"`
	Determination   dag.ID            `json:"determination"`
	ProposerSummary ProposerSummary   `json:"proposer_summary"`
	MemberOpinions  []json.RawMessage `json:"member_opinions"`
	GroupPositions  []json.RawMessage `json:"group_positions"`
	OtherOpinions   []json.RawMessage `json:"other_opinions"`
	Finality        replica.Finality  `json:"finality"`
}

// ProposerSummary is an MR's summary, labelled as its proposer's words.
type ProposerSummary struct {
	Label string `json:"label"` // "the proposer's words, not checked by this node"
	Text  string `json:"text"`
}

// HistoryAnswer is GET /history/{nid}'s answer.
type HistoryAnswer struct {
	sessionLabels
	NID           string           `json:"nid"`
	History       []HistoryItem    `json:"history"`
	Note          string           `json:"note"`
	Authoritative bool             `json:"authoritative"`
	Finality      replica.Finality `json:"finality"`
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	nid := r.PathValue("nid")
	if nid == "" || nid[0] != '/' {
		nid = "/" + nid
	}
	merges, err := s.rep.RootMerges(ctx, space)
	if err != nil {
		return err
	}
	a := HistoryAnswer{sessionLabels: s.labels(ctx, space), NID: nid, History: []HistoryItem{},
		Note: "member opinions, group positions and other opinions are empty: this node accepts no opinions yet", Finality: replica.FinalAdvisory}
	known := false
	for _, m := range merges {
		before, okB := s.specJSON(ctx, space, m.Before, nid)
		after, okA := s.specJSON(ctx, space, m.Change, nid)
		known = known || okB || okA
		if okA == okB && bytes.Equal(before, after) {
			continue
		}
		mr, err := s.rep.MR(ctx, space, m.MR)
		if err != nil {
			return err
		}
		it := HistoryItem{MR: m.MR, Merge: m.Change, Before: m.Before, Determination: m.Determination,
			ProposerSummary: ProposerSummary{Label: "the proposer's words, not checked by this node", Text: mr.Summary},
			MemberOpinions:  []json.RawMessage{}, GroupPositions: []json.RawMessage{}, OtherOpinions: []json.RawMessage{}, Finality: mr.Finality}
		if it.Finality != replica.FinalAdvisory {
			a.Finality = replica.Provisional
		}
		a.History = append(a.History, it)
	}
	if !known {
		// Not in the root as it is now either: an unknown node.
		root, err := s.rep.Branch(ctx, space, "root")
		if err != nil {
			return err
		}
		if len(root.Heads) != 1 {
			return problemf(CodeNotFound, "no node %q", nid)
		}
		if _, ok := s.specJSON(ctx, space, root.Heads[0], nid); !ok {
			return problemf(CodeNotFound, "no node %q in the root text", nid)
		}
	}
	return writeJSON(w, a)
}

func (s *Server) specJSON(ctx context.Context, space string, change dag.ID, nid string) ([]byte, bool) {
	t, err := s.rep.Snapshot(ctx, space, change)
	if err != nil {
		return nil, false
	}
	spec, ok := t.Spec(nid)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(spec)
	return b, err == nil
}
