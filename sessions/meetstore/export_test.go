package meetstore

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
