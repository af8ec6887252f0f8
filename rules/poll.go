package rules

import (
	"slices"

	"github.com/witan-dev/witan/dag"
)

// Poll folds the ballots of one MR under one rule, incrementally. Adding a
// ballot updates the counts in place in O(1) (a member's ballots are
// scanned while there are fewer than eight of them and indexed after), and
// a tally is read in O(1); the ballots already folded are never refolded.
//
// A Poll's state depends only on the set of ballots added, never on their
// order or on repeats: any order of the same ballots gives the same Result.
// A Poll is not safe for concurrent use.
type Poll struct {
	rule *Rule
	el   *Electorate
	mr   dag.ID

	slot   []int32 // per electorate index: 0 = no ballot, else 1 + index in voters
	voters []voter

	n, a, r, b, v, emergencyYes uint64
	ballots                     uint64 // distinct valid ballots folded
	invalid                     []Invalid
	arena                       []rec // first-ballot storage, handed out one element at a time
}

// Invalid is a ballot a Poll refused: it is not counted and does not void
// its author.
type Invalid struct {
	Tx     dag.ID   `json:"tx"`
	Code   dag.Code `json:"code"`
	Detail string   `json:"detail"`
}

// rec is one ballot of a member on the poll's MR.
type rec struct {
	tx, sup   dag.ID
	choice    Choice
	emergency Emergency
	indeg     uint32 // ballots of the same member in the poll that supersede this one
}

// contribution is what a member adds to the counts.
type contribution uint8

const (
	none contribution = iota
	void
	effective
)

// voter is one member's ballots on the MR. The member's ballots count iff
// they form one supersedes chain. Each ballot supersedes at most one other,
// so the member's ballots and the supersedes links among them form paths
// and cycles; with k ballots they form one chain exactly when there are
// k-1 links and no ballot is superseded twice. (A cycle would need a hash
// cycle among tx ids, so for real ballots "no cycle" needs no check; for
// forged input the rule stays a deterministic function of the set.) The
// effective ballot is then the one no other supersedes.
//
// Its fields are ordered, and its counters 32-bit, so that a voter takes 56
// bytes rather than 72: a poll writes one per member who votes.
type voter struct {
	recs []rec
	idx  *voterIndex // nil until the member has indexAt ballots

	member int32
	tip    int32 // position of the effective ballot, if settle finds it valid
	links  int32 // supersedes links among recs
	multi  int32 // recs superseded by two or more others (a fork)

	contrib   contribution
	choice    Choice
	emergency Emergency
}

// NewPoll returns an empty poll of the MR mr under rule, with electorate el
// frozen at the MR's open.
func NewPoll(rule *Rule, el *Electorate, mr dag.ID) *Poll {
	return &Poll{rule: rule, el: el, mr: mr, n: uint64(el.Len())}
}

// Rule returns the poll's rule.
func (p *Poll) Rule() *Rule { return p.rule }

// Electorate returns the poll's frozen electorate.
func (p *Poll) Electorate() *Electorate { return p.el }

// MR returns the id of the MR the poll counts.
func (p *Poll) MR() dag.ID { return p.mr }

// Len returns the number of distinct valid ballots folded, void ones
// included (Tally.Ballots). Two polls of one rule, electorate and MR that
// were given the same distinct ballots, none refused, have equal Len and
// equal Results: a caller that knows a set of ballots is the set a poll
// folded may read that poll's Result instead of folding them again.
func (p *Poll) Len() int { return int(p.ballots) }

// Add folds one ballot into the poll. It returns nil when the ballot is
// folded, including a ballot that voids its author by equivocation (a
// valid ballot.cast whose effect is to void) and a ballot already folded.
// It returns a *dag.ProtocolError when the ballot can never count: code
// schema for a zero tx id or author or an invalid choice, ballot_invalid
// for a ballot on another MR or by a non-member (30k §7 (b), (c)). Such a
// ballot is recorded in Result.Invalid and changes nothing else.
//
// Ballot signatures, key rotation (§7 (a)) and the causal past are the
// caller's to check before Add.
func (p *Poll) Add(b Ballot) error { return p.AddAt(-1, b) }

// AddAt is Add for a caller that already knows the author's position in
// the poll's electorate (Electorate.Index): it spares the lookup. A
// position that does not hold b.Author is ignored and the author looked
// up, so a wrong one changes nothing but the cost.
func (p *Poll) AddAt(at int, b Ballot) error {
	idx, err := p.check(at, b)
	if err != nil {
		pe := err.(*dag.ProtocolError)
		p.invalid = append(p.invalid, Invalid{Tx: b.Tx, Code: pe.Code, Detail: pe.Detail})
		return err
	}
	if p.slot == nil {
		p.slot = make([]int32, p.el.Len())
		p.voters = make([]voter, 0, min(p.el.Len(), 1024))
	}
	s := p.slot[idx]
	if s == 0 {
		if len(p.arena) == 0 {
			p.arena = make([]rec, min(max(16, len(p.voters)), 4096))
		}
		// A member's first ballot takes one element of the arena, capped so
		// that a second ballot grows into memory of its own.
		if len(p.voters) == cap(p.voters) {
			// Doubled rather than append's 1.25: a voter is large, and a
			// poll of thousands would be copied many times over.
			p.voters = slices.Grow(p.voters, min(cap(p.voters), p.el.Len()-len(p.voters)))
		}
		p.voters = append(p.voters, voter{member: idx, recs: p.arena[:0:1]})
		p.arena = p.arena[1:]
		s = int32(len(p.voters))
		p.slot[idx] = s
	}
	v := &p.voters[s-1]
	x := rec{tx: b.Tx, sup: b.Supersedes, choice: b.Choice, emergency: b.Emergency}
	if i := v.find(b.Tx); i >= 0 {
		old := &v.recs[i]
		// The same tx again. A correct caller gives one body per tx id (the
		// id hashes the body), so this is a repeat; for inconsistent input
		// the smaller body wins, so that the result still depends only on
		// the set of ballots.
		if !recLess(x, *old) {
			return nil
		}
		p.uncount(v)
		v.remove(i)
		v.insert(x)
		p.count(v)
		return nil
	}
	p.uncount(v)
	v.insert(x)
	p.ballots++
	p.count(v)
	return nil
}

// check returns the author's electorate index, or why the ballot can never
// count.
func (p *Poll) check(at int, b Ballot) (int32, error) {
	switch {
	case !b.Tx.Valid():
		return 0, schemaf("ballot has a zero tx id")
	case !b.Author.Valid():
		return 0, schemaf("ballot %s has a zero author", b.Tx)
	case b.Choice < Approve || b.Choice > Abstain:
		return 0, schemaf("ballot %s has an invalid choice", b.Tx)
	case b.Emergency > EmergencyNo:
		return 0, schemaf("ballot %s has an invalid emergency answer", b.Tx)
	case b.MR != p.mr:
		return 0, dag.Errorf(dag.CodeBallotInvalid, "rules: ballot %s is on mr %s, not %s", b.Tx, b.MR, p.mr)
	}
	if at >= 0 && at < len(p.el.members) && p.el.members[at] == b.Author {
		return int32(at), nil
	}
	idx, ok := p.el.Index(b.Author)
	if !ok {
		return 0, dag.Errorf(dag.CodeBallotInvalid, "rules: ballot %s: author %s is not in the frozen electorate", b.Tx, b.Author)
	}
	return int32(idx), nil
}

func recLess(x, y rec) bool {
	if c := x.sup.Compare(y.sup); c != 0 {
		return c < 0
	}
	if x.choice != y.choice {
		return x.choice < y.choice
	}
	return x.emergency < y.emergency
}

// indexAt is the number of ballots from which a member's ballots are
// indexed by maps rather than scanned, so that a member who changes their
// vote many times still costs O(1) per ballot.
const indexAt = 8

// voterIndex indexes one member's ballots once there are many.
type voterIndex struct {
	byTx     map[dag.ID]int32  // tx id -> position in recs
	supCount map[dag.ID]uint32 // tx id -> how many recs supersede it
}

func (v *voter) buildIndex() {
	v.idx = &voterIndex{byTx: make(map[dag.ID]int32, 2*len(v.recs)), supCount: make(map[dag.ID]uint32, 2*len(v.recs))}
	for i, r := range v.recs {
		v.idx.byTx[r.tx] = int32(i)
		if r.sup.Valid() {
			v.idx.supCount[r.sup]++
		}
	}
}

// find returns the position of the ballot with id tx, or -1.
func (v *voter) find(tx dag.ID) int {
	if v.idx != nil {
		if i, ok := v.idx.byTx[tx]; ok {
			return int(i)
		}
		return -1
	}
	for i := range v.recs {
		if v.recs[i].tx == tx {
			return i
		}
	}
	return -1
}

// insert adds x to v's ballots and updates the links.
func (v *voter) insert(x rec) {
	if v.idx == nil && len(v.recs) >= indexAt {
		v.buildIndex()
	}
	x.indeg = 0
	if v.idx != nil {
		x.indeg = v.idx.supCount[x.tx]
	} else {
		for i := range v.recs {
			if v.recs[i].sup == x.tx {
				x.indeg++
			}
		}
	}
	v.links += int32(x.indeg)
	self := x.sup == x.tx
	if self {
		x.indeg++
		v.links++
	}
	if x.indeg >= 2 {
		v.multi++
	}
	if !self && x.sup.Valid() {
		if j := v.find(x.sup); j >= 0 {
			r := &v.recs[j]
			r.indeg++
			v.links++
			if r.indeg == 2 {
				v.multi++
			}
		}
	}
	v.recs = append(v.recs, x)
	if v.idx != nil {
		v.idx.byTx[x.tx] = int32(len(v.recs) - 1)
		if x.sup.Valid() {
			v.idx.supCount[x.sup]++
		}
	}
	if x.indeg == 0 {
		// The newest ballot nobody supersedes is the likely effective one;
		// settle checks it.
		v.tip = int32(len(v.recs) - 1)
	}
	v.settle()
}

// remove takes out the i-th ballot and updates the links. It is only used
// for the rare conflicting repeat, so it may rebuild the index.
func (v *voter) remove(i int) {
	x := v.recs[i]
	v.recs = slices.Delete(v.recs, i, i+1)
	v.links -= int32(x.indeg)
	if x.indeg >= 2 {
		v.multi--
	}
	if x.sup != x.tx && x.sup.Valid() {
		for j := range v.recs {
			if r := &v.recs[j]; r.tx == x.sup {
				if r.indeg == 2 {
					v.multi--
				}
				r.indeg--
				v.links--
				break
			}
		}
	}
	if v.idx != nil {
		v.buildIndex()
	}
	v.tip = -1
	v.settle()
}

// settle recomputes the member's contribution from its links.
func (v *voter) settle() {
	k := len(v.recs)
	switch {
	case k == 0:
		v.contrib = none
		return
	case int(v.links) != k-1 || v.multi != 0:
		v.contrib = void
		return
	}
	// One path (plus, for forged input only, cycles): its head is the one
	// ballot nobody supersedes.
	if v.tip < 0 || int(v.tip) >= k || v.recs[v.tip].indeg != 0 {
		for i := range v.recs {
			if v.recs[i].indeg == 0 {
				v.tip = int32(i)
				break
			}
		}
	}
	r := &v.recs[v.tip]
	v.contrib, v.choice, v.emergency = effective, r.choice, r.emergency
}

func (p *Poll) uncount(v *voter) { p.apply(v, ^uint64(0)) }
func (p *Poll) count(v *voter)   { p.apply(v, 1) }

// apply adds d (1 or, as two's complement, -1) times v's contribution.
func (p *Poll) apply(v *voter, d uint64) {
	switch v.contrib {
	case void:
		p.v += d
	case effective:
		switch v.choice {
		case Approve:
			p.a += d
		case Reject:
			p.r += d
		case Abstain:
			p.b += d
		}
		if v.emergency == EmergencyYes {
			p.emergencyYes += d
		}
	}
}

// Voided returns the members counted in tally.void, in electorate order.
func (p *Poll) Voided() []dag.Key {
	if p.v == 0 {
		return []dag.Key{}
	}
	idx := make([]int32, 0, p.v)
	for i := range p.voters {
		if p.voters[i].contrib == void {
			idx = append(idx, p.voters[i].member)
		}
	}
	slices.Sort(idx)
	out := make([]dag.Key, len(idx))
	for i, j := range idx {
		out[i] = p.el.members[j]
	}
	return out
}

// Invalid returns the ballots Add refused, sorted by tx id, each once.
func (p *Poll) Invalid() []Invalid {
	out := slices.Clone(p.invalid)
	slices.SortFunc(out, func(x, y Invalid) int {
		if c := x.Tx.Compare(y.Tx); c != 0 {
			return c
		}
		if x.Code != y.Code {
			if x.Code < y.Code {
				return -1
			}
			return 1
		}
		switch {
		case x.Detail < y.Detail:
			return -1
		case x.Detail > y.Detail:
			return 1
		}
		return 0
	})
	out = slices.Compact(out)
	if out == nil {
		out = []Invalid{}
	}
	return out
}
