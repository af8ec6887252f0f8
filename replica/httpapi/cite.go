package httpapi

// This file is GET /cite/{hash}?nid= (30k §5 D16, S12): a hash-pinned
// citation of a change of the session's Change DAG (an appended change, a
// merge change, the genesis change). object is always the text of the
// change's snapshot as of that hash — the subtree at nid, or the whole
// root —, never a newer version; latest is the head of the branch that
// now contains the change (the root branch first, then the others in
// name order), or null when the change is itself that head; status is
// "current" or "superseded". diff_to_latest is always null (there is no
// endpoint that diffs two arbitrary changes yet), and corrected_by is
// always empty (corrections are opinions, which this node does not accept
// yet). Other ids (MRs, opinions) are not cited yet: 404.

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
)

// CiteAnswer is GET /cite/{hash}'s answer.
type CiteAnswer struct {
	sessionLabels
	Object        *statute.NodeSpec `json:"object"`
	NID           string            `json:"nid"`
	AsOf          dag.ID            `json:"as_of"`
	Snapshot      dag.ID            `json:"snapshot"`
	Latest        *dag.ID           `json:"latest"`
	LatestBranch  *string           `json:"latest_branch"`
	DiffToLatest  *string           `json:"diff_to_latest"`
	CorrectedBy   []dag.ID          `json:"corrected_by"`
	Status        string            `json:"status"` // current | superseded
	Authoritative bool              `json:"authoritative"`
	Finality      replica.Finality  `json:"finality"`
}

func (s *Server) cite(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := dag.ParseID(r.PathValue("hash"))
	if err != nil {
		return problemf(dag.CodeSchema, "hash: %v", err)
	}
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	if _, err := s.rep.Change(ctx, space, id); err != nil {
		if errors.Is(err, dag.ErrNotFound) {
			return problemf(CodeNotFound, "%s is not a change of session %s (citations are served for changes)", id, space)
		}
		return err
	}
	t, err := s.rep.Snapshot(ctx, space, id)
	if err != nil {
		return err
	}
	spec, nid, err := s.subtree(ctx, space, id, r.URL.Query().Get("nid"))
	if err != nil {
		return err
	}
	a := CiteAnswer{sessionLabels: s.labels(ctx, space), Object: spec, NID: nid, AsOf: id, Snapshot: t.Hash(),
		CorrectedBy: []dag.ID{}, Status: "current", Finality: s.stateFinality(ctx, space)}
	st, _, err := s.rep.State(ctx, space)
	if err != nil {
		return err
	}
	bs := append([]house.BranchView(nil), st.Branches...)
	sort.SliceStable(bs, func(i, j int) bool {
		if (bs[i].Name == house.RootBranch) != (bs[j].Name == house.RootBranch) {
			return bs[i].Name == house.RootBranch
		}
		return bs[i].Name < bs[j].Name
	})
	for _, b := range bs {
		if len(b.Heads) != 1 || !s.descends(ctx, space, b.Heads[0], id) {
			continue
		}
		if b.Heads[0] != id {
			head, name := b.Heads[0], b.Name
			a.Latest, a.LatestBranch, a.Status = &head, &name, "superseded"
		}
		break
	}
	return writeJSON(w, a)
}

// descends reports whether change id is head or one of its ancestors in
// the Change DAG.
func (s *Server) descends(ctx context.Context, space string, head, id dag.ID) bool {
	seen := map[dag.ID]bool{}
	stack := []dag.ID{head}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c == id {
			return true
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		ch, err := s.rep.Change(ctx, space, c)
		if err != nil {
			continue
		}
		stack = append(stack, ch.Parents...)
	}
	return false
}
