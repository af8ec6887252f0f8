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
// group before it to commit, then passes the lead to the next one queued
// and commits: so the next group is planned and verified while this one
// is judged and made durable, and at most one verified group waits. The
// others wait, each for its own group's commit.
//
// Only ballots share a transaction: they never name an object, so a
// submitted ballot can never fail its whole transaction for an object it
// lacks (errSubmitHeld), which would drop the space's state. Every other
// envelope is put alone, as before. A ballot the group left pending (its
// parent came in the same group, or later in it) is put again alone
// after the group, so the answer is the one it would have had submitted
// alone, after the submissions queued before it.

import (
	"context"
	"slices"

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
}

// submitOne ingests one client submission (hold false) in a group with
// the submissions that arrive while another group is committed, and
// returns its outcome once its entry is durable (or refused).
func (r *Replica) submitOne(ctx context.Context, sub Submission) (Outcome, error) {
	q := &groupReq{ctx: ctx, sub: sub, wake: make(chan struct{}, 1)}
	r.gmu.Lock()
	r.gq = append(r.gq, q)
	lead := !r.gbusy // when no group is being planned, the queue was empty
	r.gbusy = true
	r.gmu.Unlock()
	if !lead {
		<-q.wake
		if q.done {
			return q.out, q.err
		}
	}
	r.leadGroup() // q is first in the queue: its group answers it
	return q.out, q.err
}

// leadGroup takes the front of the queue as one group, verifies it,
// passes the lead on, commits the group and answers its members.
func (r *Replica) leadGroup() {
	r.gmu.Lock()
	n, size := 0, 0
	for n < len(r.gq) && n < MaxIngestPart {
		sz := len(r.gq[n].sub.Envelope)
		for _, a := range r.gq[n].sub.Attachments {
			sz += len(a)
		}
		if n > 0 && size+sz > MaxIngestPartBytes {
			break
		}
		n, size = n+1, size+sz
	}
	group := slices.Clone(r.gq[:n])
	r.gq = append(r.gq[:0:0], r.gq[n:]...)
	r.gmu.Unlock()

	subs := make([]Submission, len(group))
	for i, q := range group {
		subs[i] = q.sub
	}
	out := make([]Outcome, len(group))
	items := r.verify(subs, out)

	// One group commits at a time; the next one is planned and verified
	// while this one commits, and takes what queued meanwhile.
	r.cmu.Lock()
	defer r.cmu.Unlock()
	r.gmu.Lock()
	if len(r.gq) > 0 {
		r.gq[0].wake <- struct{}{}
	} else {
		r.gbusy = false
	}
	r.gmu.Unlock()

	errs := r.commitGroup(group, items, out)
	for i, q := range group {
		q.out, q.err, q.done = out[i], errs[i], true
		if i > 0 {
			q.wake <- struct{}{}
		}
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
