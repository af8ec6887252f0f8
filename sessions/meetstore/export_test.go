package meetstore

import "github.com/dgraph-io/badger/v4"

// seedOf returns chain (r, k)'s live seed, for the tests that look for it
// in the raw files.
func (s *Store) seedOf(r int, k Class) ([32]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls, ok := s.seeds[chain{r, k}]
	return ls.seed, ok
}

// WithAfterStep sets the test hook called after each step of forgetting.
func WithAfterStep(o Options, f func(string)) Options { o.afterStep = f; return o }

// rawCopy returns the stored bytes (nonce ‖ sealed) of item's copy at r in
// class k for day, and the key they are bound to.
func (s *Store) rawCopy(item []byte, r int, k Class, day int64) (key, val []byte, err error) {
	key = copyKey(chain{r, k}, day, item)
	err = s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(key)
		if err != nil {
			return err
		}
		val, err = it.ValueCopy(nil)
		return err
	})
	return key, val, err
}

// opens reports whether candidate, taken as the chain's seed for day (or
// up to three days before it) or as the day key itself, opens the copy.
func opens(r int, k Class, candidate, key, val []byte) bool {
	c := chain{r, k}
	try := func(dk []byte) bool {
		a, err := aead(dk)
		if err != nil {
			return false
		}
		_, err = a.Open(nil, val[:a.NonceSize()], val[a.NonceSize():], key)
		return err == nil
	}
	if try(candidate) {
		return true
	}
	var seed [32]byte
	copy(seed[:], candidate)
	for i := 0; i < 4; i++ {
		dk, err := dayKey(c, seed)
		if err == nil && try(dk) {
			return true
		}
		seed = nextSeed(seed)
	}
	return false
}
