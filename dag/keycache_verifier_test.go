package dag

import (
	"bytes"
	"testing"
)

// A KeyCache's Verifier hands out verifiers over it and takes back, with
// Release, only empty ones of its own; a verifier taken back gives the
// same verdicts in its next batch.
func TestKeyCacheVerifiers(t *testing.T) {
	c := NewKeyCache(0)
	s, err := SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	add := func(bv *BatchVerifier, n int, bad int) {
		for i := range n {
			msg := []byte{byte(i), 'v'}
			sig := s.Sign(DomainEnvelope, msg)
			if i == bad {
				sig = s.Sign(DomainEnvelope, []byte("another"))
			}
			bv.Add(s.Key(), DomainEnvelope, msg, sig)
		}
	}

	// Not empty: not kept, so the next Verifier is a new one.
	bv := c.Verifier()
	if bv.cache != c {
		t.Fatal("a verifier not over its cache")
	}
	add(bv, 3, -1)
	c.Release(bv)
	if c.Verifier() == bv {
		t.Fatal("a verifier with signatures queued was taken back")
	}
	// Another cache's: not kept.
	other := NewKeyCache(0).Verifier()
	c.Release(other)
	if c.Verifier() == other {
		t.Fatal("another cache's verifier was taken back")
	}

	// Verified and given back, it is handed out again (the pool may drop
	// one now and then: a few rounds), with the same verdicts.
	reused := false
	for round := range 10 {
		bv := c.Verifier()
		add(bv, 12, round)
		all, valid := bv.Verify()
		if all || len(valid) != 12 {
			t.Fatalf("round %d: all %v, %d verdicts", round, all, len(valid))
		}
		for i, ok := range valid {
			if ok != (i != round) {
				t.Fatalf("round %d: signature %d valid %v", round, i, ok)
			}
		}
		c.Release(bv)
		if next := c.Verifier(); next == bv {
			reused = true
			c.Release(next)
		}
	}
	if !reused {
		t.Fatal("no verifier given back was handed out again in ten rounds")
	}
}
