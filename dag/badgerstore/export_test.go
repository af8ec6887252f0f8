package badgerstore

import (
	"fmt"
	"os"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
)

// SetPromoteHook makes Put call f before each promotion transaction after
// the batch's own (k = 1 before the second transaction); an error from f
// stops the Put there, as a crash between two transactions would.
func SetPromoteHook(s *Store, f func(k int) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.promoteHook = f
}

// SetLimits replaces the transaction budgets derived from Badger's limit:
// promotions per transaction, and the plan written in one transaction. A
// budget above Badger's limit makes transactions fail with ErrTxnTooBig,
// which Put must survive by writing less per transaction.
func SetLimits(s *Store, promoCount, promoSize, wholeCount, wholeSize int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.testLimits = [2]budget{{promoCount, promoSize}, {wholeCount, wholeSize}}
}

// PendingCount returns what the store counts in memory of the pending
// entries of space (it skips index scans when the count is 0).
func PendingCount(s *Store, space string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid, ok := s.sidOf(space)
	if !ok {
		return 0
	}
	return s.pending[sid]
}

// SetRound sets how many promotions one plan decides (a longer cascade
// is planned in rounds); 0 restores the default.
func SetRound(s *Store, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.testRound = n
}

// SetBodySync replaces the fdatasync of the body files (nil restores it).
func SetBodySync(s *Store, f func(*os.File) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		f = fdatasync
	}
	s.bl.sync = f
}

// SetViewHook makes f run inside each read's transaction, before the read.
func SetViewHook(s *Store, f func()) { s.viewHook = f }

// LockGCGate takes and releases the gate the body files' GC takes before
// it deletes a file: it returns once no read view is open.
func LockGCGate(s *Store) (files int) {
	s.bl.gate.Lock()
	defer s.bl.gate.Unlock()
	s.bl.fmu.Lock()
	defer s.bl.fmu.Unlock()
	return len(s.bl.sizes) // what GC reads under the gate, briefly
}

// ChildKey returns the children index key of the edge from parent to
// child, both applied: what a format-10 store held for every edge.
func ChildKey(s *Store, parent, child dag.ID) ([]byte, error) {
	var k []byte
	err := s.db.View(func(txn *badger.Txn) error {
		sid, ppos, ok, err := s.appliedAt(rtxn{Txn: txn}, parent)
		if err != nil || !ok {
			return fmt.Errorf("parent %s: applied %v, %v", parent, ok, err)
		}
		_, pos, ok, err := s.appliedAt(rtxn{Txn: txn}, child)
		if err != nil || !ok {
			return fmt.Errorf("child %s: applied %v, %v", child, ok, err)
		}
		k = key(pChild, sidb(sid), posb(ppos), posb(pos))
		return nil
	})
	return k, err
}

// KeptPositions reports the map of log positions the store keeps for its
// next transaction: whether it has one, how many entries it holds, and
// the room it was made for.
func KeptPositions(s *Store) (kept bool, n, room int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pos != nil, len(s.pos), s.posRoom
}

// SetLandHook makes f run after each Put transaction's Badger commit
// returned and before the store counts it as landed (Store.landed).
func SetLandHook(s *Store, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.landHook = f
}

// AppliedRecords returns the applied index: each applied entry's space
// number, log position, body number and body run.
func AppliedRecords(s *Store) map[dag.ID][4]uint64 {
	out := map[dag.ID][4]uint64{}
	s.applied.each(func(d *[32]byte, r appliedRec) {
		b := r.body()
		out[dag.IDFromDigest(*d)] = [4]uint64{uint64(r.sid), r.pos, b.seq, b.run}
	})
	return out
}
