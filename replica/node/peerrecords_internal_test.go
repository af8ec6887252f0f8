package node

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// signedCheckpoint is key's checkpoint of session at size (its root the
// Merkle root of size made-up leaves, tag varying them).
func signedCheckpoint(t *testing.T, key *dag.Signer, session string, size uint64, tag string) replica.Checkpoint {
	t.Helper()
	ids := make([]dag.ID, size)
	for i := range ids {
		ids[i] = dag.Sum([]byte(fmt.Sprintf("%s %d", tag, i)))
	}
	c := replica.Checkpoint{Space: session, Size: size, Root: replica.MerkleRoot(ids), TS: time.Date(2026, 9, 22, 0, 0, 0, 0, time.UTC), Node: key.Key()}
	msg, err := c.SigningBytes()
	if err != nil {
		t.Fatal(err)
	}
	c.Sig = key.Sign(replica.DomainCheckpoint, msg)
	return c
}

func openDir(t *testing.T, dir string) *Node {
	t.Helper()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{41}, 32))
	n, err := Open(context.Background(), Options{Dir: dir, NodeKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// The durable records of peer checks keep their bounds across restarts:
// a peer's verified checkpoint is written only when it moves forward (an
// older or equal one writes nothing), at most maxCheckedPeers peers are
// held (the one written least recently out first, after a restart too);
// a fork is kept once, at most MaxForksPerPeer per peer.
func TestPeerRecordsBounded(t *testing.T) {
	ctx := context.Background()
	peerKey, _ := dag.SignerFromSeed(bytes.Repeat([]byte{42}, 32))
	session := dag.Sum([]byte("session")).String()
	dir := t.TempDir()
	n := openDir(t, dir)
	for _, size := range []uint64{3, 5, 5, 4} {
		if err := n.keepVerified(ctx, "peer-0", session, signedCheckpoint(t, peerKey, session, size, "honest")); err != nil {
			t.Fatal(err)
		}
	}
	if n.peerRec.written != 2 { // 3, then 5; 5 again and 4 write nothing
		t.Fatalf("records written: %d, want 2", n.peerRec.written)
	}
	for i := 1; i <= maxCheckedPeers+2; i++ { // peer-0 and peer-1, then peer-2 are the oldest
		if err := n.keepVerified(ctx, fmt.Sprintf("peer-%d", i), session, signedCheckpoint(t, peerKey, session, 1, "honest")); err != nil {
			t.Fatal(err)
		}
	}
	held := func(n *Node) {
		t.Helper()
		if len(n.peerRec.verified) != maxCheckedPeers {
			t.Fatalf("peers held: %d, want %d", len(n.peerRec.verified), maxCheckedPeers)
		}
		for i, want := range map[int]bool{0: false, 1: false, 2: false, 3: true, maxCheckedPeers + 2: true} {
			if _, ok := n.verifiedOf(fmt.Sprintf("peer-%d", i), session); ok != want {
				t.Errorf("peer-%d held: %v, want %v", i, ok, want)
			}
		}
	}
	held(n)
	verified := signedCheckpoint(t, peerKey, session, 5, "honest")
	for i := range MaxForksPerPeer + 3 {
		claimed := signedCheckpoint(t, peerKey, session, 6, fmt.Sprintf("forged %d", i%(MaxForksPerPeer+1)))
		if err := n.keepFork(ctx, "liar", session, "detail", verified, claimed); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.keepFork(ctx, "other", session, string(bytes.Repeat([]byte("x"), 2*maxForkDetail)), verified, signedCheckpoint(t, peerKey, session, 6, "forged 0")); err != nil {
		t.Fatal(err)
	}
	forks := func(n *Node) {
		t.Helper()
		fs, size, full := n.Forks(0, 0)
		if size != MaxForksPerPeer+1 || len(fs) != MaxForksPerPeer+1 || full || fs[MaxForksPerPeer].Peer != "other" || len(fs[MaxForksPerPeer].Detail) != maxForkDetail {
			t.Fatalf("forks: %d %v %+v", size, full, fs)
		}
		if fs, _, _ := n.Forks(MaxForksPerPeer, 5); len(fs) != 1 || fs[0].Index != MaxForksPerPeer {
			t.Fatalf("forks after %d: %+v", MaxForksPerPeer, fs)
		}
	}
	forks(n)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openDir(t, dir)
	held(n)
	if cp, ok := n.verifiedOf("peer-3", session); !ok || cp.Size != 1 || cp.Space != session {
		t.Fatalf("peer-3 after a restart: %+v %v", cp, ok)
	}
	if n.peerRec.written != 2+maxCheckedPeers+2 {
		t.Fatalf("records after a restart: %d", n.peerRec.written)
	}
	forks(n)
}
