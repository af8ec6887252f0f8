package statute

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/witan-dev/witan/dag"
)

// ErrEffectiveInvalid is wrapped (inside a *dag.ProtocolError with code
// effective_invalid) by CheckEffective.
var ErrEffectiveInvalid = errors.New("statute: effective date before the MR's open date")

// CheckEffective rejects an MR whose effective date is earlier than its
// open date (§6 item 7). on_merge is always valid.
func CheckEffective(e Effective, open Date) error {
	if e.Dated && e.Date < open {
		return &dag.ProtocolError{Code: dag.CodeEffectiveInvalid, Detail: fmt.Sprintf("statute: effective %s is before the open date %s", e.Date, open), Err: ErrEffectiveInvalid}
	}
	return nil
}

// Enactment is one merge into the root branch, as /law needs it.
type Enactment struct {
	MR dag.ID
	// Change is the merge change: the root head after this merge.
	Change dag.ID
	// Effective is the merge's effective date: the MR's date, or for
	// on_merge the UTC date of the checkpoint that includes its executed
	// determination (the caller resolves it).
	Effective Date
	// Before and After are the root snapshots around the merge.
	Before, After *Tree
}

// OptIn is a recorded jurisdiction choice (D73): from Effective on,
// Jurisdiction has opted in to (or out of) Program.
type OptIn struct {
	Jurisdiction string
	Program      string
	In           bool // opt_in; false is opt_out
	Effective    Date
}

// The markers /law acts on.
const (
	lawSunset = iota
	lawEffective
	lawApplies
	lawOptIn
	lawKinds
)

// content is a node's own fields, as it stood before a merge.
type content struct{ kind, heading, text string }

// markEvent records that merge `merge` (0-based) set a law marker on a
// node; before is the node as it stood before that merge (nil: the merge
// added the node).
type markEvent struct {
	merge  int
	kind   int
	before *content
}

// Law answers "what is the law in force on date d" (§6 item 7, D43, D58,
// D70, D73) over the merges into the root, added in log order. It keeps
// only small per-merge records; the snapshots themselves come from the
// caller's Snapshots when At needs one.
type Law struct {
	seed          *Tree
	jurisdictions []string
	merges        []Enactment // Before/After dropped after Add
	prefixMax     []Date      // prefixMax[i] = max effective of merges[0..i]
	events        map[string][]markEvent
}

// NewLaw starts the law of a session from its seed snapshot, with the
// session's declared jurisdiction codes.
func NewLaw(seed *Tree, jurisdictions []string) *Law {
	seed.Hash()
	return &Law{seed: seed, jurisdictions: slices.Clone(jurisdictions), events: map[string][]markEvent{}}
}

// Len returns the number of merges added.
func (l *Law) Len() int { return len(l.merges) }

// Add records the next merge into the root, in log order. Its Before must
// be the previous merge's After (or the seed).
func (l *Law) Add(e Enactment) error {
	want := l.seed.Hash()
	if n := len(l.merges); n > 0 {
		want = l.merges[n-1].After.Hash()
	}
	if e.Before == nil || e.After == nil {
		return fmt.Errorf("statute: law: enactment %s lacks its snapshots", e.MR)
	}
	if h := e.Before.Hash(); h != want {
		return fmt.Errorf("statute: law: enactment %s starts from %s, the root was %s", e.MR, h, want)
	}
	e.After.Hash() // settled now, so that concurrent At calls only read it
	idx := len(l.merges)
	d := Compare(e.Before, e.After)
	for _, l2 := range [][]string{d.Added, d.Modified} {
		for _, nid := range l2 {
			an := e.After.nodes[nid]
			var bm *Markers = noMarkers
			var before *content
			if bn, ok := e.Before.nodes[nid]; ok {
				bm = bn.marks
				before = &content{bn.kind, bn.heading, bn.text}
			}
			for k := 0; k < lawKinds; k++ {
				if v := lawMarker(an.marks, k); v != "" && v != lawMarker(bm, k) {
					l.events[nid] = append(l.events[nid], markEvent{merge: idx, kind: k, before: before})
				}
			}
		}
	}
	pm := e.Effective
	if idx > 0 {
		pm = max(pm, l.prefixMax[idx-1])
	}
	l.prefixMax = append(l.prefixMax, pm)
	// Keep only the After tree of the last merge (for the next Add).
	if idx > 0 {
		l.merges[idx-1].Before, l.merges[idx-1].After = nil, nil
	}
	e.Before = nil
	l.merges = append(l.merges, e)
	return nil
}

// lawMarker is a comparable rendering of one law marker of m ("" if the
// node has none, or more than one: structure would have blocked it).
func lawMarker(m *Markers, kind int) string {
	switch kind {
	case lawSunset:
		if d, ok := m.Sunset(); ok {
			return fmt.Sprint(d)
		}
	case lawEffective:
		if d, ok := m.EffectiveDate(); ok {
			return d.String()
		}
	case lawApplies:
		if len(m.Applies) == 1 {
			return fmt.Sprint(m.Applies[0])
		}
	case lawOptIn:
		if len(m.OptIns) == 1 {
			return m.OptIns[0]
		}
	}
	return ""
}

// InForce is the answer of Law.At.
type InForce struct {
	// Merges is how many of the root's merges are in force (the longest
	// prefix whose effective dates are all <= the date).
	Merges int
	// Head is the root head after those merges (zero for the seed).
	Head dag.ID
	// HeadSnapshot is that head's snapshot id.
	HeadSnapshot dag.ID
	// Tree is the text in force: the head snapshot with per-node effective
	// dates, sunsets and, for a jurisdiction, coverage applied. Snapshot is
	// its id, equal to HeadSnapshot when nothing had to change.
	Tree     *Tree
	Snapshot dag.ID
	// HeldBack lists the MRs of merges not in force, in log order.
	HeldBack []dag.ID
}

// At returns the law in force on date d, in jurisdiction (or "" for the
// whole text). At only reads l, so calls may run concurrently (with each
// other, not with Add) provided the trees snaps returns are hashed. An undeclared jurisdiction is a *dag.ProtocolError with
// code jurisdiction_unknown. optIns are the recorded jurisdiction choices
// (any order). snaps gives the head snapshot of a merge change.
func (l *Law) At(d Date, jurisdiction string, optIns []OptIn, snaps Snapshots) (*InForce, error) {
	if jurisdiction != "" && !slices.Contains(l.jurisdictions, jurisdiction) {
		return nil, &dag.ProtocolError{Code: dag.CodeJurisdictionUnknown, Detail: fmt.Sprintf("statute: jurisdiction %q is not declared", trunc(jurisdiction))}
	}
	k := sort.Search(len(l.prefixMax), func(i int) bool { return l.prefixMax[i] > d })
	out := &InForce{Merges: k}
	head := l.seed
	if k > 0 {
		m := l.merges[k-1]
		out.Head = m.Change
		if k == len(l.merges) && m.After != nil {
			head = m.After
		} else {
			t, err := snaps.Snapshot(m.Change)
			if err != nil {
				return nil, err
			}
			head = t
		}
	}
	for _, m := range l.merges[k:] {
		out.HeldBack = append(out.HeldBack, m.MR)
	}
	out.HeadSnapshot = head.Hash()

	type action struct {
		omit    bool
		restore *content
		sunset  bool
	}
	acts := map[string]*action{}
	for _, nid := range sortedKeys(l.events) {
		n, ok := head.nodes[nid]
		if !ok {
			continue
		}
		// Latest event of each kind within the prefix.
		var last [lawKinds]*markEvent
		for i := range l.events[nid] {
			ev := &l.events[nid][i]
			if ev.merge < k {
				last[ev.kind] = ev
			}
		}
		a := &action{}
		revert := func(ev *markEvent) {
			if ev.before == nil {
				a.omit = true
			} else if a.restore == nil {
				a.restore = ev.before
			}
		}
		m := n.marks
		eff, hasEff := m.EffectiveDate()
		if hasEff && last[lawEffective] != nil && d < eff {
			revert(last[lawEffective])
		}
		if jurisdiction != "" {
			if len(m.Applies) == 1 && last[lawApplies] != nil && !slices.Contains(m.Applies[0], jurisdiction) {
				revert(last[lawApplies])
			}
			if len(m.OptIns) == 1 && last[lawOptIn] != nil && !optedIn(optIns, jurisdiction, m.OptIns[0], d) {
				revert(last[lawOptIn])
			}
		}
		if days, ok := m.Sunset(); ok && last[lawSunset] != nil && !a.omit && a.restore == nil {
			from := l.merges[last[lawSunset].merge].Effective
			if hasEff {
				from = eff
			}
			if d >= from.AddDays(days) {
				a.sunset = true
			}
		}
		if a.omit || a.restore != nil || a.sunset {
			acts[nid] = a
		}
	}
	if len(acts) == 0 {
		out.Tree, out.Snapshot = head, out.HeadSnapshot
		return out, nil
	}
	t := head.Clone()
	for _, nid := range sortedKeys(acts) {
		a := acts[nid]
		if !t.Has(nid) {
			continue // inside an omitted subtree
		}
		switch {
		case a.omit:
			if nid == t.root {
				continue
			}
			p := t.own(t.nodes[nid].parent)
			p.children = remove(p.children, nid)
			t.removeSubtree(nid)
			t.dirty(p.nid)
		case a.restore != nil:
			n := t.own(nid)
			n.setContent(a.restore.kind, a.restore.heading, a.restore.text)
			t.dirty(nid)
		case a.sunset:
			n := t.own(nid)
			n.setContent(n.kind, n.heading, "")
			t.dirty(nid)
		}
	}
	out.Tree, out.Snapshot = t, t.Hash()
	return out, nil
}

// optedIn reports whether jurisdiction's latest choice on program in
// effect on d (greatest effective date <= d; later in the list wins a tie)
// is opt_in.
func optedIn(choices []OptIn, jurisdiction, program string, d Date) bool {
	var best *OptIn
	for i := range choices {
		c := &choices[i]
		if c.Jurisdiction != jurisdiction || c.Program != program || c.Effective > d {
			continue
		}
		if best == nil || c.Effective >= best.Effective {
			best = c
		}
	}
	return best != nil && best.In
}
