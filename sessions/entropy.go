package sessions

import "io"

// DeterministicEntropy returns an entropy source for tests, examples and
// replays: the bytes seed+1, seed+2, seed+3, … (mod 256), without end, so
// that engines given the same seed draw the same session IDs and step to
// the same outcomes. With seed 0 the first session ID is
// 0102030405060708. Never use it in production: a session ID must be 64
// unpredictable bits (Inv 2.5), so give Options.Entropy crypto/rand.Reader.
func DeterministicEntropy(seed byte) io.Reader { return &counter{n: seed} }

type counter struct{ n byte }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		c.n++
		p[i] = c.n
	}
	return len(p), nil
}
