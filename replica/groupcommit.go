package replica

// This file is the group commit of client submissions: the
// envelopes that HTTP clients submit at the same time share one store
// transaction, so one fsync makes a whole group durable, and each client
// is answered only once its own entry is (Submit returns after the
// store's Put has committed, durable in its commit log).
//
// Submissions queue up. The first to find no group being planned leads:
// it takes the queue (at most MaxIngestPart envelopes and
// MaxIngestPartBytes bytes), decodes and verifies it, waits for the
// group before it to commit, takes (and verifies) what queued meanwhile,
// then passes the lead to the next one queued and commits: so the next
// group is planned and verified while this one is judged and made
// durable, and at most one verified group waits. The others wait, each
// for its own group's commit.
//
// Only ballots share a transaction: they never name an object, so a
// submitted ballot can never fail its whole transaction for an object it
// lacks (errSubmitHeld), which would drop the space's state. Every other
// envelope is put alone, as before. A ballot the group left pending (its
// parent came in the same group, or later in it) is put again alone
// after the group, so the answer is the one it would have had submitted
// alone, after the submissions queued before it. The ballots of a group
// share one transaction whoever sent them: each item carries its source
// (charged for a refusal) and whether it may wait (hold).
//
// A peer's Ingest shares its commits with the clients too. Each of its
// parts takes the commit turn (cmu) like a group (commitPart), and takes
// with it the submissions queued at that moment (takeJoiners: at most a
// quarter of a part's limits), but not the leader of the group being
// planned: their ballots go in the part's transaction, after the peer's
// entries, each judged as a client's (hold false: one whose parents are
// not held is refused and kept nowhere, while the peer's entries wait for
// theirs), and each client is answered after that commit, with what a
// group would have answered it (a ballot left pending is put again alone
// after the part; every other envelope alone). From the start of an
// Ingest call to its last part (partWait), a group leader leaves the
// queue to the parts rather than commit a group of its own (handOff):
// the next part is never far, since each is verified while the one before
// is written; the call's last part (or its failure) passes the lead on
// (partsDone). So while a peer syncs, one commit a part makes both the
// part and the clients' ballots durable. The shared transaction's error
// answers everyone in it; a client's own later commit failing does not
// fail the part, and a peer cancelling its call does not fail the shared
// commit. The store applies the batch in its order (parents first), and
// the in-memory state follows the Admit hook in that same order, so what
// is derived from the store's log is what the replica derived.

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
)

// groupReq is one submission waiting in the group-commit queue.
type groupReq struct {
	ctx  context.Context
	sub  Submission
	out  Outcome
	err  error
	wake chan struct{} // done, or lead
	done bool          // set before wake when the answer is ready
	// leading is set, under gmu, on the submission that leads (or has
	// been woken to lead) the group being planned: a peer's part takes
	// every queued submission but that one (takeJoiners).
	leading bool
	// What an accepted member's receipt says besides its id, read for the
	// whole group under one lock once it committed (receiptFacts): set
	// when facts is.
	facts  bool
	pos    uint64 // 1-based log position, 0 if unknown
	cpSize uint64
	digest dag.ID // dag.Sum(sub.Envelope) when the envelope came canonical (its tx id), else zero
}

// submitOne ingests one client submission (hold false) in a group with
// the submissions that arrive while another group is committed, and
// returns it answered (out, err and the receipt's facts) once its entry
// is durable (or refused).
func (r *Replica) submitOne(ctx context.Context, sub Submission) *groupReq {
	q := &groupReq{ctx: ctx, sub: sub, wake: make(chan struct{}, 1)}
	r.gmu.Lock()
	r.gq = append(r.gq, q)
	lead := !r.gbusy // when no group is being planned, the queue was empty
	r.gbusy = true
	q.leading = lead
	r.gmu.Unlock()
	for {
		if !lead {
			<-q.wake
			if q.done {
				return q
			}
		}
		// q is first in the queue: its group answers it, unless it leaves
		// the queue to a peer's part (handOff); then q waits again, to be
		// answered by the part or woken to lead the next group.
		if r.leadGroup() {
			return q
		}
		lead = false
	}
}

// leadGroup takes the front of the queue as one group, verifies it,
// passes the lead on, commits the group and answers its members. It
// returns false, having taken nothing, when a peer's part waits to
// commit: the part takes the queue (handOff).
func (r *Replica) leadGroup() bool {
	if r.handOff(nil) {
		return false
	}
	group := r.takeQueued(nil)

	// Whatever happens (a panic that net/http recovers included), the lead
	// passes on and every member of the group is answered: no submission
	// may wait for good.
	passed, answered := false, false
	defer func() {
		if !passed {
			r.passLead()
		}
		if !answered {
			for i, q := range group {
				q.err, q.done = errGroupFailed, true
				if i > 0 {
					q.wake <- struct{}{}
				}
			}
		}
	}()

	out := make([]Outcome, len(group))
	items := r.verifyGroup(group, out)
	if r.handOff(group) { // a part began to wait meanwhile
		passed, answered = true, true
		return false
	}

	// One group commits at a time; the next one is planned and verified
	// while this one commits. What queued meanwhile joins this group
	// before it passes the lead on: else the next leader, woken as soon
	// as this one holds the commit, would take the one or two submissions
	// that had queued by then, and every other commit would be a group of
	// one (that is what the first version did: half its fsyncs were for
	// one entry). Those latecomers are verified here, on the commit path,
	// which costs less than a commit of their own.
	if r.cmu.TryLock() {
		r.gather(len(group))
	} else {
		r.cmu.Lock()
	}
	defer r.cmu.Unlock()
	if n := len(group); r.queued() > 0 {
		group = r.takeQueued(group)
		out = append(out, make([]Outcome, len(group)-n)...)
		more := r.verifyGroup(group[n:], out[n:])
		for k := range more {
			more[k].i += n
		}
		items = append(items, more...)
	}
	r.passLead()
	passed = true

	errs := r.commitGroup(group, items, out)
	r.receiptFacts(group, out, errs, len(group))
	r.gmu.Lock()
	r.glast = max(len(group), r.glast*7/8) // forgets a burst slowly (by an eighth a group)
	r.gmu.Unlock()
	answered = true
	for i, q := range group {
		q.out, q.err, q.done = out[i], errs[i], true
		if i > 0 {
			q.wake <- struct{}{}
		}
	}
	return true
}

// handOff leaves the queue, group in front of it, to the parts of a
// peer's Ingest under way (partWait), if there is one: its next part
// takes the queued submissions into its own transaction (takeJoiners),
// one commit for both, where the group would commit on its own just
// before or after it. Then no group is led until the last part of the
// Ingest calls under way passes the lead on (partsDone).
func (r *Replica) handOff(group []*groupReq) bool {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	if r.partWait == 0 {
		return false
	}
	for _, q := range group {
		q.leading = false
	}
	if len(r.gq) > 0 {
		r.gq[0].leading = false
	}
	r.gq = append(group, r.gq...)
	r.handed = true
	return true
}

// groupWait is the longest a leader with no commit before it waits for
// more submissions to join its group (gather).
const groupWait = 5 * time.Millisecond

// gather waits, when no commit is under way and the group of n is much
// smaller than the last ones (glast, which forgets a burst slowly), for the submissions the last group's
// clients are about to send, up to groupWait. Clients that wait for
// their answer before they submit again all come back at once when a
// group is answered: without it, the first of them would commit alone
// (an fsync for one entry) while the others queue behind it.
func (r *Replica) gather(n int) {
	deadline := time.Now().Add(groupWait)
	for {
		r.gmu.Lock()
		enough := n+len(r.gq) >= r.glast/2 || n+len(r.gq) >= MaxIngestPart
		r.gmu.Unlock()
		if enough || time.Now().After(deadline) {
			return
		}
		time.Sleep(groupWait / 20)
	}
}

// takeQueued appends to group the front of the queue, up to MaxIngestPart
// submissions and MaxIngestPartBytes bytes in all (at least one if group
// is empty), and returns it.
func (r *Replica) takeQueued(group []*groupReq) []*groupReq {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	size := 0
	for _, q := range group {
		size += q.size()
	}
	n := 0
	for n < len(r.gq) && len(group)+n < MaxIngestPart {
		sz := r.gq[n].size()
		if len(group)+n > 0 && size+sz > MaxIngestPartBytes {
			break
		}
		n, size = n+1, size+sz
	}
	group = append(group, r.gq[:n]...)
	r.gq = append(r.gq[:0:0], r.gq[n:]...)
	return group
}

// queued returns how many submissions wait in the queue.
func (r *Replica) queued() int {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	return len(r.gq)
}

// size is what q counts against MaxIngestPartBytes.
func (q *groupReq) size() int {
	sz := len(q.sub.Envelope)
	for _, a := range q.sub.Attachments {
		sz += len(a)
	}
	return sz
}

// verifyGroup decodes and verifies the submissions of group (out follows
// group) and notes each one's envelope digest.
func (r *Replica) verifyGroup(group []*groupReq, out []Outcome) []item {
	subs := make([]Submission, len(group))
	for i, q := range group {
		subs[i] = q.sub
	}
	items := r.verify(subs, out, false)
	for _, it := range items {
		// The receipt names the envelope by the hash of its bytes as
		// submitted: its tx id when they were canonical, as they mostly are.
		if q := group[it.i]; bytes.Equal(q.sub.Envelope, it.data) {
			q.digest = it.id
		}
	}
	return items
}

// errGroupFailed answers the members of a group whose leader failed
// before it committed (a panic).
var errGroupFailed = errors.New("replica: the submission's group commit failed")

// passLead wakes the first submission queued to lead the next group, or
// marks that no group is being planned.
func (r *Replica) passLead() {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	r.passLeadLocked()
}

// passLeadLocked is passLead with gmu held.
func (r *Replica) passLeadLocked() {
	if len(r.gq) > 0 {
		r.gq[0].leading = true
		r.gq[0].wake <- struct{}{}
	} else {
		r.gbusy = false
	}
}

// commitGroup ingests a verified group: its ballots in one store
// transaction (per space), each charged to its own client (item.src),
// every other envelope alone, then alone again each ballot the shared
// transaction left pending. It returns each member's error.
func (r *Replica) commitGroup(group []*groupReq, items []item, out []Outcome) []error {
	// The shared transaction runs under its first ballot's context.
	ctx := context.Background()
	if k := slices.IndexFunc(items, func(it item) bool { return it.env.Type == dag.TxBallotCast }); k >= 0 {
		ctx = group[items[k].i].ctx
	}
	errs, _ := r.commitWith(ctx, nil, nil, group, items, out)
	return errs
}

// commitWith ingests base (a peer's part, outcomes in bout; nil for a
// group of submissions alone) and the ballots of a verified group of
// submissions (gitems, outcomes in gout), after base, in one store
// transaction per space under ctx, which nobody leaving cancels: each
// ballot is charged to its own client (item.src) and judged as a
// client's. Every other envelope of the group is put alone, then alone
// again each ballot the shared transaction left pending, as if submitted
// alone after it. It returns each member's error and the shared
// transaction's.
func (r *Replica) commitWith(ctx context.Context, base []item, bout []Outcome, group []*groupReq, gitems []item, gout []Outcome) ([]error, error) {
	n := len(bout)
	buf := append(slices.Clone(bout), gout...)
	all := slices.Clip(base)
	var alone []item
	for _, it := range gitems {
		if it.env.Type != dag.TxBallotCast {
			alone = append(alone, it)
			continue
		}
		it.src = dag.SourceOf(group[it.i].ctx)
		it.i += n
		all = append(all, it)
	}
	var err error
	if base != nil || len(all) > 0 { // a part is written even with no entry left
		err = r.ingestItems(context.WithoutCancel(ctx), all, buf, nil)
		copy(bout, buf[:n])
		copy(gout, buf[n:])
	}
	errs := make([]error, len(group))
	for _, it := range all[len(base):] {
		it.i -= n
		errs[it.i] = err
		if err == nil && len(all) > 1 && gout[it.i].Status == Pending {
			alone = append(alone, it) // its parent came after it, or was left pending
		}
	}
	for _, it := range alone {
		errs[it.i] = r.ingestItems(group[it.i].ctx, []item{it}, gout, nil)
	}
	return errs, err
}

// receiptFacts records, for each accepted member of a committed group,
// what its receipt says besides its id: its log position and its space's
// checkpoint size. They are read for the whole group under one lock, the
// positions from the space's log in memory (the group's entries are at
// its end), where each receipt took the lock and read its position from
// the store. A member whose facts are not found here (its space was
// dropped by a failed write) gets them from receipt, as before. span is
// how many entries the commit wrote at most besides what it woke: the
// group's, or a peer's part and its joiners.
func (r *Replica) receiptFacts(group []*groupReq, out []Outcome, errs []error, span int) {
	r.lock()
	defer r.mu.Unlock()
	var tails map[string]map[dag.ID]uint64
	for i, q := range group {
		o := out[i]
		if errs[i] != nil || o.Status != Accepted {
			continue
		}
		sp := r.spaces[o.Space]
		if sp == nil {
			continue
		}
		tail, ok := tails[o.Space]
		if !ok {
			// The tail as long as the commit, and as long again for what
			// it woke (entries held back for its objects) or what a peer's
			// Ingest appended meanwhile; a position not found in it (a
			// duplicate of an older entry) is read from the store.
			n := min(len(sp.log), 2*span+16)
			tail = make(map[dag.ID]uint64, n)
			for k := len(sp.log) - n; k < len(sp.log); k++ {
				tail[sp.log[k]] = uint64(k + 1)
			}
			if tails == nil {
				tails = map[string]map[dag.ID]uint64{}
			}
			tails[o.Space] = tail
		}
		q.pos = tail[o.Tx]
		if q.pos == 0 {
			q.pos = r.position(q.ctx, o.Tx)
		}
		if len(sp.cps) > 0 {
			q.cpSize = sp.cps[len(sp.cps)-1].Size
		}
		q.facts = true
	}
}

// Client submissions join a peer's part: at most maxJoin of them, and
// maxJoinBytes bytes, so that a shared transaction holds at most a
// quarter more than a part (MaxIngestPart, MaxIngestPartBytes), well
// within what one store transaction holds.
const (
	maxJoin      = MaxIngestPart / 4
	maxJoinBytes = MaxIngestPartBytes / 4
)

// takeJoiners takes from the queue, for a peer's part, the submissions
// queued (up to maxJoin and maxJoinBytes), but not the one leading the
// group being planned: that one takes what is left when it commits.
func (r *Replica) takeJoiners() []*groupReq {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	lo := 0
	if len(r.gq) > 0 && r.gq[0].leading {
		lo = 1
	}
	n, size := 0, 0
	for lo+n < len(r.gq) && n < maxJoin {
		sz := r.gq[lo+n].size()
		if n > 0 && size+sz > maxJoinBytes {
			break
		}
		n, size = n+1, size+sz
	}
	if n == 0 {
		return nil
	}
	join := slices.Clone(r.gq[lo : lo+n])
	r.gq = slices.Delete(r.gq, lo, lo+n)
	return join
}

// partsStart counts an Ingest call under way (partWait), from before its
// first part is verified until partsDone: group leaders leave the queue
// to its parts (handOff), the next of which is never far, since each is
// verified while the one before it is written. It returns partsDone, or
// nil when sharing is off.
func (r *Replica) partsStart() func() {
	if r.noShare {
		return nil
	}
	r.gmu.Lock()
	defer r.gmu.Unlock()
	r.partWait++
	return r.partsDone
}

// partsDone ends what partsStart began, after the call's last part took
// its joiners (or the call failed): when no other Ingest is under way
// and a leader left the queue to the parts, the lead passes to what is
// queued, as a group would pass it.
func (r *Replica) partsDone() {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	r.partWait--
	if r.partWait == 0 && r.handed {
		r.handed = false
		r.passLeadLocked()
	}
}

// commitPart writes one part of a peer's Ingest (items, verified, with
// hold set; their outcomes in out) in its turn to commit (cmu), and with
// it the client submissions queued at that moment (takeJoiners): their
// ballots go in the part's transaction (after the peer's entries, each
// judged as a client's: not kept if its parents are not held), so one
// commit makes both durable; every other envelope, and a ballot the
// shared transaction left pending, is put alone afterwards, as in a
// group (commitGroup). Each joiner is answered once its commit is done,
// with what a group would have answered it. The part's error is the
// shared transaction's only: a joiner's own commit failing does not
// fail the part.
//
// A part that no submission joined is pipelined (pipeline.go): its
// transactions are started, their flights appended to *fl, and
// commitPart returns before they are durable; the caller lands them
// before it returns the part's outcomes. A part with joiners is durable
// when commitPart returns (each joiner is answered after its commit).
func (r *Replica) commitPart(ctx context.Context, items []item, out []Outcome, fl *[]*flight) error {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	var join []*groupReq
	if !r.noShare {
		join = r.takeJoiners()
	}
	if len(join) == 0 {
		if r.noPipeline {
			fl = nil
		}
		return r.ingestItems(ctx, items, out, fl)
	}
	answered := false
	defer func() {
		if !answered { // a panic: no joiner waits for good
			for _, q := range join {
				q.err, q.done = errGroupFailed, true
				q.wake <- struct{}{}
			}
		}
	}()
	jout := make([]Outcome, len(join))
	jitems := r.verifyGroup(join, jout)
	// The peer leaving (its context cancelled) does not fail the clients'
	// commit: the part is written all the same.
	errs, err := r.commitWith(ctx, items, out, join, jitems, jout)
	r.receiptFacts(join, jout, errs, len(items)+len(join))
	answered = true
	for i, q := range join {
		q.out, q.err, q.done = jout[i], errs[i], true
		q.wake <- struct{}{}
	}
	return err
}
