package replica

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// TestPreVerifyChangesNoVerdict: envelopes checked ahead by PreVerify,
// forgeries among them, get from Ingest exactly the outcomes a replica
// that did not pre-verify gives them; only the valid ones are remembered,
// and Ingest takes every one it was handed (the check it skips).
func TestPreVerifyChangesNoVerdict(t *testing.T) {
	ctx := context.Background()
	open := func() *Replica {
		r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	_, txs := chain(40)
	all := subs(txs)
	forged := 0
	for _, k := range []int{3, 17, 30} { // a forgery beside the real entry
		f := *txs[k].Env
		f.Sig = slices.Clone(f.Sig)
		f.Sig[k] ^= 1
		all = append(all, Submission{Envelope: f.Canonical()})
		forged++
	}
	all = append(all, Submission{Envelope: []byte(`{"not":"an envelope"}`)})

	pre, plain := open(), open()
	untouched := slices.Clone(all) // PreVerify keeps its decodings in all
	pre.PreVerify(all)
	if got := pre.pre.Len(); got != len(txs) {
		t.Fatalf("PreVerify remembers %d entries, want the %d valid ones", got, len(txs))
	}
	got, err := pre.Ingest(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Ingest(ctx, untouched)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes after PreVerify\n%+v\nwithout\n%+v", got, want)
	}
	bad := 0
	for _, o := range got {
		if o.Code == dag.CodeBadSignature {
			bad++
		}
	}
	if bad != forged {
		t.Fatalf("%d refused bad_signature, want %d", bad, forged)
	}
	if n := pre.pre.Len(); n != 0 {
		t.Fatalf("Ingest left %d pre-verified entries untaken: it checked them again", n)
	}
}
