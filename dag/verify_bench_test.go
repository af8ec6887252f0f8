package dag_test

import (
	"crypto/ed25519"
	"fmt"
	"testing"

	"github.com/hdevalence/ed25519consensus"

	"github.com/witan-dev/witan/dag"
)

// The verification rule is ZIP-215, implemented by curve25519-voi. These
// benchmarks measure it beside the other ZIP-215 implementation the design
// names (ed25519consensus) and beside the standard library's strict
// RFC 8032 verifier, single and batched, in one run:
//
//	go test ./dag -run '^$' -bench 'Verify' -benchtime 2000x
type sigCase struct {
	key dag.Key
	msg []byte
	sig []byte
}

func sigCases(n int) []sigCase {
	out := make([]sigCase, n)
	for i := range out {
		s, _ := dag.SignerFromSeed(seedN(i))
		msg := []byte(fmt.Sprintf(`{"author":"x","body":{"choice":"approve","n":%d}}`, i))
		out[i] = sigCase{s.Key(), msg, s.Sign(dag.DomainEnvelope, msg)}
	}
	return out
}

func seedN(i int) []byte {
	b := make([]byte, 32)
	b[0], b[1], b[2] = byte(i), byte(i>>8), byte(i>>16)
	return b
}

func BenchmarkVerifySingle(b *testing.B) {
	cs := sigCases(256)
	b.Run("witan-zip215-voi", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := cs[i%len(cs)]
			if !dag.Verify(c.key, dag.DomainEnvelope, c.msg, c.sig) {
				b.Fatal("invalid")
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
	})
	b.Run("ed25519consensus", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := cs[i%len(cs)]
			if !ed25519consensus.Verify(c.key.Bytes(), append([]byte(dag.DomainEnvelope), c.msg...), c.sig) {
				b.Fatal("invalid")
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
	})
	b.Run("stdlib-rfc8032", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := cs[i%len(cs)]
			if !ed25519.Verify(c.key.Bytes(), append([]byte(dag.DomainEnvelope), c.msg...), c.sig) {
				b.Fatal("invalid")
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
	})
}

func BenchmarkVerifyBatch(b *testing.B) {
	const batch = 256
	cs := sigCases(batch)
	b.Run(fmt.Sprintf("witan-zip215-voi/%d", batch), func(b *testing.B) {
		verifyInBatches(b, dag.NewBatchVerifier(), cs)
	})
	b.Run(fmt.Sprintf("witan-zip215-voi-keycache/%d", batch), func(b *testing.B) {
		cache := dag.NewKeyCache(0)
		v := dag.NewBatchVerifierCache(cache)
		for i := 0; i < b.N; i++ {
			c := cs[i%batch]
			v.Add(c.key, dag.DomainEnvelope, c.msg, c.sig)
			if v.Len() == batch {
				if ok, _ := v.Verify(); !ok {
					b.Fatal("invalid")
				}
				v = dag.NewBatchVerifierCache(cache)
			}
		}
		v.Verify()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
	})
	b.Run(fmt.Sprintf("ed25519consensus/%d", batch), func(b *testing.B) {
		v := ed25519consensus.NewBatchVerifier()
		n := 0
		for i := 0; i < b.N; i++ {
			c := cs[i%batch]
			v.Add(c.key.Bytes(), append([]byte(dag.DomainEnvelope), c.msg...), c.sig)
			n++
			if n == batch {
				if !v.Verify() {
					b.Fatal("invalid")
				}
				v = ed25519consensus.NewBatchVerifier()
				n = 0
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
	})
}

func BenchmarkCanonicalize(b *testing.B) {
	_, env, _ := sealedBallot(b)
	loose := []byte(" " + string(env))
	b.Run("already-canonical", func(b *testing.B) {
		b.SetBytes(int64(len(env)))
		for i := 0; i < b.N; i++ {
			if _, err := dag.Canonicalize(env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("needs-jcs", func(b *testing.B) {
		b.SetBytes(int64(len(loose)))
		for i := 0; i < b.N; i++ {
			if _, err := dag.Canonicalize(loose); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-envelope", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, _, err := dag.DecodeEnvelope(env); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The ingest path: canonical bytes from a peer, one or two parents.
	merge := sealedMerge(b)
	for _, c := range []struct {
		name string
		in   []byte
	}{{"decode-signed", env}, {"decode-signed-merge", merge}, {"decode-signed-loose", loose}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.in)))
			for i := 0; i < b.N; i++ {
				if _, err := dag.DecodeSigned(c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sealedMerge is a ballot with two parents, the other common shape of an
// envelope on the ingest path.
func sealedMerge(t testing.TB) []byte {
	t.Helper()
	s, _ := dag.SignerFromSeed(seed(4))
	e := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum([]byte("session")), Parents: []dag.ID{dag.Sum([]byte("p")), dag.Sum([]byte("q"))},
		Body: []byte(`{"choice":"approve","mr":"` + dag.Sum([]byte("mr")).String() + `"}`), TS: "2026-09-21T12:00:00.25Z"}
	b, _, err := e.Seal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkVerifyBatchRepeatedKeys: batches of 1000 signatures by 8 keys
// (a small class), 100 and 435 keys (a House), and 1000 distinct keys,
// through a KeyCache. Where keys repeat, the merged-key equation multiplies
// fewer points (see BatchVerifier):
//
//	go test ./dag -run '^$' -bench VerifyBatchRepeatedKeys -benchtime 10000x
func BenchmarkVerifyBatchRepeatedKeys(b *testing.B) {
	const batch = 1000
	for _, keys := range []int{8, 100, 435, 1000} {
		signers := make([]*dag.Signer, keys)
		for i := range signers {
			signers[i], _ = dag.SignerFromSeed(seedN(i))
		}
		cs := make([]sigCase, batch)
		for i := range cs {
			s := signers[i%keys]
			msg := []byte(fmt.Sprintf(`{"author":"x","body":{"choice":"approve","n":%d}}`, i))
			cs[i] = sigCase{s.Key(), msg, s.Sign(dag.DomainEnvelope, msg)}
		}
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			verifyInBatches(b, dag.NewBatchVerifierCache(dag.NewKeyCache(0)), cs)
		})
	}
}

// verifyInBatches verifies b.N signatures, cycling through cs, with v in
// batches of len(cs), and reports signatures per second.
func verifyInBatches(b *testing.B, v *dag.BatchVerifier, cs []sigCase) {
	for i := 0; i < b.N; i++ {
		c := cs[i%len(cs)]
		v.Add(c.key, dag.DomainEnvelope, c.msg, c.sig)
		if v.Len() == len(cs) {
			if ok, _ := v.Verify(); !ok {
				b.Fatal("invalid")
			}
		}
	}
	v.Verify()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
}

// BenchmarkVerifyBatchSize: one signer (a replica syncing one author's
// chain), batches of different sizes, messages of envelope size.
func BenchmarkVerifyBatchSize(b *testing.B) {
	s, _ := dag.SignerFromSeed(seedN(1))
	for _, batch := range []int{64, 256, 512, 1024, 2048} {
		cs := make([]sigCase, batch)
		for i := range cs {
			msg := []byte(fmt.Sprintf(`{"author":"x","body":{"n":%d},"pad":"%0360d"}`, i, i))
			cs[i] = sigCase{s.Key(), msg, s.Sign(dag.DomainEnvelope, msg)}
		}
		b.Run(fmt.Sprintf("n=%d", batch), func(b *testing.B) {
			verifyInBatches(b, dag.NewBatchVerifierCache(dag.NewKeyCache(0)), cs)
		})
	}
}
