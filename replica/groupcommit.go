package replica

// This file is the group commit of client submissions (issue 22): the
// envelopes that HTTP clients submit at the same time share one store
// transaction, so one fsync makes a whole group durable, and each client
// is answered only once its own entry is (Submit returns after the
// store's Put has committed, with SyncWrites on).
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
// alone, after the submissions queued before it.

import (
	"bytes"
	"context"
	"errors"
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
	r.gmu.Unlock()
	if !lead {
		<-q.wake
		if q.done {
			return q
		}
	}
	r.leadGroup() // q is first in the queue: its group answers it
	return q
}

// leadGroup takes the front of the queue as one group, verifies it,
// passes the lead on, commits the group and answers its members.
func (r *Replica) leadGroup() {
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
	r.receiptFacts(group, out, errs)
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
	items := r.verify(subs, out)
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
	if len(r.gq) > 0 {
		r.gq[0].wake <- struct{}{}
	} else {
		r.gbusy = false
	}
}

// commitGroup ingests a verified group: the ballots of each source in one
// store transaction, every other envelope alone, then alone again each
// ballot a shared transaction left pending. It returns each member's
// error.
func (r *Replica) commitGroup(group []*groupReq, items []item, out []Outcome) []error {
	errs := make([]error, len(group))
	type run struct {
		ctx   context.Context
		items []item
	}
	var runs []*run
	bySource := map[string]*run{}
	var alone []item
	for _, it := range items {
		if it.env.Type != dag.TxBallotCast {
			alone = append(alone, it)
			continue
		}
		ctx := group[it.i].ctx
		src := dag.SourceOf(ctx)
		ru := bySource[src]
		if ru == nil {
			// One client leaving does not fail the others' commit.
			ru = &run{ctx: context.WithoutCancel(ctx)}
			bySource[src] = ru
			runs = append(runs, ru)
		}
		ru.items = append(ru.items, it)
	}
	var again []item
	for _, ru := range runs {
		err := r.ingestItems(ru.ctx, ru.items, out, false)
		for _, it := range ru.items {
			errs[it.i] = err
			if err == nil && len(ru.items) > 1 && out[it.i].Status == Pending {
				again = append(again, it)
			}
		}
	}
	for _, it := range append(alone, again...) {
		errs[it.i] = r.ingestItems(group[it.i].ctx, []item{it}, out, false)
	}
	return errs
}

// receiptFacts records, for each accepted member of a committed group,
// what its receipt says besides its id: its log position and its space's
// checkpoint size. They are read for the whole group under one lock, the
// positions from the space's log in memory (the group's entries are at
// its end), where each receipt took the lock and read its position from
// the store. A member whose facts are not found here (its space was
// dropped by a failed write) gets them from receipt, as before.
func (r *Replica) receiptFacts(group []*groupReq, out []Outcome, errs []error) {
	r.mu.Lock()
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
			// The tail as long as the group, and as long again for what
			// it woke (entries held back for its objects) or what a peer's
			// Ingest appended meanwhile; a position not found in it (a
			// duplicate of an older entry) is read from the store.
			n := min(len(sp.log), 2*len(group)+16)
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
