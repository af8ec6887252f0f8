package badgerstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/witan-dev/witan/dag"
)

// A Put writes its plan in one Badger transaction when it fits, which is
// nearly always. When the batch makes ready a long chain of pending entries
// (a DAG ingested children first, then its root), the promotions would not
// fit: the batch then commits in its own transaction with as many
// promotions as fit, and the rest follow in further transactions, each a
// causal prefix of what is left. Every commit leaves a consistent store.
//
// The first of several transactions sets keyPromote; the last deletes it.
// Open finds it after a crash between them, and the next Put then looks
// for the pending entries whose parents are all applied (or one
// quarantined) and decides them with its Admit (dag.PlanResume).

// keyPromote marks a promotion that continues in further transactions.
var keyPromote = []byte{pMeta, 'p', 'r', 'o'}

// chunk is what one transaction of a Put writes.
type chunk struct {
	objects []dag.Object
	// apply: each after its parents; WasPending when the store holds the
	// entry as pending (promoted, or a batch entry an earlier transaction
	// of this Put stored as pending).
	apply   []dag.Step
	pending []dag.Waiter
	quar    []dag.Refusal
	// marker: +1 sets keyPromote (more transactions follow), -1 deletes it.
	marker int
}

// budget bounds the writes of one transaction, in Badger's own measure
// (keys and the bytes of keys and values).
type budget struct{ count, size int64 }

func (b budget) add(o budget) budget { return budget{b.count + o.count, b.size + o.size} }

func (b budget) within(limit budget) bool { return b.count <= limit.count && b.size <= limit.size }

// Badger counts, per write, the key and value plus 12 bytes (metas and
// overhead); a value at or above the threshold counts 12 bytes of pointer.
const writeOverhead = 12

func (s *Store) write(k, v int) budget {
	if s.valueThreshold > 0 && int64(v) >= s.valueThreshold {
		v = 12
	}
	return budget{1, int64(k + v + writeOverhead)}
}

// bodySize is len(body(e)), bounded above.
func bodySize(e dag.Entry) int {
	return binary.MaxVarintLen32 + 32*len(e.Parents) + packedSize(e.Data)
}

// headSize bounds len(head(sid, pos, b)).
const headSize = binary.MaxVarintLen32 + 3*binary.MaxVarintLen64

// dataKeySize is len(dataKey(seq)).
const dataKeySize = 1 + 8

// costUnpend is what unpend writes for e.
func (s *Store) costUnpend(e dag.Entry) budget {
	c := s.write(33, 0).add(s.write(37, 0))
	for range e.Parents {
		c = c.add(s.write(69, 0))
	}
	return c
}

// costApply bounds what write does for an applied step: a record the size
// of its status (a format-11 store wrote one to the tree; the bound keeps
// it), the body unless the entry was pending (a promotion does not write it
// again), a child key and a head deletion per parent, a head, 32 bytes of
// log run, and the pending record's removal.
func (s *Store) costApply(st dag.Step) budget {
	c := s.write(33, headSize).add(s.write(37, 0)).add(budget{0, 32})
	for range st.Parents {
		c = c.add(s.write(65, 0)).add(s.write(37, 0))
	}
	if st.WasPending {
		c = c.add(s.costUnpend(st.Entry))
	} else {
		c = c.add(s.write(dataKeySize, bodySize(st.Entry)))
	}
	return c
}

func (s *Store) costPending(w dag.Waiter, waits int) budget {
	c := s.write(dataKeySize, bodySize(w.Entry)).add(s.write(33, headSize)).add(s.write(37, 0))
	for range waits {
		c = c.add(s.write(69, 0))
	}
	return c
}

func (s *Store) costRefusal(r dag.Refusal) budget {
	c := s.write(dataKeySize, bodySize(r.Entry)).add(s.write(33, headSize)).add(s.write(37, 3+len(r.Rejection.Code)+len(r.Rejection.Detail)))
	if r.WasPending {
		c = c.add(s.costUnpend(r.Entry))
	}
	return c
}

// limit is the budget of one transaction's promotions: half of Badger's
// limit, so that the estimate need not be exact. (A transaction that fails
// all the same with ErrTxnTooBig is retried smaller.)
func (s *Store) limit() budget {
	if s.testLimits[0] != (budget{}) {
		return s.testLimits[0]
	}
	return budget{s.db.MaxBatchCount() / 2, s.db.MaxBatchSize() / 2}
}

// wholeLimit is the budget under which a plan is written in one
// transaction: most of Badger's limit.
func (s *Store) wholeLimit() budget {
	if s.testLimits[1] != (budget{}) {
		return s.testLimits[1]
	}
	return budget{s.db.MaxBatchCount() * 9 / 10, s.db.MaxBatchSize() * 9 / 10}
}

// promotion is a Put's plan on its way through one or more transactions.
type promotion struct {
	plan *dag.Plan
	// rest and quar are what is left after the batch's own transaction:
	// steps in causal order, all held pending by then, and refusals of
	// pending entries in the plan's order.
	rest []dag.Step
	quar []dag.Refusal
	// applied lists the applied ids in the order of their log positions.
	applied []dag.ID
	// keep: a promotion cut off earlier waits in another space, so the
	// last transaction keeps the marker. more: another round follows
	// (plan.Ready), so this one's last transaction keeps it too.
	keep, more bool
}

// promoteRound bounds the promotions one plan decides, and so the memory a
// long promotion holds at once (the plan keeps every entry it applies):
// a longer cascade is planned and written in rounds.
const promoteRound = 8192

func (s *Store) roundMax() int {
	if s.testRound > 0 {
		return s.testRound
	}
	return promoteRound
}

// first returns the batch's own transaction: objects, every entry of the
// batch (applied if its parents are in this transaction or before, else
// pending), and as many promotions as fit in lim. It keeps the rest in pr.
// With a zero lim it promotes only what the batch's own entries need.
// Whole, when not zero, is the budget under which the plan is written in
// one transaction even if its promotions exceed lim.
func (s *Store) first(pr *promotion, objects []dag.Object, lim, whole budget) chunk {
	plan := pr.plan
	c := chunk{objects: objects, pending: plan.Pending}
	var mand, promo budget
	for _, o := range objects {
		mand = mand.add(s.write(33, len(o.Data)))
	}
	for _, st := range plan.Apply {
		if st.WasPending {
			promo = promo.add(s.costApply(st))
		} else {
			mand = mand.add(s.costApply(st))
		}
	}
	for _, w := range plan.Pending {
		mand = mand.add(s.costPending(w, len(w.WaitsFor)))
	}
	for _, r := range plan.Quarantine {
		if r.WasPending {
			promo = promo.add(s.costRefusal(r))
		} else {
			mand = mand.add(s.costRefusal(r))
		}
	}
	pr.rest, pr.quar = nil, nil
	if promo == (budget{}) || mand.add(promo).within(whole) {
		// The usual case: everything in one transaction.
		c.apply, c.quar = plan.Apply, plan.Quarantine
		pr.applied = plan.Result.Applied
		if pr.more {
			c.marker = +1
		}
		return c
	}
	planned := make(map[dag.ID]bool, len(plan.Apply))
	for _, st := range plan.Apply {
		planned[st.ID] = true
	}
	in := make(map[dag.ID]bool, len(plan.Apply))
	ready := func(e dag.Entry) bool {
		for _, par := range e.Parents {
			if planned[par] && !in[par] {
				return false
			}
		}
		return true
	}
	later := func(e dag.Entry) []dag.ID { // parents left to later transactions
		var out []dag.ID
		for _, par := range e.Parents {
			if planned[par] && !in[par] {
				out = append(out, par)
			}
		}
		return out
	}
	used, stopped := mand, false
	pr.applied = nil
	var deferred []dag.Waiter
	for _, st := range plan.Apply {
		ok := ready(st.Entry)
		if !st.WasPending {
			if ok {
				in[st.ID] = true
				c.apply = append(c.apply, st)
				pr.applied = append(pr.applied, st.ID)
			} else {
				// A batch entry behind a promotion left for later: held
				// pending now, applied with the rest.
				deferred = append(deferred, dag.Waiter{Entry: st.Entry, WaitsFor: later(st.Entry)})
				pr.rest = append(pr.rest, dag.Step{Entry: st.Entry, WasPending: true})
			}
			continue
		}
		if ok && !stopped {
			if cost := s.costApply(st); used.add(cost).within(lim) {
				used = used.add(cost)
				in[st.ID] = true
				c.apply = append(c.apply, st)
				pr.applied = append(pr.applied, st.ID)
				continue
			}
			stopped = true
		}
		pr.rest = append(pr.rest, st)
	}
	if len(deferred) > 0 || len(pr.rest) > 0 {
		// The batch's pending entries wait also for the promotions left
		// for later (Waiting must return them until those are applied).
		c.pending = make([]dag.Waiter, 0, len(plan.Pending)+len(deferred))
		for _, w := range plan.Pending {
			w.WaitsFor = append(w.WaitsFor, later(w.Entry)...)
			c.pending = append(c.pending, w)
		}
		c.pending = append(c.pending, deferred...)
	}
	// Refusals of pending entries follow the promotions (as in the
	// plan, where each comes after its parents), so that every commit is
	// a state that a Put of fewer entries would have left.
	stopped = len(pr.rest) > 0
	for _, r := range plan.Quarantine {
		if !r.WasPending {
			c.quar = append(c.quar, r)
			continue
		}
		if !stopped {
			if cost := s.costRefusal(r); used.add(cost).within(lim) {
				used = used.add(cost)
				c.quar = append(c.quar, r)
				continue
			}
			stopped = true
		}
		pr.quar = append(pr.quar, r)
	}
	if len(pr.rest)+len(pr.quar) > 0 || pr.more {
		c.marker = +1
	}
	return c
}

// next returns the next transaction of a promotion: a prefix of what is
// left (at least one entry), within lim.
func (s *Store) next(pr *promotion, lim budget) chunk {
	var c chunk
	var used budget
	n := 0
	for n < len(pr.rest) {
		cost := s.costApply(pr.rest[n])
		if n > 0 && !used.add(cost).within(lim) {
			break
		}
		used = used.add(cost)
		n++
	}
	c.apply = pr.rest[:n:n]
	m := 0
	if n == len(pr.rest) {
		for m < len(pr.quar) {
			cost := s.costRefusal(pr.quar[m])
			if n+m > 0 && !used.add(cost).within(lim) {
				break
			}
			used = used.add(cost)
			m++
		}
	}
	c.quar = pr.quar[:m:m]
	if n == len(pr.rest) && m == len(pr.quar) && !pr.keep && !pr.more {
		c.marker = -1
	}
	return c
}

// consume drops from pr what the committed chunk c wrote.
func (pr *promotion) consume(c chunk) {
	pr.rest = pr.rest[len(c.apply):]
	pr.quar = pr.quar[len(c.quar):]
	for _, st := range c.apply {
		pr.applied = append(pr.applied, st.ID)
	}
}

// readyPending returns, per space, the pending entries whose parents are
// all applied in their space, or one of them quarantined there: what a
// promotion cut off between two transactions left. It reads the whole
// pending set, so Put calls it only while keyPromote is held, once.
func (s *Store) readyPending() (map[string][]dag.ID, error) {
	out := map[string][]dag.ID{}
	at := s.landed.Load()
	err := s.db.View(func(txn *badger.Txn) error {
		rt := rtxn{txn, at}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pQueue}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != 1+4+32 {
				return fmt.Errorf("%w: pending key %x", errCorrupt, k)
			}
			id := idFrom(k[5:])
			e, st, _, err := s.lookup(rt, id, s.nameOf, true, false)
			if err != nil {
				return err
			}
			if st != dag.Pending {
				return fmt.Errorf("%w: %s is queued as pending but is %v", errCorrupt, id, st)
			}
			ready := true
			for _, par := range e.Parents {
				pe, pst, _, err := s.lookup(rt, par, s.nameOf, false, true)
				if err != nil {
					return err
				}
				if pe.Space != e.Space || pst == dag.Absent {
					ready = false
					continue
				}
				if pst == dag.Quarantined {
					ready = true
					break
				}
			}
			if ready {
				out[e.Space] = append(out[e.Space], id)
			}
		}
		return nil
	})
	return out, err
}

func isTooBig(err error) bool { return errors.Is(err, badger.ErrTxnTooBig) }
