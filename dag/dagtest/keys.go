package dagtest

// Generators of keys and signed envelopes, for users' own property suites.

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

// Signers returns a generator of Ed25519 signers whose seeds rapid draws,
// so a failing case shrinks to small, reproducible keys.
func Signers() *rapid.Generator[*dag.Signer] {
	return rapid.Custom(func(t *rapid.T) *dag.Signer {
		seed := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "seed")
		s, err := dag.SignerFromSeed(seed)
		if err != nil {
			panic(err) // 32 bytes always make a key
		}
		return s
	})
}

// Keys returns a generator of valid public keys.
func Keys() *rapid.Generator[dag.Key] {
	return rapid.Custom(func(t *rapid.T) dag.Key { return Signers().Draw(t, "signer").Key() })
}

// Timestamps returns a generator of RFC 3339 UTC times in 2026, the form
// envelopes carry.
func Timestamps() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		mo := rapid.IntRange(1, 12).Draw(t, "month")
		d := rapid.IntRange(1, 28).Draw(t, "day")
		h := rapid.IntRange(0, 23).Draw(t, "hour")
		m := rapid.IntRange(0, 59).Draw(t, "minute")
		s := rapid.IntRange(0, 59).Draw(t, "second")
		return fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02dZ", mo, d, h, m, s)
	})
}

// EnvelopeOptions shapes the envelopes Envelopes generates. The zero value
// gives ballots in a random session with one to three random parents.
type EnvelopeOptions struct {
	// Session is the session every envelope belongs to; random if zero.
	Session dag.ID
	// Parents, if non-empty, are the ids parents are drawn from (one to
	// three distinct ones); else parents are random ids.
	Parents []dag.ID
	// Signers, if non-empty, are the authors drawn from; else random keys.
	Signers []*dag.Signer
	// Types are the transaction types drawn from (never session.create,
	// which Sessions makes); ballot.cast if empty.
	Types []dag.TxType
}

// Sealed is a signed envelope with its canonical bytes and tx id.
type Sealed struct {
	Envelope *dag.Envelope
	Bytes    []byte
	ID       dag.ID
}

// Envelopes returns a generator of signed, well-formed envelopes. Bodies
// are small canonical objects; they are not meaningful 30k bodies (the
// replica's validation may refuse them), which is what a test of storage,
// sync or decoding wants.
func Envelopes(o EnvelopeOptions) *rapid.Generator[Sealed] {
	return rapid.Custom(func(t *rapid.T) Sealed {
		session := o.Session
		if !session.Valid() {
			session = dag.Sum([]byte(rapid.StringN(1, 8, -1).Draw(t, "session")))
		}
		var signer *dag.Signer
		if len(o.Signers) > 0 {
			signer = rapid.SampledFrom(o.Signers).Draw(t, "signer")
		} else {
			signer = Signers().Draw(t, "signer")
		}
		typ := dag.TxBallotCast
		if len(o.Types) > 0 {
			typ = rapid.SampledFrom(o.Types).Draw(t, "type")
		}
		var parents []dag.ID
		if len(o.Parents) > 0 {
			n := rapid.IntRange(1, min(3, len(o.Parents))).Draw(t, "parents")
			parents = rapid.SliceOfNDistinct(rapid.SampledFrom(o.Parents), n, n, func(id dag.ID) dag.ID { return id }).Draw(t, "parent ids")
		} else {
			n := rapid.IntRange(1, 3).Draw(t, "parents")
			for i := 0; i < n; i++ {
				parents = append(parents, dag.Sum([]byte(fmt.Sprintf("parent-%d-%d", i, rapid.Int().Draw(t, "parent")))))
			}
			parents = dedupe(parents)
		}
		choice := rapid.SampledFrom([]string{"approve", "reject", "abstain"}).Draw(t, "choice")
		n := rapid.IntRange(0, 1000).Draw(t, "n")
		body := []byte(fmt.Sprintf(`{"choice":%q,"n":%d}`, choice, n))
		e := &dag.Envelope{Type: typ, Session: session, Parents: parents, Body: body, TS: Timestamps().Draw(t, "ts")}
		b, id, err := e.Seal(signer)
		if err != nil {
			panic(fmt.Sprintf("dagtest: generated an invalid envelope: %v", err))
		}
		return Sealed{Envelope: e, Bytes: b, ID: id}
	})
}

func dedupe(ids []dag.ID) []dag.ID {
	out := ids[:0]
	seen := map[dag.ID]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
