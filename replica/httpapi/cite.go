package httpapi

// This file is GET /cite/{hash}?nid= (30k §5 D16, S12): a hash-pinned
// citation of a change of the session's Change DAG (an appended change, a
// merge change, the genesis change). object is always the text of the
// change's snapshot as of that hash — the subtree at nid, or the whole
// root —, never a newer version; latest is the head of the branch that
// now contains the change (the root branch first, then the others in
// name order), or null when the change is itself that head; status is
// "current" or "superseded". diff_to_latest is null when latest is, else
// the URL of GET /cite/{hash}/diff?to=<latest>, the structural and
// unified-text diff from the cited text to the latest (citeDiff); and
// corrected_by is always empty (a change is not corrected by an opinion).
// An opinion's or an MR's diff_to_latest is null: their versions are
// records, not text.
//
// An opinion or an MR is cited too (citeRecord): the object as signed, its
// corrections (an opinion's corrected_by) and latest, the newest version
// (the end of the correction chain, or of the MRs that supersede it).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

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
	if _, err := s.view.Change(ctx, space, id); err != nil {
		if errors.Is(err, dag.ErrNotFound) {
			return s.citeRecord(w, r, space, id)
		}
		return err
	}
	t, err := s.view.Snapshot(ctx, space, id)
	if err != nil {
		return err
	}
	spec, nid, err := s.subtree(ctx, space, id, r.URL.Query().Get("nid"))
	if err != nil {
		return err
	}
	a := CiteAnswer{sessionLabels: s.labels(ctx, space), Object: spec, NID: nid, AsOf: id, Snapshot: t.Hash(),
		CorrectedBy: []dag.ID{}, Status: "current", Finality: s.stateFinality(ctx, space)}
	bs, err := s.rep.Branches(ctx, space)
	if err != nil {
		return err
	}
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
			u := citeDiffURL(space.String(), id, head, r.URL.Query().Get("nid"))
			a.DiffToLatest = &u
		}
		break
	}
	return writeJSON(w, a)
}

// descends reports whether change id is head or one of its ancestors in
// the Change DAG.
func (s *Server) descends(ctx context.Context, space dag.ID, head, id dag.ID) bool {
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
		ch, err := s.view.Change(ctx, space, c)
		if err != nil {
			continue
		}
		stack = append(stack, ch.Parents...)
	}
	return false
}

// CiteRecordAnswer is GET /cite/{hash}'s answer for an opinion or an MR:
// object is the opinion.publish body or the MR object exactly as signed
// (canonical JSON), never a newer version; latest is the newest version
// (null when the cited one is it) and status "superseded" or "current".
// An opinion's newer version is its correction: corrected_by lists the
// opinions whose corrects names it (only its author's are admitted), and
// latest follows the corrections, taking the smallest id where one
// opinion was corrected twice. An MR's newer version is the MR that
// supersedes it (status superseded), followed the same way; corrected_by
// is empty (opinions correct opinions).
type CiteRecordAnswer struct {
	sessionLabels
	Kind   string          `json:"kind"` // opinion | mr
	Object json.RawMessage `json:"object"`
	AsOf   dag.ID          `json:"as_of"`
	Latest *dag.ID         `json:"latest"`
	// DiffToLatest is always null: the versions of an opinion or an MR
	// are records, not texts (the newer one is GET /cite/{latest}).
	DiffToLatest  *string          `json:"diff_to_latest"`
	CorrectedBy   []dag.ID         `json:"corrected_by"`
	Status        string           `json:"status"`
	Authoritative bool             `json:"authoritative"`
	Finality      replica.Finality `json:"finality"`
}

// maxCiteChain bounds how far latest is followed.
const maxCiteChain = 1000

func (s *Server) citeRecord(w http.ResponseWriter, r *http.Request, space dag.ID, id dag.ID) error {
	ctx := r.Context()
	a := CiteRecordAnswer{sessionLabels: s.labels(ctx, space), AsOf: id, CorrectedBy: []dag.ID{}, Status: "current"}
	latest := func(next func(dag.ID) (dag.ID, bool)) {
		cur, seen := id, map[dag.ID]bool{id: true}
		for i := 0; i < maxCiteChain; i++ {
			n, ok := next(cur)
			if !ok || seen[n] {
				break
			}
			seen[n], cur = true, n
		}
		if cur != id {
			a.Latest, a.Status = &cur, "superseded"
		}
	}
	if o, err := s.view.Opinion(ctx, space, id); err == nil {
		a.Kind, a.Object, a.CorrectedBy, a.Finality = "opinion", o.Body, o.CorrectedBy, o.Finality
		latest(func(c dag.ID) (dag.ID, bool) {
			o, err := s.view.Opinion(ctx, space, c)
			if err != nil || len(o.CorrectedBy) == 0 {
				return dag.ID{}, false
			}
			return o.CorrectedBy[0], true // sorted by id
		})
		return writeJSON(w, a)
	} else if !errors.Is(err, dag.ErrNotFound) {
		return err
	}
	mr, err := s.view.MR(ctx, space, id)
	if errors.Is(err, dag.ErrNotFound) {
		return problemf(CodeNotFound, "%s is not a change, an opinion or an MR of session %s", id, space)
	}
	if err != nil {
		return err
	}
	// The MR object is the body of its mr.open (its id is the body's
	// hash): the first open's envelope holds it as signed.
	if len(mr.OpenedBy) == 0 {
		return fmt.Errorf("httpapi: MR %s has no mr.open", id)
	}
	e, err := s.n.Get(ctx, mr.OpenedBy[0])
	if err != nil {
		return fmt.Errorf("httpapi: mr.open of %s: %w", id, err)
	}
	var env struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(e.Data, &env); err != nil {
		return fmt.Errorf("httpapi: mr.open of %s: %w", id, err)
	}
	obj := env.Body
	a.Kind, a.Object, a.Finality = "mr", obj, mr.Finality
	all, err := s.view.MRs(ctx, space)
	if err != nil {
		return err
	}
	by := map[dag.ID]dag.ID{} // superseded -> the smallest MR id superseding it
	for _, m := range all {   // sorted by id
		if m.Supersedes != nil {
			if _, ok := by[*m.Supersedes]; !ok {
				by[*m.Supersedes] = m.ID
			}
		}
	}
	latest(func(c dag.ID) (dag.ID, bool) { n, ok := by[c]; return n, ok })
	return writeJSON(w, a)
}

// citeDiffURL is the diff_to_latest of a change's citation: the path of
// GET /cite/{from}/diff naming the session, the latest and the subtree.
func citeDiffURL(space string, from, to dag.ID, nid string) string {
	q := url.Values{"session": {space}, "to": {to.String()}}
	if nid != "" {
		q.Set("nid", nid)
	}
	return Base + "/cite/" + from.String() + "/diff?" + q.Encode()
}

// CiteDiff is GET /cite/{hash}/diff's answer: the diff from the text cited
// at from (the subtree at nid, or the whole snapshot) to the same subtree
// at to, in the form of an MR's /diff (statute.Diff: the nids added,
// removed, modified and moved, each list sorted by code point, and the
// unified text, docs/http-api.md). It is byte-identical on every replica
// holding the two changes.
type CiteDiff struct {
	sessionLabels
	From          dag.ID            `json:"from"`
	To            dag.ID            `json:"to"`
	NID           string            `json:"nid"`
	Nodes         statute.DiffNodes `json:"nodes"`
	Unified       string            `json:"unified"`
	Authoritative bool              `json:"authoritative"`
	Finality      replica.Finality  `json:"finality"`
}

// citeDiff is GET /cite/{hash}/diff?to=&nid=: hash and to are changes of
// the session's Change DAG; nid (default: the root) must be in hash's
// snapshot.
func (s *Server) citeDiff(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	from, err := dag.ParseID(r.PathValue("hash"))
	if err != nil {
		return problemf(dag.CodeSchema, "hash: %v", err)
	}
	to, err := dag.ParseID(r.URL.Query().Get("to"))
	if err != nil {
		return problemf(dag.CodeSchema, "to: %v", err)
	}
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	for _, c := range []dag.ID{from, to} {
		if _, err := s.view.Change(ctx, space, c); err != nil {
			if errors.Is(err, dag.ErrNotFound) {
				return problemf(CodeNotFound, "%s is not a change of session %s", c, space)
			}
			return err
		}
	}
	ft, err := s.view.Snapshot(ctx, space, from)
	if err != nil {
		return err
	}
	before, nid, err := specAt(ft, r.URL.Query().Get("nid"))
	if err != nil {
		return err
	}
	tt, err := s.view.Snapshot(ctx, space, to)
	if err != nil {
		return err
	}
	// The whole texts are compared, so that a node moved out of the
	// subtree shows as moved, not removed; then the diff is cut to the
	// nodes of the subtree at either end.
	v := statute.Compare(ft, tt).View("")
	if nid != ft.Root() {
		in := map[string]bool{}
		var walk func(n *statute.NodeSpec)
		walk = func(n *statute.NodeSpec) {
			in[n.NID] = true
			for i := range n.Children {
				walk(&n.Children[i])
			}
		}
		walk(before)
		if after, ok := tt.Spec(nid); ok {
			walk(after)
		}
		v.Nodes, v.Unified = cutDiff(v.Nodes, v.Unified, in)
	}
	return writeJSON(w, CiteDiff{sessionLabels: s.labels(ctx, space), From: from, To: to, NID: nid, Nodes: v.Nodes, Unified: v.Unified,
		Finality: s.stateFinality(ctx, space)})
}

// cutDiff keeps of a diff the nodes in keep: in each list, and in the
// unified text the blocks whose header "@@ <nid> (" names one (no other
// line starts with "@@ ": node lines start with "-", "+", " " or "~").
func cutDiff(nodes statute.DiffNodes, unified string, keep map[string]bool) (statute.DiffNodes, string) {
	cut := func(l []string) []string {
		out := []string{}
		for _, n := range l {
			if keep[n] {
				out = append(out, n)
			}
		}
		return out
	}
	nodes = statute.DiffNodes{Added: cut(nodes.Added), Modified: cut(nodes.Modified), Moved: cut(nodes.Moved), Removed: cut(nodes.Removed)}
	var b strings.Builder
	on := false
	for _, line := range strings.SplitAfter(unified, "\n") {
		if rest, ok := strings.CutPrefix(line, "@@ "); ok {
			n, _, _ := strings.Cut(rest, " (")
			on = keep[n]
		}
		if on {
			b.WriteString(line)
		}
	}
	return nodes, b.String()
}
