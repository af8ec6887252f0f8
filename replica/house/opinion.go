package house

// This file admits opinion.publish (30k §8) at its causal point and keeps
// what the views need of each accepted opinion. Opinions are not
// governance entries: like ballots they change nothing that decides the
// validity of other entries' authorisation, so they are judged against
// the memoised governance state of their past and never refold it. They
// never reach a poll: no opinion changes a tally.
//
// Key aging (D61) is measured in witnessed time (witness.go, open point
// 12, docs/deviations.md).

import (
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/statute"
)

// opinionState is the House's record of opinions and witnessed times.
type opinionState struct {
	recs recArena
	byID map[dag.ID]int32
	// all, byAuthor and bySubject list record indexes, kept sorted by tx
	// id lazily (sortIndex), for /opinions pages.
	all        recIndex
	byAuthor   map[dag.Key]*recIndex
	bySubject  map[string]*recIndex
	replies    map[dag.ID][]int32     // replies_to → records
	responders map[dag.ID][]int32     // responds_to → records signed by an observer (D79)
	correcting map[dag.ID][]int32     // corrects → records
	stakes     map[stakeKey]stakeDecl // a member's latest stakes on a subject
	stakers    map[dag.ID][]dag.Key
	formal     []int32 // records with a formalization
	proposers  []int32 // non-member or group records that propose changes (origin.go)
	// proposed holds, per proposing opinion, the changed node hashes of
	// each proposed change on no branch, computed at admission.
	proposed map[dag.ID]map[dag.ID][]dag.ID
	// snaps maps a change (a branch head) to the snapshots of its
	// ancestry, computed once per head.
	snaps map[dag.ID]map[dag.ID]dag.ID
}

type stakeDecl struct {
	rec    int32
	stakes []opinion.Stake // those on the key's subject
}

type stakeKey struct {
	member  dag.Key
	subject dag.ID
}

// opinionRec is one accepted opinion.
type opinionRec struct {
	ent    int32
	id     dag.ID
	author dag.Key
	ts     int64
	member bool // signed by a roster member at its causal point
	// complaint: the body has a complaint member (D39).
	complaint bool
	body      []byte // the canonical body
	kind      string
	subj      opinion.Subject
	// What a listing shows, sharing body's memory (DecodeCanonical's
	// strings do): a page is served without decoding any body.
	stance, summary, onBehalf string
}

// recArena holds the opinion records in chunks of recChunk: a session's
// records are added one by one as it is derived (100k and more), and a
// single slice grown by doubling copied and zeroed each record about
// twice over, in ever larger allocations (a quarter of the derivation's
// CPU with 50k opinions beside 100k S11 entries). A record's address
// never changes.
type recArena struct {
	chunks [][]opinionRec
	n      int32
}

const recChunk = 1024

func (a *recArena) len() int32 { return a.n }

// at returns record i (< len).
func (a *recArena) at(i int32) *opinionRec { return &a.chunks[i/recChunk][i%recChunk] }

// add appends rec as record len.
func (a *recArena) add(rec opinionRec) {
	if a.n%recChunk == 0 {
		a.chunks = append(a.chunks, make([]opinionRec, 0, recChunk))
	}
	c := &a.chunks[len(a.chunks)-1]
	*c = append(*c, rec)
	a.n++
}

// parseTS reads the seconds of an RFC 3339 UTC ts as dag checked it
// ("2006-01-02T15:04:05[.frac]Z") as Unix seconds; the fraction is
// ignored. It reads no clock. (It orders a member's stakes declarations.)
func parseTS(ts string) int64 {
	if len(ts) < 20 {
		return 0
	}
	num := func(i, n int) int64 {
		var v int64
		for _, c := range []byte(ts[i : i+n]) {
			v = v*10 + int64(c-'0')
		}
		return v
	}
	y, m, d := num(0, 4), num(5, 2), num(8, 2)
	// Days from civil (H. Hinnant), proleptic Gregorian.
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	return days*86400 + num(11, 2)*3600 + num(14, 2)*60 + num(17, 2)
}

// opinionPublish judges an opinion against its causal past.
func (v *admission) opinionPublish() error {
	h, st, author := v.h, v.st, v.env.Author
	o, err := opinion.DecodeCanonical(v.env.Body)
	if err != nil {
		return err
	}
	roster := st.roster(h)
	s := opinion.Standing{Member: roster != nil && roster.isMember(author), Observer: st.isObserver(author), IsObserver: st.isObserver}
	if d := o.Disclosure; d != nil && d.Principal.Valid() {
		s.PrincipalMember = roster != nil && roster.isMember(d.Principal)
	}
	if o.OnBehalfOf != "" {
		g := st.group(o.OnBehalfOf)
		s.GroupExists, s.GroupAdmin = g != nil, g != nil && g.isAdmin(author)
	}
	if g, ok := st.keys.get(author); ok {
		e := &h.ents[h.gov[g]]
		s.Registered = true
		// Witnessed times (witness.go): the key.register's, and the
		// opinion's own (a non-member's ts never moves it).
		s.KeyAge = v.wit - e.wit
	}
	if err := opinion.CheckAuthor(o, s); err != nil {
		return err
	}
	if err := opinion.CheckSession(o, h.Simulation()); err != nil { // D31, D54
		return err
	}
	if f := o.Formalization; f != nil {
		// The source resolves like every object a body names: a peer's
		// entry waits for it, a client's submission without it is
		// unknown_parent (docs/deviations.md).
		if _, err := h.object(f.Source, "formalization source"); err != nil {
			return err
		}
	}
	for _, c := range o.Proposes {
		// A proposed change resolves like every object a body names
		// (origin.go reads it): known, attached, or waited for.
		if _, known := h.changes[c]; !known {
			if _, err := h.object(c, "proposed change"); err != nil {
				return err
			}
		}
	}
	// The record is its own small value: taking v's address here would
	// move every entry's admission to the heap.
	// The record lives in h (h.past), so that passing it as an
	// interface allocates nothing; Check keeps no reference to it.
	h.past = pastRecord{h: h, st: st, parents: v.parents}
	err = opinion.Check(o, author, &h.past)
	h.past = pastRecord{}
	if err != nil {
		return err
	}
	if err := v.checkParts(o); err != nil { // estimates, ... (opinion_members.go)
		return err
	}
	v.opn, v.opnMember, v.opnObserver = o, s.Member, s.Observer
	return nil
}

// pastRecord is the causal past of an opinion being admitted.
type pastRecord struct {
	h       *House
	st      *govState
	parents []int32
}

func (r *pastRecord) Node(asOf dag.ID, nid string) (string, string, bool, bool) {
	return r.h.node(r.st, asOf, nid)
}

func (r *pastRecord) Opinion(id dag.ID) (dag.Key, string, bool) {
	h := r.h
	i, ok := h.ops.byID[id]
	if !ok {
		return dag.Key{}, "", false
	}
	rec := h.ops.recs.at(i)
	if len(h.ancestorsMissing(r.parents, []int32{rec.ent})) > 0 {
		return dag.Key{}, "", false
	}
	o, err := opinion.DecodeCanonical(rec.body)
	if err != nil {
		return dag.Key{}, "", false
	}
	return rec.author, o.Body, true
}

func (r *pastRecord) HasObject(dag.ID) bool { return true } // checked before, through h.object

// node finds node nid of snapshot asOf among the snapshots of the
// branches of st (their heads' ancestries in the Change DAG): only what
// that state has seen.
func (h *House) node(st *govState, asOf dag.ID, nid string) (heading, text string, found, snap bool) {
	for _, name := range sortedKeys(st.branches) {
		for _, head := range st.branches[name].heads {
			if c, ok := h.snapshotsOf(head)[asOf]; ok {
				t, err := h.tree(c)
				if err != nil {
					continue
				}
				n, ok := t.Get(nid)
				return n.Heading, n.Text, ok, true
			}
		}
	}
	return "", "", false, false
}

// snapshotsOf maps the snapshots of change head's ancestry (head
// included) to a change that has each, once per head.
func (h *House) snapshotsOf(head dag.ID) map[dag.ID]dag.ID {
	if m, ok := h.ops.snaps[head]; ok {
		return m
	}
	m := map[dag.ID]dag.ID{}
	seen := map[dag.ID]bool{}
	stack := []dag.ID{head}
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
		m[rec.tree.Hash()] = c
		stack = append(stack, rec.c.Parents...)
	}
	if h.ops.snaps == nil {
		h.ops.snaps = map[dag.ID]map[dag.ID]dag.ID{}
	}
	h.ops.snaps[head] = m
	return m
}

// init makes the record's maps, with room for n opinions (a derivation
// knows how many its input holds: growing byID and all one by one cost
// a tenth of the opinions' share of a derivation).
func (ops *opinionState) init(n int) {
	ops.byID = make(map[dag.ID]int32, n)
	ops.all.recs = make([]int32, 0, n)
	ops.replies = map[dag.ID][]int32{}
	ops.correcting = map[dag.ID][]int32{}
	ops.responders = map[dag.ID][]int32{}
	ops.stakes = map[stakeKey]stakeDecl{}
	ops.stakers = map[dag.ID][]dag.Key{}
	ops.byAuthor = map[dag.Key]*recIndex{}
	ops.bySubject = map[string]*recIndex{}
}

// commitOpinion records an admitted opinion.
func (v *admission) commitOpinion(ei int32) {
	h, o := v.h, v.opn
	ops := &h.ops
	if ops.byID == nil {
		ops.init(0)
	}
	ri := ops.recs.len()
	// The body is copied: the envelope may be a slice of a peer's whole
	// sync frame, which keeping the slice would keep alive.
	rec := opinionRec{ent: ei, id: v.id, author: v.env.Author, ts: parseTS(v.env.TS), member: v.opnMember,
		body: slices.Clone(v.env.Body), kind: o.AuthorKind, subj: o.Subject, stance: o.Stance, summary: o.Summary, onBehalf: o.OnBehalfOf,
		complaint: o.Complaint != nil}
	ops.recs.add(rec)
	ops.byID[v.id] = ri
	ops.all.recs = append(ops.all.recs, ri)
	for _, x := range []*recIndex{indexIn(ops.byAuthor, v.env.Author), indexIn(ops.bySubject, o.Subject.ID)} {
		x.recs = append(x.recs, ri)
	}
	if o.RepliesTo.Valid() {
		ops.replies[o.RepliesTo] = append(ops.replies[o.RepliesTo], ri)
	}
	if o.Corrects.Valid() {
		ops.correcting[o.Corrects] = append(ops.correcting[o.Corrects], ri)
	}
	if v.opnObserver {
		// Only an observer's responses are listed (D79: observer_replies);
		// a complaint named twice in one list is listed once.
		for i, c := range o.RespondsTo {
			if !slices.Contains(o.RespondsTo[:i], c) {
				ops.responders[c] = append(ops.responders[c], ri)
			}
		}
	}
	if o.Formalization != nil {
		ops.formal = append(ops.formal, ri)
	}
	h.commitParts(ri, o) // estimates, ... (opinion_members.go)
	if len(o.Proposes) > 0 && opinion.NonMember(o.AuthorKind) {
		ops.proposers = append(ops.proposers, ri)
		for _, c := range o.Proposes {
			if _, ok := h.changes[c]; !ok {
				if ops.proposed == nil {
					ops.proposed = map[dag.ID]map[dag.ID][]dag.ID{}
				}
				if ops.proposed[v.id] == nil {
					ops.proposed[v.id] = map[dag.ID][]dag.ID{}
				}
				ops.proposed[v.id][c] = h.changedHashes(c)
			}
		}
	}
	if v.opnMember && o.Disclosure != nil {
		for _, s := range o.Disclosure.Stakes {
			k := stakeKey{v.env.Author, s.Subject}
			old, ok := ops.stakes[k]
			if !ok {
				ops.stakers[s.Subject] = append(ops.stakers[s.Subject], v.env.Author)
			}
			switch {
			case ok && old.rec == ri: // another stake of this opinion on the subject
				old.stakes = append(old.stakes, s)
				ops.stakes[k] = old
			case !ok || later(ops.recs.at(ri), ops.recs.at(old.rec)):
				ops.stakes[k] = stakeDecl{rec: ri, stakes: []opinion.Stake{s}}
			}
		}
	}
}

// indexIn returns m's index for k, made on first use.
func indexIn[K comparable](m map[K]*recIndex, k K) *recIndex {
	x, ok := m[k]
	if !ok {
		x = &recIndex{}
		m[k] = x
	}
	return x
}

// later orders a member's declarations: the later ts, then the larger tx
// id. A function of the set, whatever the arrival order.
func later(a, b *opinionRec) bool {
	if a.ts != b.ts {
		return a.ts > b.ts
	}
	return a.id.Compare(b.id) > 0
}

// ---- reads, for the shell ----

// OpinionFilter selects opinions for Opinions. Zero members match all.
type OpinionFilter struct {
	SubjectType string
	Subject     string
	Author      dag.Key
	Kind        string // author_kind
}

// OpinionView is one accepted opinion as the record has it.
type OpinionView struct {
	ID          dag.ID
	Author      dag.Key
	Kind        string // author_kind
	Subject     opinion.Subject
	OnBehalfOf  string // the group id, "" for none
	Stance      string
	Summary     string
	Body        []byte // canonical JSON of the body, shared: do not modify
	Member      bool   // signed by a roster member at its causal point
	CorrectedBy []dag.ID
	// RepliesFromSubject are the replies (replies_to this opinion) by a
	// member who signed an object one of its findings targets (D25).
	RepliesFromSubject []dag.ID
	// Complaint: the opinion carries a complaint (D39). ObserverReplies
	// are then the opinions, signed by a key in the observers group at
	// their causal point, whose responds_to names it (D79), sorted by id;
	// nil for an opinion that is not a complaint.
	Complaint       bool
	ObserverReplies []dag.ID
	// Ignored: signed by a member's key that a key.rotate in the session
	// makes invalid for it (rotate.go, D62): kept and shown, never taken
	// as the member's (no stakes, no reply from the subject).
	Ignored bool
}

// recIndex lists opinion records; recs[:sorted] is sorted by tx id and
// the rest, appended since, is merged in when a reader asks (sortIndex).
type recIndex struct {
	recs   []int32
	sorted int
}

func (h *House) sortIndex(x *recIndex) []int32 {
	if x.sorted == len(x.recs) {
		return x.recs
	}
	byID := func(a, b int32) int { return h.ops.recs.at(a).id.Compare(h.ops.recs.at(b).id) }
	tail := slices.Clone(x.recs[x.sorted:])
	slices.SortFunc(tail, byID)
	merged := make([]int32, 0, len(x.recs))
	a := x.recs[:x.sorted]
	for len(a) > 0 && len(tail) > 0 {
		if byID(a[0], tail[0]) < 0 {
			merged, a = append(merged, a[0]), a[1:]
		} else {
			merged, tail = append(merged, tail[0]), tail[1:]
		}
	}
	x.recs = append(append(merged, a...), tail...)
	x.sorted = len(x.recs)
	return x.recs
}

// Opinions lists the accepted opinions that match f, sorted by tx id,
// starting after tx id after (zero: from the first), at most limit. more
// is true when further opinions match. It costs O(log n) to find the
// start plus the opinions it looks at.
func (h *House) Opinions(f OpinionFilter, after dag.ID, limit int) (out []OpinionView, more bool) {
	// The narrowest index the filter allows: one author's, one subject's,
	// or all.
	idx := &h.ops.all
	switch {
	case f.Author.Valid():
		idx = h.ops.byAuthor[f.Author]
	case f.Subject != "":
		idx = h.ops.bySubject[f.Subject]
	}
	if idx == nil {
		return nil, false
	}
	all := h.sortIndex(idx)
	i := 0
	if after.Valid() {
		i, _ = slices.BinarySearchFunc(all, after, func(r int32, id dag.ID) int { return h.ops.recs.at(r).id.Compare(id) })
		if i < len(all) && h.ops.recs.at(all[i]).id == after {
			i++
		}
	}
	for ; i < len(all); i++ {
		rec := h.ops.recs.at(all[i])
		if (f.Kind != "" && rec.kind != f.Kind) || (f.Author.Valid() && rec.author != f.Author) ||
			(f.Subject != "" && rec.subj.ID != f.Subject) || (f.SubjectType != "" && rec.subj.Type != f.SubjectType) {
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, h.opinionView(all[i]))
	}
	return out, false
}

// Opinion returns one accepted opinion.
func (h *House) Opinion(id dag.ID) (OpinionView, bool) {
	i, ok := h.ops.byID[id]
	if !ok {
		return OpinionView{}, false
	}
	return h.opinionView(i), true
}

func (h *House) opinionView(ri int32) OpinionView {
	rec := h.ops.recs.at(ri)
	v := OpinionView{ID: rec.id, Author: rec.author, Kind: rec.kind, Subject: rec.subj, OnBehalfOf: rec.onBehalf, Stance: rec.stance, Summary: rec.summary,
		Body: rec.body, Member: rec.member, CorrectedBy: []dag.ID{}, RepliesFromSubject: []dag.ID{}, Ignored: h.opinionIgnored(ri)}
	for _, c := range h.ops.correcting[rec.id] {
		v.CorrectedBy = append(v.CorrectedBy, h.ops.recs.at(c).id)
	}
	slices.SortFunc(v.CorrectedBy, dag.ID.Compare)
	if rec.complaint {
		v.Complaint, v.ObserverReplies = true, []dag.ID{}
		for _, r := range h.ops.responders[rec.id] {
			v.ObserverReplies = append(v.ObserverReplies, h.ops.recs.at(r).id)
		}
		slices.SortFunc(v.ObserverReplies, dag.ID.Compare)
	}
	if rs := h.ops.replies[rec.id]; len(rs) > 0 {
		// The members who signed what this opinion's findings target.
		o, err := opinion.DecodeCanonical(rec.body)
		if err == nil {
			roster := h.global().roster(h)
			var subjects []dag.Key
			for _, f := range o.Findings {
				if id, err := dag.ParseID(f.Target.ID); err == nil {
					if k, _, ok := h.authorOf(id); ok && roster != nil && roster.isMember(k) {
						subjects = append(subjects, k)
					}
				}
			}
			for _, r := range rs {
				if slices.Contains(subjects, h.ops.recs.at(r).author) && !h.opinionIgnored(r) { // rotation hook
					v.RepliesFromSubject = append(v.RepliesFromSubject, h.ops.recs.at(r).id)
				}
			}
			slices.SortFunc(v.RepliesFromSubject, dag.ID.Compare)
		}
	}
	return v
}

// authorOf returns the signer of an admitted entry (or the author of a
// change), and the entry the answer depends on (zero for a change).
func (h *House) authorOf(id dag.ID) (dag.Key, dag.ID, bool) {
	if i, ok := h.idx.get(id, h.ents); ok {
		e := &h.ents[i]
		switch {
		case e.bal >= 0:
			return h.ballots.at(e.bal).author, id, true
		case e.gov >= 0:
			return h.gd[e.gov].author, id, true
		}
		if r, ok := h.ops.byID[id]; ok {
			return h.ops.recs.at(r).author, id, true
		}
		return dag.Key{}, dag.ID{}, false
	}
	if c, ok := h.changes[id]; ok {
		k, err := dag.ParseKey(c.c.Author)
		if err == nil {
			return k, dag.ID{}, true
		}
	}
	return dag.Key{}, dag.ID{}, false
}

// Stakes returns the latest stakes (D32) member declared on subject in
// an opinion, with that opinion's id, or false.
func (h *House) Stakes(member dag.Key, subject dag.ID) ([]opinion.Stake, dag.ID, bool) {
	d, ok := h.ops.stakes[stakeKey{member, subject}]
	if !ok {
		return nil, dag.ID{}, false
	}
	if h.opinionIgnored(d.rec) { // rotation hook (rotate.go)
		return h.stakesCounted(member, subject)
	}
	return slices.Clone(d.stakes), h.ops.recs.at(d.rec).id, true
}

// Stakers returns the members who declared stakes on subject in an
// opinion, sorted by key bytes.
func (h *House) Stakers(subject dag.ID) []dag.Key {
	out := slices.Clone(h.ops.stakers[subject])
	slices.SortFunc(out, dag.Key.Compare)
	return slices.Compact(out)
}

// Formalizations returns every accepted formalization with the nids its
// anchors point at, for the fact sheet's anchor_drift.
func (h *House) Formalizations() []statute.Formalization {
	var out []statute.Formalization
	for _, ri := range h.ops.formal {
		rec := h.ops.recs.at(ri)
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil {
			continue
		}
		out = append(out, statute.Formalization{Opinion: rec.id, NIDs: opinion.AnchoredNIDs(o)})
	}
	slices.SortFunc(out, func(a, b statute.Formalization) int { return a.Opinion.Compare(b.Opinion) })
	return out
}

// IsOpinion reports whether id is an accepted opinion.
func (h *House) IsOpinion(id dag.ID) bool { _, ok := h.ops.byID[id]; return ok }

// OpinionCount returns the number of accepted opinions.
func (h *House) OpinionCount() int { return int(h.ops.recs.len()) }

// EvaluateOpinion evaluates an accepted opinion's quotes and assertions against
// the current record (D22). ok is false for an unknown opinion.
func (h *House) EvaluateOpinion(id dag.ID) ([]opinion.Result, bool) {
	i, ok := h.ops.byID[id]
	if !ok {
		return nil, false
	}
	o, err := opinion.DecodeCanonical(h.ops.recs.at(i).body)
	if err != nil {
		return nil, false
	}
	f := recordFacts{h, h.global()}
	return append(opinion.Evaluate(o, f), opinion.EvaluateMarkets(o, f)...), true
}

// recordFacts is the whole record, as Evaluate reads it.
type recordFacts struct {
	h  *House
	st *govState
}

func (f recordFacts) executed(mr dag.ID) (*detRec, bool) {
	reg := f.st.mrs[mr]
	if reg == nil || reg.executedBy < 0 {
		return nil, false
	}
	d := f.h.dets[f.h.ents[f.h.gov[reg.executedBy]].id]
	return d, d != nil
}

func (f recordFacts) Ballot(member dag.Key, mr dag.ID) opinion.BallotStanding {
	info := f.h.mrs[mr]
	if info == nil || f.st.mrs[mr] == nil {
		return opinion.BallotStanding{}
	}
	b := opinion.BallotStanding{MRKnown: true}
	for _, ri := range info.cast {
		if r := f.h.ballots.at(ri); r.author == member && !r.ignored {
			b.Ballots = append(b.Ballots, f.h.ents[r.ent].id)
		}
	}
	slices.SortFunc(b.Ballots, dag.ID.Compare)
	choice, void, ok := info.poll.Member(member)
	switch {
	case void:
		b.Void = true
	case ok:
		b.Choice = choice.String()
	}
	if d, ok := f.executed(mr); ok {
		b.Decided, b.Determination = true, d.tx
	}
	return b
}

func (f recordFacts) MR(mr dag.ID) opinion.MRStanding {
	if f.st.mrs[mr] == nil {
		return opinion.MRStanding{}
	}
	s := opinion.MRStanding{Known: true}
	if d, ok := f.executed(mr); ok {
		t := d.result.Tally
		s.Executed, s.Determination, s.Outcome = true, d.tx, string(d.body.Outcome)
		s.Approve, s.Reject, s.Abstain = t.Approve, t.Reject, t.Abstain
	}
	return s
}

func (f recordFacts) Author(id dag.ID) (dag.Key, dag.ID, bool) { return f.h.authorOf(id) }

func (f recordFacts) Node(asOf dag.ID, nid string) (string, string, bool, bool) {
	return f.h.node(f.st, asOf, nid)
}

var _ opinion.Facts = recordFacts{}
var _ opinion.Record = (*pastRecord)(nil)

// MemberChoice returns member's effective choice on MR mr in its live
// poll ("" with none), and whether the member's ballots are void: one
// electorate lookup, for the stakes rows of /tally.
func (h *House) MemberChoice(member dag.Key, mr dag.ID) (choice string, void bool) {
	info := h.mrs[mr]
	if info == nil {
		return "", false
	}
	c, void, ok := info.poll.Member(member)
	if !ok || void {
		return "", void
	}
	return c.String(), false
}

// BallotOf returns member's standing on MR mr as the record has it now
// (D22's ballot_choice; the /tally's stakes rows).
func (h *House) BallotOf(member dag.Key, mr dag.ID) opinion.BallotStanding {
	return recordFacts{h, h.global()}.Ballot(member, mr)
}
