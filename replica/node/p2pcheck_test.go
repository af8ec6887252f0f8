package node_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// TestKeepCosignatureOverLibp2p: a cosignature sent on
// /witan/checkpoint/1 (real hosts on loopback) is kept by the rules of
// POST /witness. A names B as its only witness (Options.Witnesses).
// Refused, nothing kept: C's valid cosignature (witan:forbidden); B's
// over a checkpoint A's key signed over a root A never had
// (witan:unknown_checkpoint); B's with a signature that does not verify
// (bad_signature); B's for the right checkpoint sent as another
// session's (schema). Kept: B's valid one, which A's replica then holds.
func TestKeepCosignatureOverLibp2p(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seed := func(b byte) *dag.Signer { k, _ := dag.SignerFromSeed(bytes.Repeat([]byte{b}, 32)); return k }
	keyA, keyB, keyC := seed(31), seed(32), seed(33)
	open := func(k *dag.Signer, witnesses ...dag.Key) *node.Node {
		cfg := loopback()
		cfg.Manual = true
		n, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: k, Witnesses: witnesses, Sync: &cfg,
			Clock: func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a, b := open(keyA, keyB.Key()), open(keyB)
	hb := ht.New(ht.Options{})
	submit(t, a, hb.Create)
	space := hb.Session.String()
	cp, err := a.Replica().Checkpoint(ctx, hb.Session)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Sync().Connect(ctx, a.Sync().Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	cosig := func(k *dag.Signer, c replica.Checkpoint) replica.Cosignature {
		msg, err := c.SigningBytes()
		if err != nil {
			t.Fatal(err)
		}
		return replica.Cosignature{Witness: k.Key(), Sig: base64.RawURLEncoding.EncodeToString(k.Sign(replica.DomainWitness, msg))}
	}
	send := func(space string, c replica.Checkpoint, cs replica.Cosignature) error {
		cb, _ := json.Marshal(c)
		sb, _ := json.Marshal(cs)
		return b.Sync().SendCosignature(ctx, a.Sync().ID(), space, cb, sb)
	}
	forged := cp
	forged.Root = dag.Sum([]byte("a history A never had"))
	msg, _ := forged.SigningBytes()
	forged.Sig = keyA.Sign(replica.DomainCheckpoint, msg)
	bad := cosig(keyB, cp)
	bad.Sig = cosig(keyB, forged).Sig
	other := ht.New(ht.Options{Simulation: true}).Session.String()
	for _, c := range []struct {
		name  string
		space string
		cp    replica.Checkpoint
		cs    replica.Cosignature
		code  dag.Code
	}{
		{"C, not named", space, cp, cosig(keyC, cp), node.CodeForbidden},
		{"a checkpoint A did not sign", space, forged, cosig(keyB, forged), node.CodeUnknownCheckpoint},
		{"a signature that does not verify", space, cp, bad, dag.CodeBadSignature},
		{"sent as another session's", other, cp, cosig(keyB, cp), dag.CodeSchema},
	} {
		var ce *sync.CheckpointError
		if err := send(c.space, c.cp, c.cs); !errors.As(err, &ce) || ce.Code != c.code {
			t.Fatalf("%s: %v, want %s", c.name, err, c.code)
		}
		if got := a.Replica().Cosignatures(cp); len(got) != 0 {
			t.Fatalf("%s: kept %+v", c.name, got)
		}
	}
	if err := send(space, cp, cosig(keyB, cp)); err != nil {
		t.Fatal(err)
	}
	if got := a.Replica().Cosignatures(cp); len(got) != 1 || got[0] != cosig(keyB, cp) {
		t.Fatalf("B's cosignature: kept %+v", got)
	}
}

// TestWitnessSeesCheckpointWithoutPull: a witness co-signs a peer's
// checkpoint signed after the witness pulled everything, with no entry
// after it (so no announcement leads to a pull). A holds a session; B
// (Options.WitnessEvery 100 ms) and C (negative: only after pulls) join
// it over loopback libp2p and pull it while A has no checkpoint. A then
// signs one: B's cosignature of it reaches A within a few rounds of B's
// loop; C's does not, even after B's arrived and ten more of its rounds.
func TestWitnessSeesCheckpointWithoutPull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seed := func(b byte) *dag.Signer { k, _ := dag.SignerFromSeed(bytes.Repeat([]byte{b}, 32)); return k }
	hb := ht.New(ht.Options{})
	space := hb.Session.String()
	// checked counts, per node, the pulls whose checkpoint check (run by
	// the node before this hook) is over.
	var checked [2]atomic.Int32
	open := func(k *dag.Signer, every time.Duration, done *atomic.Int32) *node.Node {
		cfg := loopback()
		cfg.Spaces = []string{space}
		if done != nil {
			cfg.AfterPull = func(context.Context, peer.ID, string) { done.Add(1) }
		}
		n, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: k, WitnessEvery: every, Sync: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a := open(seed(41), -1, nil)
	submit(t, a, hb.Create)
	b, c := open(seed(42), 100*time.Millisecond, &checked[0]), open(seed(43), -1, &checked[1])
	for i, w := range []*node.Node{b, c} {
		if err := w.Sync().Connect(ctx, a.Sync().Addrs()[0]); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, "the session pulled", func() bool {
			st, err := w.Has(ctx, hb.Create.ID)
			return err == nil && st == dag.Applied
		})
		// The pull's own check of A's checkpoint (it finds none) runs
		// after the entries land: waited for, not slept on, since a
		// loaded machine can take longer than any fixed pause, and a
		// check of C's that ran after A signed would co-sign.
		eventually(ctx, t, "the pull's checkpoint check over", func() bool { return checked[i].Load() > 0 && len(w.Pulls()) == 0 })
	}
	pulledC := checked[1].Load()
	cp, err := a.Replica().Checkpoint(ctx, hb.Session)
	if err != nil {
		t.Fatal(err)
	}
	cosignedBy := func(k *dag.Signer) bool {
		for _, cs := range a.Replica().Cosignatures(cp) {
			if cs.Witness == k.Key() {
				return true
			}
		}
		return false
	}
	eventually(ctx, t, "B's cosignature of A's new checkpoint", func() bool { return cosignedBy(seed(42)) })
	time.Sleep(time.Second)
	if cosignedBy(seed(43)) {
		if n := checked[1].Load(); n != pulledC {
			t.Fatalf("C pulled %d more times after A signed its checkpoint: nothing led it to pull", n-pulledC)
		}
		t.Fatal("C co-signed without a pull and without its loop: the test no longer shows the loop at work")
	}
}
