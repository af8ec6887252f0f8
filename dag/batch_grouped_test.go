package dag

import (
	"bytes"
	"testing"
)

func groupedBatch(t *testing.T, n, keys int) []queued {
	t.Helper()
	var q []queued
	for i := range n {
		s, err := SignerFromSeed(bytes.Repeat([]byte{byte(i%keys + 1)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte{byte(i), byte(i >> 8), 'm'}
		q = append(q, queued{k: s.Key(), m: append([]byte(DomainEnvelope), msg...), sig: s.Sign(DomainEnvelope, msg)})
	}
	return q
}

// The merged-key equation accepts a valid batch by itself (so the fast
// path is taken) and refuses one with any bad signature, whichever it is.
func TestGroupedEquation(t *testing.T) {
	t.Run("4 keys", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 40, 4)) })
	t.Run("distinct keys", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 40, 40)) })
	if groupable(groupedBatch(t, 7, 1)) {
		t.Error("7 signatures counted as groupable")
	}
	short := groupedBatch(t, 40, 40)
	short[17].sig = short[17].sig[:63]
	if groupable(short) {
		t.Error("a batch with a 63-byte signature counted as groupable")
	}
}

func testGroupedEquation(t *testing.T, q []queued) {
	if !groupable(q) {
		t.Fatalf("%d well-formed signatures not groupable", len(q))
	}
	if !grouped(q, nil) || !grouped(q, NewKeyCache(0)) {
		t.Fatal("a valid batch fails the grouped equation")
	}
	for i := range q {
		for _, tamper := range []func(queued) queued{
			func(e queued) queued { e.sig = bytes.Clone(e.sig); e.sig[40] ^= 1; return e }, // s
			func(e queued) queued { e.sig = bytes.Clone(e.sig); e.sig[3] ^= 4; return e },  // R
			func(e queued) queued { e.m = append(bytes.Clone(e.m), 'x'); return e },        // message
			func(e queued) queued { e.k = q[(i+1)%len(q)].k; return e },                    // key
			func(e queued) queued {
				e.sig = bytes.Clone(e.sig)
				copy(e.sig[32:], bytes.Repeat([]byte{0xff}, 32))
				return e
			}, // s ≥ L
		} {
			bad := append([]queued(nil), q...)
			bad[i] = tamper(q[i])
			if bad[i].k == q[i].k && bytes.Equal(bad[i].sig, q[i].sig) && bytes.Equal(bad[i].m, q[i].m) {
				continue // the key swap hit the same key
			}
			if grouped(bad, nil) || grouped(bad, NewKeyCache(0)) {
				t.Fatalf("grouped accepted a batch with signature %d tampered", i)
			}
		}
	}
}
