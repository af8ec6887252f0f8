package httpapi

// This file is GET /history/{nid}?session= (30k D44): the labelled,
// unweighted legislative history of one node — every MR merged into any
// branch (the root and the others alike) that changed the node (its
// subtree differs between the branch head before and after the merge), in
// the order the derived state executed the merges (merge order), each with
// the branch it merged into and the proposer's summary labelled as
// the proposer's words, and the opinions on the MR (subject type mr) in
// three labelled lists by author_kind: member opinions ("member"), group
// positions ("group"), other opinions (every other kind), each sorted by
// id, nothing ranked, weighted or filtered by stance. An MR's lists hold
// at most HistoryOpinionLimit opinions (the first by id); opinions_next
// then names where GET /opinions goes on. "authoritative": false.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/view"
)

// HistoryItem is one merged MR of a node's history.
type HistoryItem struct {
	MR dag.ID `json:"mr"`
	// Branch is the branch the MR merged into.
	Branch          string           `json:"branch"`
	Merge           dag.ID           `json:"merge"`
	Before          dag.ID           `json:"before"`
	Determination   dag.ID           `json:"determination"`
	ProposerSummary ProposerSummary  `json:"proposer_summary"`
	MemberOpinions  []HistoryOpinion `json:"member_opinions"`
	GroupPositions  []HistoryOpinion `json:"group_positions"`
	OtherOpinions   []HistoryOpinion `json:"other_opinions"`
	// OpinionsNext is null when the lists hold every opinion on the MR,
	// else the query of GET /opinions that lists the rest.
	OpinionsNext *string          `json:"opinions_next"`
	Finality     replica.Finality `json:"finality"`
}

// HistoryOpinion is one opinion on a merged MR, as /history lists it: who
// said it and their own summary (the full opinion is GET /opinions/{id}).
type HistoryOpinion struct {
	ID         dag.ID           `json:"id"`
	Author     dag.Key          `json:"author"`
	AuthorKind string           `json:"author_kind"`
	OnBehalfOf *string          `json:"on_behalf_of"`
	Stance     string           `json:"stance"`
	Summary    string           `json:"summary"`
	Finality   replica.Finality `json:"finality"`
}

// HistoryOpinionLimit bounds the opinions /history lists per MR.
const HistoryOpinionLimit = 100

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
	merges, err := s.view.Merges(ctx, space)
	if err != nil {
		return err
	}
	a := HistoryAnswer{sessionLabels: s.labels(ctx, space), NID: nid, History: []HistoryItem{},
		Note: "member_opinions are by author_kind member, group_positions by group, other_opinions by every other kind; sorted by id, unweighted", Finality: replica.FinalAdvisory}
	known := false
	for _, m := range merges {
		before, okB := s.specJSON(ctx, space, m.Before, nid)
		after, okA := s.specJSON(ctx, space, m.Change, nid)
		known = known || okB || okA
		if okA == okB && bytes.Equal(before, after) {
			continue
		}
		mr, err := s.view.MR(ctx, space, m.MR)
		if err != nil {
			return err
		}
		it := HistoryItem{MR: m.MR, Branch: m.Branch, Merge: m.Change, Before: m.Before, Determination: m.Determination,
			ProposerSummary: ProposerSummary{Label: "the proposer's words, not checked by this node", Text: mr.Summary},
			MemberOpinions:  []HistoryOpinion{}, GroupPositions: []HistoryOpinion{}, OtherOpinions: []HistoryOpinion{}, Finality: mr.Finality}
		ops, next, err := s.view.Opinions(ctx, space, view.OpinionFilter{SubjectType: "mr", Subject: m.MR.String()}, dag.ID{}, HistoryOpinionLimit)
		if err != nil {
			return err
		}
		for _, o := range ops {
			h := HistoryOpinion{ID: o.ID, Author: o.Author, AuthorKind: o.AuthorKind, OnBehalfOf: o.OnBehalfOf, Stance: o.Stance, Summary: o.Summary, Finality: o.Finality}
			switch o.AuthorKind {
			case "member":
				it.MemberOpinions = append(it.MemberOpinions, h)
			case "group":
				it.GroupPositions = append(it.GroupPositions, h)
			default:
				it.OtherOpinions = append(it.OtherOpinions, h)
			}
			if o.Finality != replica.FinalAdvisory {
				it.Finality = replica.Provisional
			}
		}
		if next.Valid() {
			q := "subject_type=mr&subject=" + m.MR.String() + "&after=" + next.String()
			it.OpinionsNext = &q
		}
		if it.Finality != replica.FinalAdvisory {
			a.Finality = replica.Provisional
		}
		a.History = append(a.History, it)
	}
	if !known {
		// Touched by no merge, and not in the root as it is now either:
		// an unknown node.
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

func (s *Server) specJSON(ctx context.Context, space dag.ID, change dag.ID, nid string) ([]byte, bool) {
	t, err := s.view.Snapshot(ctx, space, change)
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
