package statute

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// The checks of 30k §6 item 5, in the order /checks lists them. These are
// check names, not error codes: a failing structure check blocks the MR,
// the others are warnings that never affect evaluation.
const (
	CheckStructure               = "structure"
	CheckReferences              = "references"
	CheckDefinitions             = "definitions"
	CheckReferenceCycles         = "reference_cycles"
	CheckApprop                  = "approp_unmarked"
	CheckFiscalHint              = "fiscal_hint"
	CheckEffectiveBeforeFeasible = "effective_before_feasible"
)

// CheckNames returns every check name in report order.
func CheckNames() []string {
	return []string{CheckStructure, CheckReferences, CheckDefinitions, CheckReferenceCycles,
		CheckApprop, CheckFiscalHint, CheckEffectiveBeforeFeasible}
}

// Status is a check's outcome.
type Status string

const (
	// StatusPass: nothing to report.
	StatusPass Status = "pass"
	// StatusWarn: a warning check found something; shown, never blocking.
	StatusWarn Status = "warn"
	// StatusBlock: structure failed; the MR cannot be approved.
	StatusBlock Status = "block"
	// StatusSkipped: the merged target could not be built (structure
	// blocks), so a check on it was not computed.
	StatusSkipped Status = "skipped"
)

// Message is one finding of a check: the nids involved, sorted, and for
// structure failures that have one the 30k error code (for example
// unpublished_reference, jurisdiction_unknown).
type Message struct {
	Code   dag.Code `json:"code,omitempty"`
	Detail string   `json:"detail"`
	NIDs   []string `json:"nids"`
}

// CheckResult is one named check.
type CheckResult struct {
	Name     string    `json:"name"`
	Status   Status    `json:"status"`
	Messages []Message `json:"messages"`
}

// Checks is the /checks view of an MR (30k §6 item 5).
type Checks struct {
	MR            dag.ID        `json:"mr"`
	Checks        []CheckResult `json:"checks"`
	Blocked       bool          `json:"blocked"`
	Authoritative bool          `json:"authoritative"` // always false (D45)
}

// Effective is an MR's effective field (D43). The zero value is on_merge.
type Effective struct {
	Dated bool // {"type":"date"}; else {"type":"on_merge"}
	Date  Date // when Dated
}

// Feasibility is the part of an accepted feasibility opinion (D70) the
// checks and fact sheet need.
type Feasibility struct {
	Opinion  dag.ID
	Nodes    []string
	Earliest Date
}

// Env is what checks and the fact sheet know about the session and the MR
// beyond the trees: all of it comes from the caller's derived state at the
// MR's causal point.
type Env struct {
	MR      dag.ID
	Profile *Profile
	// Jurisdictions are the codes the session declares (D73).
	Jurisdictions []string
	// Published reports whether an object is published in the session;
	// nil means nothing is (every sha256 reference in text fails).
	Published func(dag.ID) bool
	Fiscal    bool
	Effective Effective
	// Accepted opinions on the MR (empty until L2 opinions exist).
	Feasibility []Feasibility
}

// Review is an MR's merge as the checks and the fact sheet see it: the
// target head's snapshot, the patch ops and the snapshot they yield.
type Review struct {
	Target *Tree
	Ops    []Op
	// Result is nil when the ops do not apply; Err then says why.
	Result *Tree
	Err    error
	diff   *Diff
}

// NewReview applies ops to target. A failure is kept in Err, not returned:
// it is what the structure check reports.
func NewReview(target *Tree, ops []Op) *Review {
	r := &Review{Target: target, Ops: ops}
	r.Result, r.Err = Apply(target, ops)
	return r
}

// ReviewOf is a Review for a patch already applied (Derive's Result).
func ReviewOf(target *Tree, p *Patch) *Review {
	return &Review{Target: target, Ops: p.Ops, Result: p.Result}
}

// Diff returns the structural diff from the target to the merged result
// (nil when the result could not be built).
func (r *Review) Diff() *Diff {
	if r.Result == nil {
		return nil
	}
	if r.diff == nil {
		r.diff = Compare(r.Target, r.Result)
	}
	return r.diff
}

// patchNodes are the nodes the MR adds or modifies, as they stand after
// the merge: "the nodes in the MR" for the text checks.
func (r *Review) patchNodes() []*node {
	d := r.Diff()
	nids := append(append([]string(nil), d.Added...), d.Modified...)
	slices.Sort(nids)
	nids = slices.Compact(nids)
	out := make([]*node, len(nids))
	for i, nid := range nids {
		out[i] = r.Result.nodes[nid]
	}
	return out
}

// RunChecks computes every check of §6 item 5 on the target as it would be
// after the merge.
func RunChecks(r *Review, env Env) *Checks {
	out := &Checks{MR: env.MR}
	if r.Result == nil {
		out.Checks = append(out.Checks, CheckResult{Name: CheckStructure, Status: StatusBlock,
			Messages: []Message{{Detail: "result does not verify: " + r.Err.Error(), NIDs: errNIDs(r.Err)}}})
		for _, n := range CheckNames()[1:] {
			out.Checks = append(out.Checks, CheckResult{Name: n, Status: StatusSkipped, Messages: []Message{}})
		}
		out.Blocked = true
		return out
	}
	add := func(name string, ms []Message, bad Status) {
		st := StatusPass
		if len(ms) > 0 {
			st = bad
		}
		if ms == nil {
			ms = []Message{}
		}
		out.Checks = append(out.Checks, CheckResult{Name: name, Status: st, Messages: ms})
	}
	sc := scanTree(r.Result, env)
	add(CheckStructure, sc.structure, StatusBlock)
	out.Blocked = len(sc.structure) > 0
	add(CheckReferences, sc.brokenRefs(r.Result), StatusWarn)
	add(CheckDefinitions, sc.defConflicts(r.Result), StatusWarn)
	add(CheckReferenceCycles, sc.refCycles(r.Result), StatusWarn)
	add(CheckApprop, approp(r, env), StatusWarn)
	add(CheckFiscalHint, fiscalHint(r, env), StatusWarn)
	add(CheckEffectiveBeforeFeasible, effectiveBeforeFeasible(r.Result, env), StatusWarn)
	return out
}

func errNIDs(err error) []string {
	var ae *ApplyError
	if errors.As(err, &ae) && ae.NID != "" {
		return []string{ae.NID}
	}
	return []string{}
}

// Structure is the structure check on a whole tree: every node's kind and
// nesting conform to the profile (a nil profile is one failure with code
// profile_unknown, as the session must name one), and every node's
// markers are well formed, at
// most one of each, with declared jurisdiction codes and no reference to
// unpublished material (D56). Unique nids and valid parents hold for every
// Tree by construction. The seed snapshot of session.create must pass it.
func Structure(t *Tree, env Env) []Message {
	return scanTree(t, env).structure
}

// scan is one pass over a whole tree collecting what the whole-tree checks
// need: structure messages, [[ref:]] edges and [[def:]] markers, in
// document order. One pass instead of one per check: at 100,000 nodes the
// map lookups of a walk are most of a check's cost.
type scan struct {
	structure []Message
	refs      []RefEdge            // every [[ref:]] edge, in document order
	defs      map[string][]defSite // term -> definers in document order
	refNodes  []string             // nids with refs, in document order
}

type defSite struct{ nid, scope string }

func scanTree(t *Tree, env Env) *scan {
	sc := &scan{defs: map[string][]defSite{}}
	p := env.Profile
	if p == nil {
		sc.structure = append(sc.structure, Message{Code: dag.CodeProfileUnknown, Detail: "the session names no known structure profile", NIDs: []string{t.root}})
	}
	type item struct{ n, parent *node }
	if t.root == "" {
		return sc
	}
	stack := []item{{t.nodes[t.root], nil}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		for i := len(n.children) - 1; i >= 0; i-- {
			stack = append(stack, item{t.nodes[n.children[i]], n})
		}
		if p != nil {
			if m, bad := p.conformNode(n, it.parent); bad {
				sc.structure = append(sc.structure, m)
			}
		}
		m := n.marks
		if m == noMarkers {
			continue
		}
		for _, bad := range m.Malformed {
			sc.structure = append(sc.structure, Message{Detail: "malformed marker " + bad, NIDs: []string{n.nid}})
		}
		for _, name := range markerNames {
			// §4 "at most one of each marker" is not applied to cross-
			// references: a provision may cite several others, and §6's
			// references check reads "every [[ref:nid]]" (docs/deviations.md).
			if c := m.count(name); c > 1 && name != MarkRef {
				sc.structure = append(sc.structure, Message{Detail: fmt.Sprintf("%d [[%s:]] markers; a node may carry at most one", c, name), NIDs: []string{n.nid}})
			}
		}
		for _, codes := range m.Applies {
			for _, c := range codes {
				if !slices.Contains(env.Jurisdictions, c) {
					sc.structure = append(sc.structure, Message{Code: dag.CodeJurisdictionUnknown, Detail: fmt.Sprintf("jurisdiction %q is not declared by the session", c), NIDs: []string{n.nid}})
				}
			}
		}
		for _, h := range m.Hashes {
			if env.Published == nil || !env.Published(h) {
				sc.structure = append(sc.structure, Message{Code: dag.CodeUnpublishedReference, Detail: fmt.Sprintf("references %s, which is not published in the session", h), NIDs: []string{n.nid}})
			}
		}
		if len(m.Refs) > 0 {
			sc.refNodes = append(sc.refNodes, n.nid)
		}
		for _, to := range m.Refs {
			sc.refs = append(sc.refs, RefEdge{n.nid, to})
		}
		for _, term := range m.Defs {
			scope := n.nid
			if it.parent != nil {
				scope = it.parent.nid
			}
			sc.defs[term] = append(sc.defs[term], defSite{n.nid, scope})
		}
	}
	return sc
}

func (sc *scan) brokenRefs(t *Tree) []Message {
	var out []Message
	for _, e := range sc.refs {
		if !t.Has(e.To) {
			out = append(out, Message{Detail: fmt.Sprintf("[[ref:%s]] does not resolve", e.To), NIDs: sortedPair(e.From, e.To)})
		}
	}
	return out
}

func sortedPair(a, b string) []string {
	if a == b {
		return []string{a}
	}
	if b < a {
		a, b = b, a
	}
	return []string{a, b}
}

// scopeOf returns the scope root of a definition made in nid: its parent,
// or the root itself for the root.
func scopeOf(t *Tree, nid string) string {
	if p := t.nodes[nid].parent; p != "" {
		return p
	}
	return nid
}

// TermID returns the stable id of a definition (D29):
// "term:<scope nid>#<term>".
func TermID(scope, term string) string { return "term:" + scope + "#" + term }

func isAncestorOrSelf(t *Tree, a, b string) bool {
	for x := b; x != ""; x = t.nodes[x].parent {
		if x == a {
			return true
		}
	}
	return false
}

func (sc *scan) defConflicts(t *Tree) []Message {
	var out []Message
	for _, term := range sortedKeys(sc.defs) {
		ds := sc.defs[term]
		for i := 0; i < len(ds); i++ {
			for j := i + 1; j < len(ds); j++ {
				a, b := ds[i], ds[j]
				if t.nodes[a.nid].text == t.nodes[b.nid].text {
					continue
				}
				if isAncestorOrSelf(t, a.scope, b.scope) || isAncestorOrSelf(t, b.scope, a.scope) {
					out = append(out, Message{Detail: fmt.Sprintf("term %q is defined differently in overlapping scopes (%s, %s)", term, TermID(a.scope, term), TermID(b.scope, term)), NIDs: sortedPair(a.nid, b.nid)})
				}
			}
		}
	}
	return out
}

// refCycles finds the strongly connected components of the [[ref:]] graph
// that contain a cycle (Tarjan's algorithm, iterative), each reported once
// with its nids sorted; reports are ordered by their first nid. Only nodes
// that carry refs can be on a cycle, so edges to other nodes are dropped
// and the graph is indexed by position, not by nid.
func (sc *scan) refCycles(t *Tree) []Message {
	idx := make(map[string]int32, len(sc.refNodes))
	for i, nid := range sc.refNodes {
		idx[nid] = int32(i)
	}
	n := len(sc.refNodes)
	start := make([]int32, n+1) // edges of node i: adj[start[i]:start[i+1]]
	var adj []int32
	e := 0
	for i, nid := range sc.refNodes {
		start[i] = int32(len(adj))
		for ; e < len(sc.refs) && sc.refs[e].From == nid; e++ {
			if j, ok := idx[sc.refs[e].To]; ok {
				adj = append(adj, j)
			}
		}
	}
	start[n] = int32(len(adj))
	const unseen = -1
	index := make([]int32, n)
	low := make([]int32, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = unseen
	}
	var stack []int32
	var out []Message
	next := int32(0)
	type frame struct{ v, e int32 }
	for s := 0; s < n; s++ {
		if index[s] != unseen {
			continue
		}
		call := []frame{{int32(s), start[s]}}
		index[s], low[s] = next, next
		next++
		stack = append(stack, int32(s))
		on[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.e < start[f.v+1] {
				w := adj[f.e]
				f.e++
				if index[w] == unseen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, start[w]})
				} else if on[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []string
			self := false
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, sc.refNodes[w])
				if w == v {
					break
				}
			}
			for k := start[v]; k < start[v+1]; k++ {
				self = self || adj[k] == v
			}
			if len(comp) > 1 || self {
				slices.Sort(comp)
				out = append(out, Message{Detail: fmt.Sprintf("cycle of %d cross-reference(s)", len(comp)), NIDs: comp})
			}
		}
	}
	slices.SortFunc(out, func(a, b Message) int { return strings.Compare(a.NIDs[0], b.NIDs[0]) })
	return out
}

// hasDollar reports whether s has "$" followed by a digit.
func hasDollar(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '$' && s[i+1] >= '0' && s[i+1] <= '9' {
			return true
		}
	}
	return false
}

var fiscalWords = []string{"appropriat", "funds", "obligat"}

// fiscalWord returns the first of the D53 word prefixes that starts a word
// of s (case-insensitive, ASCII folding; a word starts where the previous
// character is not a letter or digit), or "".
func fiscalWord(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c != 'a' && c != 'f' && c != 'o' {
			continue
		}
		if i > 0 {
			r, _ := utf8.DecodeLastRuneInString(s[:i])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				continue
			}
		}
		for _, w := range fiscalWords {
			if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
				return w
			}
		}
	}
	return ""
}

func approp(r *Review, env Env) []Message {
	if !env.Fiscal {
		return nil
	}
	var out []Message
	for _, n := range r.patchNodes() {
		if (hasDollar(n.text) || hasDollar(n.heading)) && len(n.marks.Approps) == 0 {
			out = append(out, Message{Detail: "a dollar amount with no [[approp:]] marker", NIDs: []string{n.nid}})
		}
	}
	return out
}

func fiscalHint(r *Review, env Env) []Message {
	if env.Fiscal {
		return nil
	}
	var nids []string
	for _, n := range r.patchNodes() {
		if hasDollar(n.heading) || hasDollar(n.text) || fiscalWord(n.heading) != "" || fiscalWord(n.text) != "" {
			nids = append(nids, n.nid)
		}
	}
	if len(nids) == 0 {
		return nil
	}
	return []Message{{Detail: "declared fiscal: false, but its text mentions a dollar amount or appropriat/funds/obligat", NIDs: nids}}
}

func effectiveBeforeFeasible(t *Tree, env Env) []Message {
	fs := slices.Clone(env.Feasibility)
	slices.SortFunc(fs, func(a, b Feasibility) int { return a.Opinion.Compare(b.Opinion) })
	var out []Message
	for _, f := range fs {
		nids := slices.Clone(f.Nodes)
		slices.Sort(nids)
		nids = slices.Compact(nids)
		for _, nid := range nids {
			n, ok := t.nodes[nid]
			if !ok {
				continue
			}
			d, ok := n.marks.EffectiveDate()
			if !ok {
				if !env.Effective.Dated {
					continue
				}
				d = env.Effective.Date
			}
			if d < f.Earliest {
				out = append(out, Message{Detail: fmt.Sprintf("effective %s is before %s, the earliest date in feasibility opinion %s", d, f.Earliest, f.Opinion), NIDs: []string{nid}})
			}
		}
	}
	return out
}

// UnmarshalJSON decodes an MR's effective field: {"type":"on_merge"} or
// {"type":"date","date":"YYYY-MM-DD"}; anything else is a schema error.
func (e *Effective) UnmarshalJSON(b []byte) error {
	var w struct {
		Type *string `json:"type"`
		Date *string `json:"date"`
	}
	if err := strictUnmarshal(b, &w); err != nil || w.Type == nil {
		return schemaErr("effective is not {\"type\":\"on_merge\"} or {\"type\":\"date\",\"date\":...}")
	}
	switch {
	case *w.Type == "on_merge" && w.Date == nil:
		*e = Effective{}
	case *w.Type == "date" && w.Date != nil:
		d, err := ParseDate(*w.Date)
		if err != nil {
			return schemaErr("effective: %v", err)
		}
		*e = Effective{Dated: true, Date: d}
	default:
		return schemaErr("effective type %q with date %v", trunc(*w.Type), w.Date != nil)
	}
	return nil
}

// MarshalJSON writes the canonical form of UnmarshalJSON's input.
func (e Effective) MarshalJSON() ([]byte, error) {
	if !e.Dated {
		return []byte(`{"type":"on_merge"}`), nil
	}
	return []byte(`{"date":"` + e.Date.String() + `","type":"date"}`), nil
}
