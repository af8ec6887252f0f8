package dagtest_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

func TestEnvelopesAreValidAndSigned(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := dagtest.Envelopes(dagtest.EnvelopeOptions{}).Draw(t, "envelope")
		e, canon, id, err := dag.DecodeEnvelope(s.Bytes)
		if err != nil {
			t.Fatalf("generated envelope does not decode: %v", err)
		}
		if id != s.ID || string(canon) != string(s.Bytes) {
			t.Fatal("id or bytes differ after decoding")
		}
		if err := e.VerifySignature(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestEnvelopesHonourOptions(t *testing.T) {
	signers := []*dag.Signer{}
	for i := byte(1); i <= 3; i++ {
		s, _ := dag.SignerFromSeed(make32(i))
		signers = append(signers, s)
	}
	session := dag.Sum([]byte("session"))
	parents := []dag.ID{dag.Sum([]byte("a")), dag.Sum([]byte("b"))}
	rapid.Check(t, func(t *rapid.T) {
		s := dagtest.Envelopes(dagtest.EnvelopeOptions{Session: session, Parents: parents, Signers: signers, Types: []dag.TxType{dag.TxMRDetermine}}).Draw(t, "e")
		e := s.Envelope
		if e.Session != session || e.Type != dag.TxMRDetermine {
			t.Fatalf("session %s type %s", e.Session, e.Type)
		}
		for _, p := range e.Parents {
			if p != parents[0] && p != parents[1] {
				t.Fatalf("parent %s not from the options", p)
			}
		}
		found := false
		for _, sg := range signers {
			found = found || sg.Key() == e.Author
		}
		if !found {
			t.Fatal("author not from the options")
		}
	})
}

func make32(b byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = b
	}
	return s
}

// Draw reproducible envelopes outside a property test with Example; in a
// property test, Draw them from a *rapid.T.
func ExampleEnvelopes() {
	gen := dagtest.Envelopes(dagtest.EnvelopeOptions{Types: []dag.TxType{dag.TxBallotCast}})
	for i := 0; i < 3; i++ {
		s := gen.Example(i)
		_, _, id, err := dag.DecodeEnvelope(s.Bytes)
		fmt.Println(s.Envelope.Type, err == nil && id == s.ID && s.Envelope.VerifySignature() == nil)
	}
	// Output:
	// ballot.cast true
	// ballot.cast true
	// ballot.cast true
}
