package replica_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// forge returns tx with its signature altered in a way of its own (k):
// same body, parents and author, another id, a signature that fails.
func forge(tx ht.Tx, k int) ht.Tx {
	env := *tx.Env
	env.Sig = slices.Clone(env.Sig)
	env.Sig[k%len(env.Sig)] ^= byte(1 << (k / len(env.Sig) % 8))
	f := ht.Tx{Env: &env, Bytes: env.Canonical(), ID: env.ID(), Parents: tx.Parents}
	return f
}

func junk(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) //nolint:errcheck // never fails
	return b
}

// TestRefusedLeavesNothing: forged envelopes whose parents are held,
// unauthorised ones, forged session.creates and the attachments they all
// bring are refused and not stored; the quarantine keeps a bounded record
// per source, oldest forgotten first; a restart loads no space for the
// forged session.creates. On 9f8fa68 all of it was stored for good.
func TestRefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const perSource = 50
	r, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey(t, 0), QuarantinePerSource: perSource})
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	for _, tx := range []ht.Tx{b.Create, roster} {
		if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("setup: %+v %v", rc, err)
		}
	}
	space := b.Session
	key := b.KeyRegister(ht.Member(7), roster.ID)
	unauth := b.GroupUpdate(ht.Member(3), "roster", ht.Members(0, 10), ht.Members(3, 4), roster.ID) // not an admin

	n := 120
	if testing.Short() {
		n = 60
	}
	var refused []dag.ID
	var attached [][]byte
	attacker := dag.WithSource(ctx, "http:192.0.2.7")
	for k := range n {
		f := forge(key, k)
		a := junk(16 << 10)
		rc, err := r.Submit(attacker, f.Bytes, [][]byte{a})
		if err != nil || rc.Status != "rejected" || rc.Errors[0].Code != dag.CodeBadSignature {
			t.Fatalf("forgery %d: %+v %v", k, rc, err)
		}
		refused, attached = append(refused, f.ID), append(attached, a)
	}
	// Unauthorised, from another source, with its object and junk.
	a := junk(16 << 10)
	rc, err := r.Submit(dag.WithSource(ctx, "http:192.0.2.8"), unauth.Bytes, append(slices.Clone(unauth.Attach), a))
	if err != nil || rc.Status != "rejected" || rc.Errors[0].Code != dag.CodeNotAuthorized {
		t.Fatalf("unauthorised: %+v %v", rc, err)
	}
	refused, attached = append(refused, unauth.ID), append(attached, a)
	attached = append(attached, unauth.Attach...)
	// Forged session.creates of fresh sessions, from a peer.
	var fakeSpaces []dag.ID
	for k := range 20 {
		s := ht.New(ht.Options{Label: fmt.Sprintf("fake %d", k)})
		f := forge(s.Create, k)
		outs, err := r.Ingest(dag.WithSource(ctx, "peer:12D3KooWSybil"), []replica.Submission{{Envelope: f.Bytes, Attachments: s.Create.Attach}})
		if err != nil || outs[0].Status != replica.Quarantined || outs[0].Code != dag.CodeBadSignature {
			t.Fatalf("forged session.create: %+v %v", outs, err)
		}
		refused = append(refused, f.ID)
		fakeSpaces = append(fakeSpaces, s.Session)
	}

	for _, id := range refused {
		if s, err := st.Has(ctx, id); err != nil || s != dag.Absent {
			t.Fatalf("refused %s is held as %s (%v): nothing refused may be stored", id, s, err)
		}
	}
	for _, a := range attached {
		if _, err := st.Object(ctx, dag.Sum(a)); !errors.Is(err, dag.ErrNotFound) {
			t.Fatalf("an attachment of a refused submission is stored (%v)", err)
		}
	}
	// Besides the session, the store holds the node key's record and the node's own refusal log
	// (D40, node-local): one record, for the unauthorised entry, the one
	// refusal here the log keeps (bad signatures are not logged, so the
	// forgeries leave nothing there either).
	spaces, err := st.Spaces(ctx)
	if err != nil || !slices.Equal(spaces, []string{space.String(), replica.IdentitySpace, "witan-local/refusals"}) {
		t.Fatalf("store spaces %v %v, want only %s, the node key's record and the refusal log", spaces, err, space)
	}
	if recs, size := r.RefusalLog(0, 0); size != 1 || recs[0].Code != dag.CodeNotAuthorized {
		t.Fatalf("refusal log %+v (size %d), want the one not_authorized refusal", recs, size)
	}
	if got := r.Sessions(); !slices.Equal(got, []dag.ID{space}) {
		t.Fatalf("sessions in memory %v, want only %s", got, space)
	}
	// The record: bounded per source, the newest kept.
	qs := r.QuarantineStats()
	if qs.Held != perSource+1+20 || qs.Refused != uint64(n+1+20) || qs.Evicted != uint64(n-perSource) || qs.Sources != 3 {
		t.Fatalf("quarantine stats %+v, want %d held, %d refused, %d evicted, 3 sources", qs, perSource+21, n+21, n-perSource)
	}
	if _, ok := r.Refused(refused[0]); ok {
		t.Fatalf("the oldest forgery is still recorded past the per-source bound")
	}
	if q, ok := r.Refused(refused[n-1]); !ok || q.Source != "http:192.0.2.7" || q.Code != dag.CodeBadSignature {
		t.Fatalf("the newest forgery's record: %+v %v", q, ok)
	}
	page, more := r.Refusals(space.String(), 0, 20)
	if len(page) != 20 || !more || page[0].ID != refused[n-perSource] {
		t.Fatalf("first page: %d records, more %v", len(page), more)
	}
	page2, _ := r.Refusals(space.String(), page[len(page)-1].Seq, 1000)
	if len(page)+len(page2) != perSource+1 {
		t.Fatalf("pages hold %d records of the space, want %d", len(page)+len(page2), perSource+1)
	}
	// The refused entry, sent again after eviction, is refused again.
	rc, err = r.Submit(attacker, forge(key, 0).Bytes, nil)
	if err != nil || rc.Status != "rejected" || rc.Errors[0].Code != dag.CodeBadSignature {
		t.Fatalf("forgery again: %+v %v", rc, err)
	}
	// An honest entry still goes in.
	if rc, err := r.Submit(ctx, key.Bytes, key.Attach); err != nil || rc.Status != "accepted" {
		t.Fatalf("honest key.register: %+v %v", rc, err)
	}
	r.Close()
	st.Close()

	st, err = badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err = replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Sessions(); !slices.Equal(got, []dag.ID{space}) {
		t.Fatalf("sessions after restart %v, want only %s (no forged session.create loads)", got, space)
	}
	for _, s := range fakeSpaces[:3] {
		if _, _, err := r.State(ctx, s); err == nil {
			t.Fatalf("a forged session %s has state after restart", s)
		}
	}
}
