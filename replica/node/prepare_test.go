package node_test

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// forgeSig returns env's bytes with one character of the signature's
// base64 changed: the same envelope, another id, a signature that fails.
func forgeSig(t *testing.T, env []byte) []byte {
	t.Helper()
	at := bytes.Index(env, []byte(`"sig":"`))
	if at < 0 {
		t.Fatal("no signature")
	}
	out := slices.Clone(env)
	k := at + len(`"sig":"`) + 10
	if out[k] == 'A' {
		out[k] = 'B'
	} else {
		out[k] = 'A'
	}
	return out
}

// Node.Prepare (sync.Preparer) changes no outcome of the Ingest after it:
// with forgeries among the items, and with an item whose bytes were
// swapped for a forgery after Prepare saw it (its decoding left behind
// must not be used), the results equal a node's that was not prepared.
func TestPrepareChangesNoVerdict(t *testing.T) {
	ctx := context.Background()
	space, items := benchBallots(300)
	call := slices.Clone(items)
	call = append(call, sync.Item{Data: forgeSig(t, items[200].Data)}, sync.Item{Data: []byte(`{"not":"an envelope"}`)})
	open := func() *node.Node {
		n, err := node.Open(ctx, node.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	prep, plain := open(), open()
	prep.Prepare(ctx, space, call)
	for i, it := range call[:len(items)] {
		if it.Prepared == nil {
			t.Fatalf("item %d: Prepare left nothing for Ingest", i)
		}
	}
	swapped := forgeSig(t, items[250].Data)
	call[250].Data = swapped // Prepared still holds the real ballot's decoding
	got, err := prep.Ingest(ctx, space, call)
	if err != nil {
		t.Fatal(err)
	}
	fresh := slices.Clone(items)
	fresh[250].Data = swapped
	fresh = append(fresh, call[len(items):]...)
	for i := range fresh {
		fresh[i].Prepared = nil
	}
	want, err := plain.Ingest(ctx, space, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes after Prepare\n%+v\nwithout\n%+v", got, want)
	}
	for _, k := range []int{250, len(items)} {
		if r := got.Items[k]; r.Outcome != sync.Quarantined || r.Code != dag.CodeBadSignature {
			t.Fatalf("forgery %d: %+v, want quarantined bad_signature", k, r)
		}
	}
	// The ballots are a chain (housetest.BallotChain): the three entries
	// of its head and ballots up to item 249 are accepted, the rest wait
	// for item 250, which only came forged.
	if n := got.Count(sync.Accepted); n != 250 {
		t.Fatalf("%d accepted, want 250", n)
	}
}
