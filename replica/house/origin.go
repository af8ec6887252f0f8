package house

// This file derives the legislative footprint (D36) for an MR's fact
// sheet: which nodes of its patch carry text that a non-member or group
// opinion proposed, where the opinion is a causal ancestor of the
// branch.append that introduced that text.

import (
	"context"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/statute"
)

// changedHashes returns the node hashes of change c's result that its
// first parent's snapshot does not have at the same nid (all of them for
// a root change).
func (h *House) changedHashes(c dag.ID) []dag.ID {
	rec, ok := h.changes[c]
	if !ok {
		// A proposed change on no branch: the object the opinion's
		// admission made sure of (read while the object source is
		// valid, at admission), applied to its first parent.
		raw, err := h.objs.Object(context.Background(), c)
		if err != nil {
			return nil
		}
		ch, _, _, err := statute.DecodeChange(raw)
		if err != nil || len(ch.Parents) == 0 {
			return nil
		}
		base, err := h.tree(ch.Parents[0])
		if err != nil {
			return nil
		}
		out, err := ch.Verify(base)
		if err != nil {
			return nil
		}
		rec = &changeRec{c: ch, tree: out}
	}
	var base *statute.Tree
	if len(rec.c.Parents) > 0 {
		base, _ = h.tree(rec.c.Parents[0])
	}
	var out []dag.ID
	rec.tree.Walk(func(n statute.Node) bool {
		nh, _ := rec.tree.NodeHash(n.NID)
		if base != nil {
			if bh, ok := base.NodeHash(n.NID); ok && bh == nh {
				return true
			}
		}
		out = append(out, nh)
		return true
	})
	return out
}

// Proposals returns the fact sheet's origin inputs for merge MR mr: each
// accepted opinion by a non-member kind or a group that proposes changes,
// with the node hashes of those changes that the MR's source history
// introduced in a branch.append having the opinion in its causal past.
func (h *House) Proposals(mr dag.ID) []statute.Proposal {
	info := h.mrs[mr]
	if info == nil || info.body.Kind != "merge" || len(h.ops.proposers) == 0 {
		return nil
	}
	// The appends that brought each change.
	appendOf := map[dag.ID]int32{}
	for g := range h.gd {
		if h.gd[g].typ == dag.TxBranchAppend {
			if _, ok := appendOf[h.gd[g].app.Change]; !ok {
				appendOf[h.gd[g].app.Change] = h.gov[g]
			}
		}
	}
	// Hash → the appends on the source's history that introduced it.
	introduced := map[dag.ID][]int32{}
	seen := map[dag.ID]bool{}
	stack := []dag.ID{info.body.Source.Head}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		rec, ok := h.changes[c]
		if !ok {
			continue
		}
		if e, ok := appendOf[c]; ok {
			for _, nh := range h.changedHashes(c) {
				introduced[nh] = append(introduced[nh], e)
			}
		}
		stack = append(stack, rec.c.Parents...)
	}
	var out []statute.Proposal
	for _, ri := range h.ops.proposers {
		rec := h.ops.recs.at(ri)
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil {
			continue
		}
		p := statute.Proposal{Opinion: rec.id, Author: rec.author.String(), AuthorKind: o.AuthorKind}
		if o.OnBehalfOf != "" {
			p.OnBehalfOf = "group:" + o.OnBehalfOf
		}
		for _, c := range o.Proposes {
			_, ok := h.changes[c]
			var hs []dag.ID
			if ok {
				hs = h.changedHashes(c)
			} else {
				hs = h.ops.proposed[rec.id][c]
			}
			for _, nh := range hs {
				for _, e := range introduced[nh] {
					ent := &h.ents[e]
					if len(h.ancestorsMissing(h.par[ent.pOff:ent.pOff+ent.pLen], []int32{rec.ent})) == 0 {
						p.NodeHashes = append(p.NodeHashes, nh)
						break
					}
				}
			}
		}
		if len(p.NodeHashes) > 0 {
			slices.SortFunc(p.NodeHashes, dag.ID.Compare)
			p.NodeHashes = slices.Compact(p.NodeHashes)
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b statute.Proposal) int { return a.Opinion.Compare(b.Opinion) })
	return out
}
