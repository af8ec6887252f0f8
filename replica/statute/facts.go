package statute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Opinion-derived inputs of the fact sheet. Each is the part of an accepted
// L2 opinion the sheet needs, resolved by the caller at the MR's causal
// point; all are empty until opinions exist.

// Estimate is an accepted cost estimate on the MR (D53, D69).
type Estimate struct {
	Opinion dag.ID
	// Outlays are by_year[].outlays as written (decimal integers).
	Outlays []string
	// IfPermanent are if_permanent[].outlays, or nil when if_permanent is
	// null.
	IfPermanent []string
}

// Formalization is an accepted formalization (D28) with the nids its
// anchors point at.
type Formalization struct {
	Opinion dag.ID
	NIDs    []string
}

// Proposal is an accepted non-member or group opinion whose proposes lists
// changes, with the node hashes those changes contain, already filtered by
// the caller to opinions that are causal ancestors of the change that
// introduces each node (D36).
type Proposal struct {
	Opinion    dag.ID
	Author     string
	AuthorKind string
	OnBehalfOf string // "" is null
	NodeHashes []dag.ID
}

// RankedAbove is one entry of ranked_above_winner (D77).
type RankedAbove struct {
	Option      dag.ID `json:"option"`
	AboveWinner int    `json:"above_winner"`
	BelowWinner int    `json:"below_winner"`
}

// Prior answers the reverts question of D41: at which earlier root head
// (other than the current one) did nid last have node_hash h?
type Prior interface {
	PreviouslyIn(nid string, h dag.ID) (change dag.ID, ok bool)
}

// FactInputs are the fact sheet's inputs beyond the trees and Env.
type FactInputs struct {
	Estimates         []Estimate
	Formalizations    []Formalization
	Proposals         []Proposal
	History           Prior // nil: no earlier root heads
	VersusBase        *Diff // for a variant (D68), else nil
	VersusSuperseded  *Diff // for an MR that supersedes another (D48), else nil
	RankedAboveWinner []RankedAbove
	// Finality is the sheet's finality label; "" is "provisional".
	Finality string
}

// FactSheet is the /facts view of §6 item 6. Marshal it with
// dag.Marshal (or MarshalJSON) for the byte-identical form.
type FactSheet struct {
	// Fields are in RFC 8785 member order so that encoding/json already
	// writes canonical JSON and dag.Canonicalize only checks it.
	AnchorDrift    []AnchorDrift `json:"anchor_drift"`
	Appropriations struct {
		ByAccount []AccountTotal `json:"by_account"`
		Total     string         `json:"total"`
	} `json:"appropriations"`
	Authoritative bool       `json:"authoritative"`
	Coverage      []Coverage `json:"coverage"`
	Definitions   struct {
		Added   []string `json:"added"`
		Changed []string `json:"changed"`
		Removed []string `json:"removed"`
	} `json:"definitions"`
	EffectiveDates []EffectiveDate `json:"effective_dates"`
	EstimateTotals []EstimateTotal `json:"estimate_totals"`
	Estimates      []dag.ID        `json:"estimates"`
	Feasibility    []dag.ID        `json:"feasibility"`
	Finality       string          `json:"finality"`
	MR             dag.ID          `json:"mr"`
	Nodes          struct {
		Added    []string `json:"added"`
		Modified []string `json:"modified"`
		Moved    []string `json:"moved"`
		Removed  []string `json:"removed"`
	} `json:"nodes"`
	Numbers           []NumberChange `json:"numbers"`
	Origin            []Origin       `json:"origin"`
	RankedAboveWinner []RankedAbove  `json:"ranked_above_winner"`
	References        struct {
		Added   []RefEdge `json:"added"`
		Removed []RefEdge `json:"removed"`
	} `json:"references"`
	Reverts          []Revert   `json:"reverts"`
	Sunsets          []Sunset   `json:"sunsets"`
	VersusBase       *DiffNodes `json:"versus_base"`
	VersusSuperseded *DiffNodes `json:"versus_superseded,omitempty"`
}

// NumberChange is one entry of numbers.
type NumberChange struct {
	After  []string `json:"after"`
	Before []string `json:"before"`
	NID    string   `json:"nid"`
}

// RefEdge is a [[ref:]] edge.
type RefEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// AnchorDrift is one entry of anchor_drift.
type AnchorDrift struct {
	Formalization dag.ID   `json:"formalization"`
	NIDs          []string `json:"nids"`
}

// Sunset is one entry of sunsets.
type Sunset struct {
	Days int    `json:"days"`
	NID  string `json:"nid"`
}

// EffectiveDate is one entry of effective_dates.
type EffectiveDate struct {
	Date Date   `json:"date"`
	NID  string `json:"nid"`
}

// EstimateTotal is one entry of estimate_totals.
type EstimateTotal struct {
	AsWritten   string  `json:"as_written"`
	Estimate    dag.ID  `json:"estimate"`
	IfPermanent *string `json:"if_permanent"`
}

// DiffNodes is a structural diff as the fact sheet writes it.
type DiffNodes struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Moved    []string `json:"moved"`
	Removed  []string `json:"removed"`
}

// Coverage is one entry of coverage.
type Coverage struct {
	Applies []string `json:"applies"` // nil is null
	NID     string   `json:"nid"`
	OptIn   *string  `json:"opt_in"`
}

// AccountTotal is one entry of appropriations.by_account.
type AccountTotal struct {
	Account string `json:"account"`
	Dollars string `json:"dollars"`
	Fenced  string `json:"fenced"`
	FY      int    `json:"fy"`
}

// Origin is one entry of origin.
type Origin struct {
	Author     string  `json:"author"`
	AuthorKind string  `json:"author_kind"`
	NID        string  `json:"nid"`
	OnBehalfOf *string `json:"on_behalf_of"`
	Opinion    dag.ID  `json:"opinion"`
}

// Revert is one entry of reverts.
type Revert struct {
	NID          string `json:"nid"`
	PreviouslyIn dag.ID `json:"previously_in"`
	To           dag.ID `json:"to"`
}

// MarshalJSON writes the sheet's canonical JSON.
func (f *FactSheet) MarshalJSON() ([]byte, error) {
	type plain FactSheet
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode((*plain)(f)); err != nil {
		return nil, fmt.Errorf("statute: fact sheet: %w", err)
	}
	return dag.Canonicalize(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// ErrFacts is wrapped when an input of the fact sheet is malformed (an
// estimate amount that is not an integer).
var ErrFacts = errors.New("statute: bad fact sheet input")

// Numbers returns the numbers of s as §6 item 8 defines them: each maximal
// match of [0-9][0-9,]*(\.[0-9]+)?, as the literal string, in order.
func Numbers(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && (isDigit(s[j]) || s[j] == ',') {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j += 2
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// nodeNumbers is a node's number sequence in document order: heading, then
// text.
func nodeNumbers(n *node) []string {
	out := Numbers(n.heading)
	return append(out, Numbers(n.text)...)
}

// Facts computes the fact sheet of §6 item 6 for a reviewed merge. The
// Review's result must exist (a merge whose result does not verify has no
// fact sheet).
func Facts(r *Review, env Env, in FactInputs) (*FactSheet, error) {
	if r.Result == nil {
		return nil, fmt.Errorf("statute: no fact sheet: %w", r.Err)
	}
	d := r.Diff()
	before, after := r.Target, r.Result
	f := &FactSheet{MR: env.MR, Finality: in.Finality}
	if f.Finality == "" {
		f.Finality = "provisional"
	}
	f.Nodes.Added, f.Nodes.Removed, f.Nodes.Modified, f.Nodes.Moved = d.Added, d.Removed, d.Modified, d.Moved

	// numbers
	f.Numbers = []NumberChange{}
	for _, nid := range d.Modified {
		b, a := nodeNumbers(before.nodes[nid]), nodeNumbers(after.nodes[nid])
		if !slices.Equal(b, a) {
			f.Numbers = append(f.Numbers, NumberChange{NID: nid, Before: nonNil(b), After: nonNil(a)})
		}
	}

	// references: edges leaving nodes whose text could have changed.
	edges := func(t *Tree, nids ...[]string) map[RefEdge]bool {
		m := map[RefEdge]bool{}
		for _, l := range nids {
			for _, nid := range l {
				for _, to := range t.nodes[nid].marks.Refs {
					m[RefEdge{nid, to}] = true
				}
			}
		}
		return m
	}
	eb := edges(before, d.Modified, d.Removed)
	ea := edges(after, d.Modified, d.Added)
	f.References.Added = edgeDiff(ea, eb)
	f.References.Removed = edgeDiff(eb, ea)

	// definitions
	f.Definitions.Added, f.Definitions.Changed, f.Definitions.Removed = defChanges(before, after, d)

	// anchor drift
	f.AnchorDrift = []AnchorDrift{}
	drifted := map[string]bool{}
	for _, l := range [][]string{d.Modified, d.Removed, d.Moved} {
		for _, nid := range l {
			drifted[nid] = true
		}
	}
	for _, fm := range in.Formalizations {
		var nids []string
		for _, nid := range fm.NIDs {
			if drifted[nid] {
				nids = append(nids, nid)
			}
		}
		if len(nids) > 0 {
			slices.Sort(nids)
			f.AnchorDrift = append(f.AnchorDrift, AnchorDrift{Formalization: fm.Opinion, NIDs: slices.Compact(nids)})
		}
	}
	slices.SortFunc(f.AnchorDrift, func(a, b AnchorDrift) int { return a.Formalization.Compare(b.Formalization) })

	// per-node markers of the patch
	patch := r.patchNodes()
	f.Sunsets, f.EffectiveDates, f.Coverage = []Sunset{}, []EffectiveDate{}, []Coverage{}
	type acct struct {
		account string
		fy      int
	}
	sums := map[acct][2]*big.Int{}
	total := new(big.Int)
	for _, n := range patch {
		m := n.marks
		if days, ok := m.Sunset(); ok {
			f.Sunsets = append(f.Sunsets, Sunset{Days: days, NID: n.nid})
		}
		if date, ok := m.EffectiveDate(); ok {
			f.EffectiveDates = append(f.EffectiveDates, EffectiveDate{Date: date, NID: n.nid})
		}
		if len(m.Applies) > 0 || len(m.OptIns) > 0 {
			c := Coverage{NID: n.nid}
			if len(m.Applies) > 0 {
				c.Applies = slices.Sorted(slices.Values(m.Applies[0]))
			}
			if len(m.OptIns) > 0 {
				p := m.OptIns[0]
				c.OptIn = &p
			}
			f.Coverage = append(f.Coverage, c)
		}
		for _, ap := range m.Approps {
			k := acct{ap.Account, ap.FY}
			s, ok := sums[k]
			if !ok {
				s = [2]*big.Int{new(big.Int), new(big.Int)}
				sums[k] = s
			}
			v, _ := new(big.Int).SetString(ap.Dollars, 10)
			s[0].Add(s[0], v)
			if len(m.Avails) > 0 {
				s[1].Add(s[1], v)
			}
			total.Add(total, v)
		}
	}
	f.Appropriations.ByAccount = []AccountTotal{}
	for k, s := range sums {
		f.Appropriations.ByAccount = append(f.Appropriations.ByAccount, AccountTotal{Account: k.account, FY: k.fy, Dollars: s[0].String(), Fenced: s[1].String()})
	}
	slices.SortFunc(f.Appropriations.ByAccount, func(a, b AccountTotal) int {
		if c := strings.Compare(a.Account, b.Account); c != 0 {
			return c
		}
		return a.FY - b.FY
	})
	f.Appropriations.Total = total.String()

	// estimates and feasibility
	f.Estimates, f.EstimateTotals = []dag.ID{}, []EstimateTotal{}
	for _, e := range in.Estimates {
		f.Estimates = append(f.Estimates, e.Opinion)
		w, err := sum(e.Outlays)
		if err != nil {
			return nil, fmt.Errorf("%w: estimate %s: %v", ErrFacts, e.Opinion, err)
		}
		t := EstimateTotal{Estimate: e.Opinion, AsWritten: w}
		if e.IfPermanent != nil {
			p, err := sum(e.IfPermanent)
			if err != nil {
				return nil, fmt.Errorf("%w: estimate %s: %v", ErrFacts, e.Opinion, err)
			}
			t.IfPermanent = &p
		}
		f.EstimateTotals = append(f.EstimateTotals, t)
	}
	slices.SortFunc(f.Estimates, dag.ID.Compare)
	f.Estimates = slices.Compact(f.Estimates)
	slices.SortFunc(f.EstimateTotals, func(a, b EstimateTotal) int { return a.Estimate.Compare(b.Estimate) })
	f.Feasibility = []dag.ID{}
	for _, fe := range env.Feasibility {
		f.Feasibility = append(f.Feasibility, fe.Opinion)
	}
	slices.SortFunc(f.Feasibility, dag.ID.Compare)
	f.Feasibility = slices.Compact(f.Feasibility)

	f.VersusBase = diffNodes(in.VersusBase)
	f.VersusSuperseded = diffNodes(in.VersusSuperseded)
	if in.RankedAboveWinner != nil {
		f.RankedAboveWinner = slices.Clone(in.RankedAboveWinner)
		slices.SortFunc(f.RankedAboveWinner, func(a, b RankedAbove) int { return a.Option.Compare(b.Option) })
	}

	// origin and reverts: nodes of the patch by their resulting hash.
	f.Origin, f.Reverts = []Origin{}, []Revert{}
	for _, n := range patch {
		h := after.nodeHash(n.nid)
		for _, p := range in.Proposals {
			if slices.Contains(p.NodeHashes, h) {
				o := Origin{NID: n.nid, Opinion: p.Opinion, Author: p.Author, AuthorKind: p.AuthorKind}
				if p.OnBehalfOf != "" {
					g := p.OnBehalfOf
					o.OnBehalfOf = &g
				}
				f.Origin = append(f.Origin, o)
			}
		}
		if in.History != nil {
			if c, ok := in.History.PreviouslyIn(n.nid, h); ok {
				f.Reverts = append(f.Reverts, Revert{NID: n.nid, To: h, PreviouslyIn: c})
			}
		}
	}
	slices.SortFunc(f.Origin, func(a, b Origin) int {
		if c := strings.Compare(a.NID, b.NID); c != 0 {
			return c
		}
		return a.Opinion.Compare(b.Opinion)
	})
	f.Origin = slices.CompactFunc(f.Origin, func(a, b Origin) bool { return a.NID == b.NID && a.Opinion == b.Opinion })
	return f, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func diffNodes(d *Diff) *DiffNodes {
	if d == nil {
		return nil
	}
	return &DiffNodes{Added: nonNil(d.Added), Removed: nonNil(d.Removed), Modified: nonNil(d.Modified), Moved: nonNil(d.Moved)}
}

func edgeDiff(a, b map[RefEdge]bool) []RefEdge {
	out := []RefEdge{}
	for e := range a {
		if !b[e] {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(x, y RefEdge) int {
		if c := strings.Compare(x.From, y.From); c != 0 {
			return c
		}
		return strings.Compare(x.To, y.To)
	})
	return out
}

func sum(xs []string) (string, error) {
	t := new(big.Int)
	for _, x := range xs {
		if !bigOK(strings.TrimPrefix(x, "-")) || x == "-0" {
			return "", fmt.Errorf("amount %q is not an integer", trunc(x))
		}
		v, _ := new(big.Int).SetString(x, 10)
		t.Add(t, v)
	}
	return t.String(), nil
}

// bigOK accepts canonical decimal integers of any length.
func bigOK(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// definers returns, sorted, "nid\x00text" for every node defining term
// whose scope is scope: the children of scope, and scope itself when it is
// the root (the root's scope is itself).
func definers(t *Tree, scope, term string) []string {
	s, ok := t.nodes[scope]
	if !ok {
		return nil
	}
	var out []string
	add := func(n *node) {
		if slices.Contains(n.marks.Defs, term) {
			out = append(out, n.nid+"\x00"+n.text)
		}
	}
	if s.parent == "" {
		add(s)
	}
	for _, c := range s.children {
		add(t.nodes[c])
	}
	slices.Sort(out)
	return out
}

// defChanges compares the definitions whose definers the diff could have
// changed: term ids of the added, removed, modified and moved nodes, in
// either snapshot.
func defChanges(before, after *Tree, d *Diff) (added, changed, removed []string) {
	type key struct{ scope, term string }
	keys := map[key]bool{}
	collect := func(t *Tree, nids []string) {
		for _, nid := range nids {
			n, ok := t.nodes[nid]
			if !ok {
				continue
			}
			for _, term := range n.marks.Defs {
				keys[key{scopeOf(t, nid), term}] = true
			}
		}
	}
	for _, l := range [][]string{d.Added, d.Removed, d.Modified, d.Moved} {
		collect(before, l)
		collect(after, l)
	}
	added, changed, removed = []string{}, []string{}, []string{}
	for k := range keys {
		b, a := definers(before, k.scope, k.term), definers(after, k.scope, k.term)
		id := TermID(k.scope, k.term)
		switch {
		case len(b) == 0 && len(a) > 0:
			added = append(added, id)
		case len(b) > 0 && len(a) == 0:
			removed = append(removed, id)
		case len(b) > 0 && !slices.Equal(a, b):
			changed = append(changed, id)
		}
	}
	slices.Sort(added)
	slices.Sort(changed)
	slices.Sort(removed)
	return added, changed, removed
}

// RootHistory records the root heads of a session in log order and
// answers PreviouslyIn for the reverts of D41.
type RootHistory struct {
	last     *Tree
	lastHead dag.ID
	seen     map[string]map[dag.ID]dag.ID // nid -> hash -> latest head that had it (not the current)
}

// NewRootHistory returns an empty history.
func NewRootHistory() *RootHistory { return &RootHistory{seen: map[string]map[dag.ID]dag.ID{}} }

// Add records that change head (with snapshot t) became the root head.
// Only nodes whose hash changed are visited. h keeps t until the next Add:
// do not edit t afterwards.
func (h *RootHistory) Add(head dag.ID, t *Tree) {
	t.Hash()
	if h.last != nil {
		prev := h.last
		stack := []string{prev.root}
		for len(stack) > 0 {
			nid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			ph := prev.nodeHash(nid)
			if _, ok := t.nodes[nid]; ok && t.nodeHash(nid) == ph {
				continue
			}
			m := h.seen[nid]
			if m == nil {
				m = map[dag.ID]dag.ID{}
				h.seen[nid] = m
			}
			m[ph] = h.lastHead
			stack = append(stack, prev.nodes[nid].children...)
		}
	}
	h.last, h.lastHead = t, head
}

// PreviouslyIn implements Prior: the latest earlier root head at which nid
// had node_hash x, excluding the current head.
func (h *RootHistory) PreviouslyIn(nid string, x dag.ID) (dag.ID, bool) {
	c, ok := h.seen[nid][x]
	return c, ok
}
