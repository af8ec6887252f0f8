package replica_test

// Tests of what survives a restart: checkpoints (and so finality), entries
// held back for an object, and the node-local spaces that keep them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/view"
)

// diskNode opens and reopens a replica on one Badger directory.
type diskNode struct {
	t     *testing.T
	dir   string
	clock *clock
	st    *badgerstore.Store
	r     *replica.Replica
	// wrap, when set, wraps the store the replica is opened on.
	wrap func(dag.Store) dag.Store
}

func newDiskNode(t *testing.T) *diskNode {
	n := &diskNode{t: t, dir: t.TempDir(), clock: &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}}
	t.Cleanup(n.close)
	return n
}

func (n *diskNode) open() error {
	n.t.Helper()
	st, err := badgerstore.Open(n.dir, badgerstore.Options{})
	if err != nil {
		n.t.Fatal(err)
	}
	var s dag.Store = st
	if n.wrap != nil {
		s = n.wrap(st)
	}
	r, err := replica.Open(context.Background(), replica.Options{Store: s, NodeKey: nodeKey(n.t, 0), Clock: n.clock.now})
	if err != nil {
		st.Close()
		return err
	}
	n.st, n.r = st, r
	return nil
}

func (n *diskNode) mustOpen() {
	n.t.Helper()
	if err := n.open(); err != nil {
		n.t.Fatal(err)
	}
}

func (n *diskNode) close() {
	if n.r != nil {
		n.r.Close()
		n.st.Close()
		n.r, n.st = nil, nil
	}
}

func (n *diskNode) restart() {
	n.t.Helper()
	n.close()
	n.mustOpen()
}

// finalitySnapshot is everything finality-related the replica serves about
// a session: its checkpoints (canonical JSON, signatures included), the
// finality of every tx, and every MR as served (status, finality, the
// evaluations with their checkpoint times).
func finalitySnapshot(t *testing.T, r *replica.Replica, space dag.ID, txs []ht.Tx) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, c := range r.Checkpoints(space) {
		j, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "checkpoint %s %s\n", j, c.TS.Format(time.RFC3339Nano))
	}
	for _, tx := range txs {
		f, err := r.Finality(ctx, space, tx.ID)
		if err != nil {
			t.Fatalf("finality of %s: %v", tx.Env.Type, err)
		}
		fmt.Fprintf(&b, "%s %s %s\n", tx.Env.Type, tx.ID, f)
	}
	mrs, err := view.New(r).MRs(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(mrs)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(j)
	return b.String()
}

// TestCheckpointsSurviveRestart: checkpoints signed before a restart are
// read back by Open, verify, and give the same finality to every entry
// and MR; the chain goes on after the restart; the node-local space that
// keeps them is no session.
func TestCheckpointsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	n := newDiskNode(t)
	n.mustOpen()
	b := ht.New(ht.Options{})
	space := b.Session
	var txs []ht.Tx
	last := func() dag.ID { return txs[len(txs)-1].ID }
	sub := func(tx ht.Tx) {
		t.Helper()
		submit(t, n.r, tx, "accepted")
		txs = append(txs, tx)
	}
	sub(b.Create)
	sub(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), last()))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, last())
	sub(open)
	n.clock.advance(time.Hour)
	c1, err := n.r.Checkpoint(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	var ballots []dag.ID
	for i := 0; i < 4; i++ {
		tx := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last())
		sub(tx)
		ballots = append(ballots, tx.ID)
	}
	sub(b.Determine(ht.Member(4), mr, ballots, "approved", last()))
	n.clock.advance(72 * time.Hour)
	if _, err := n.r.Checkpoint(ctx, space); err != nil {
		t.Fatal(err)
	}
	// Two checkpoints of the same log at the same time are two records.
	if _, err := n.r.Checkpoint(ctx, space); err != nil {
		t.Fatal(err)
	}
	sub(b.KeyRegister(ht.Member(6), last())) // after every checkpoint: provisional
	want := finalitySnapshot(t, n.r, space, txs)
	if !strings.Contains(want, "final_advisory") || !strings.Contains(want, "provisional") {
		t.Fatalf("the snapshot should hold both labels:\n%s", want)
	}
	if m, _ := view.New(n.r).MR(ctx, space, mr); m.Finality != replica.FinalAdvisory {
		t.Fatalf("MR before restart: %s", m.Finality)
	}

	n.restart()
	if got := finalitySnapshot(t, n.r, space, txs); got != want {
		t.Fatalf("after restart:\n%s\nwant:\n%s", got, want)
	}
	cps := n.r.Checkpoints(space)
	if len(cps) != 3 {
		t.Fatalf("%d checkpoints after restart, want 3", len(cps))
	}
	for i, c := range cps {
		if err := c.Verify(); err != nil {
			t.Fatalf("checkpoint %d after restart: %v", i, err)
		}
		if c.Space != space.String() || c.Node != n.r.NodeKey() {
			t.Fatalf("checkpoint %d: space %q node %s", i, c.Space, c.Node)
		}
	}
	if cps[0].Size != c1.Size || cps[0].Root != c1.Root || !cps[0].TS.Equal(c1.TS) {
		t.Fatalf("first checkpoint %+v, want %+v", cps[0], c1)
	}
	log, _ := n.r.Log(ctx, space, 0, 0)
	if cps[1].Root != replica.MerkleRoot(log[:cps[1].Size]) {
		t.Fatal("second checkpoint's root is not the Merkle root of the log's prefix")
	}

	// The chain goes on, and a receipt names the latest size.
	n.clock.advance(time.Hour)
	c4, err := n.r.Checkpoint(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if c4.Size != uint64(len(txs)) || c4.Root != replica.MerkleRoot(log) {
		t.Fatalf("checkpoint after restart: size %d root %s", c4.Size, c4.Root)
	}
	n.restart()
	if got := n.r.Checkpoints(space); len(got) != 4 || got[3].Size != c4.Size {
		t.Fatalf("checkpoints after the second restart: %d", len(got))
	}
	if f, _ := n.r.Finality(ctx, space, txs[len(txs)-1].ID); f != replica.FinalAdvisory {
		t.Fatalf("the last entry after the checkpoint that covers it and a restart: %s", f)
	}

	// The node-local spaces are in the store but are no session.
	if s := n.r.Sessions(); !slices.Equal(s, []dag.ID{space}) {
		t.Fatalf("sessions %v, want [%s]", s, space)
	}
	all, err := n.st.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var local []string
	for _, s := range all {
		if replica.IsLocalSpace(s) && s != replica.IdentitySpace {
			local = append(local, s)
		}
	}
	if len(local) != 1 || !strings.HasSuffix(local[0], space.String()) {
		t.Fatalf("store spaces %v: want one node-local space of %s", all, space)
	}
	// A node-local space has no session id, so no read of a session can
	// name it: the reads take a dag.ID. Its name's hash is an id that
	// names no session.
	other := dag.Sum([]byte(local[0]))
	if _, err := n.r.Checkpoint(ctx, other); !errors.Is(err, replica.ErrUnknownSpace) {
		t.Fatalf("checkpoint of a session the replica does not hold: %v", err)
	}
	if _, _, err := n.r.State(ctx, other); !errors.Is(err, replica.ErrUnknownSpace) {
		t.Fatalf("state of a session the replica does not hold: %v", err)
	}
}

func TestIsLocalSpace(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{replica.LocalPrefix + "checkpoints/sha256:00", true},
		{replica.LocalPrefix + "held/sha256:00", true},
		{"sha256:" + strings.Repeat("0", 64), false},
		{"mem:notes", false},
		{"witan-local", false},
		{"", false},
	} {
		if got := replica.IsLocalSpace(c.name); got != c.want {
			t.Errorf("IsLocalSpace(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// faultyStore fails every Put into a space for which fail returns true.
type faultyStore struct {
	dag.Store
	fail func(space string) bool
}

var errInjected = errors.New("injected write failure")

func (f *faultyStore) Put(ctx context.Context, b dag.Batch) (dag.Result, error) {
	for _, e := range b.Entries {
		if f.fail(e.Space) {
			return dag.Result{}, errInjected
		}
	}
	return f.Store.Put(ctx, b)
}

// TestCheckpointWriteFails: a checkpoint whose write fails is not made:
// Checkpoint returns the error, nothing turns final_advisory, and the
// chain goes on from the last written checkpoint once writes succeed.
func TestCheckpointWriteFails(t *testing.T) {
	ctx := context.Background()
	n := newDiskNode(t)
	failing := false
	n.wrap = func(s dag.Store) dag.Store {
		return &faultyStore{Store: s, fail: func(sp string) bool { return failing && replica.IsLocalSpace(sp) }}
	}
	n.mustOpen()
	b := ht.New(ht.Options{})
	space := b.Session
	submit(t, n.r, b.Create, "accepted")
	c1, err := n.r.Checkpoint(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	submit(t, n.r, roster, "accepted")
	failing = true
	if _, err := n.r.Checkpoint(ctx, space); !errors.Is(err, errInjected) {
		t.Fatalf("checkpoint with a failing store: %v", err)
	}
	if cps := n.r.Checkpoints(space); len(cps) != 1 {
		t.Fatalf("%d checkpoints after a failed write, want 1", len(cps))
	}
	if f, _ := n.r.Finality(ctx, space, roster.ID); f != replica.Provisional {
		t.Fatalf("an entry only a failed checkpoint covers: %s", f)
	}
	rc := submit(t, n.r, b.KeyRegister(ht.Member(6), roster.ID), "accepted")
	if rc.CheckpointSize != c1.Size {
		t.Fatalf("receipt names checkpoint size %d, want %d", rc.CheckpointSize, c1.Size)
	}
	failing = false
	if _, err := n.r.Checkpoint(ctx, space); err != nil {
		t.Fatal(err)
	}
	n.restart()
	cps := n.r.Checkpoints(space)
	if len(cps) != 2 || cps[0].Size != 1 || cps[1].Size != 3 {
		t.Fatalf("checkpoints after restart: %+v", cps)
	}
}

// TestDamagedCheckpointRefused: a checkpoint record that does not match
// the log (written behind the replica's back, signed by the node's own
// key or not) makes Open fail with ErrCheckpointMismatch rather than serve
// a finality it cannot back.
func TestDamagedCheckpointRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(c *replica.Checkpoint) // then signed again, unless it sets Sig
	}{
		{"root", func(c *replica.Checkpoint) { c.Root = dag.Sum([]byte("x")) }},
		{"size beyond the log", func(c *replica.Checkpoint) { c.Size = 99 }},
		{"size going back", func(c *replica.Checkpoint) { c.Size = 0; c.Root = replica.MerkleRoot(nil) }},
		{"time going back", func(c *replica.Checkpoint) { c.TS = c.TS.Add(-time.Hour) }},
		{"signature", func(c *replica.Checkpoint) { c.Sig = append([]byte(nil), c.Sig...); c.Sig[3] ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newDiskNode(t)
			n.mustOpen()
			b := ht.New(ht.Options{})
			space := b.Session
			submit(t, n.r, b.Create, "accepted")
			c, err := n.r.Checkpoint(ctx, space)
			if err != nil {
				t.Fatal(err)
			}
			cs := replica.LocalPrefix + "checkpoints/" + space.String()
			ids, err := n.st.Log(ctx, cs, 0, 0)
			if err != nil || len(ids) != 1 {
				t.Fatalf("checkpoint space log %v %v", ids, err)
			}
			sig := c.Sig
			tc.damage(&c)
			if string(sig) == string(c.Sig) {
				msg, err := c.SigningBytes()
				if err != nil {
					t.Fatal(err)
				}
				c.Sig = nodeKey(t, 0).Sign(replica.DomainCheckpoint, msg)
			}
			raw, err := c.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var rec map[string]any
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			rec["seq"], rec["session"] = 2, space
			data, err := dag.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			bad := dag.Entry{ID: dag.Sum(data), Space: cs, Parents: []dag.ID{ids[0]}, Data: data}
			if _, err := n.st.Put(ctx, dag.Batch{Entries: []dag.Entry{bad}}); err != nil {
				t.Fatal(err)
			}
			n.close()
			if err := n.open(); !errors.Is(err, replica.ErrCheckpointMismatch) {
				t.Fatalf("open with a damaged checkpoint: %v", err)
			}
		})
	}
}

// TestHeldEntryAcrossRestart: an entry held back for an object that has
// not arrived is still waiting for it after a restart, and is applied
// when the object arrives, attached to another entry or to a submission
// that is itself a duplicate, without the entry being sent again.
func TestHeldEntryAcrossRestart(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"with another entry", "with a duplicate", "in the store before the restart"} {
		t.Run(how, func(t *testing.T) {
			n := newDiskNode(t)
			n.mustOpen()
			b := ht.New(ht.Options{})
			space := b.Session
			roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
			upd := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 6), ht.Members(0, 1), roster.ID)
			submit(t, n.r, b.Create, "accepted")
			submit(t, n.r, roster, "accepted")
			outs, err := n.r.Ingest(ctx, []replica.Submission{{Envelope: upd.Bytes}})
			if err != nil || outs[0].Status != replica.Pending {
				t.Fatalf("entry without its object: %+v %v", outs, err)
			}
			if how == "in the store before the restart" {
				// The object reaches the store without the replica seeing
				// it (here: written directly), as after a crash between
				// the two writes of older code; Open judges the entry again.
				var objs []dag.Object
				for _, a := range upd.Attach {
					objs = append(objs, dag.NewObject(a))
				}
				if _, err := n.st.Put(ctx, dag.Batch{Objects: objs}); err != nil {
					t.Fatal(err)
				}
			}
			n.restart()
			outs = nil
			if g, _ := n.r.Group(ctx, space, "roster"); how != "in the store before the restart" && len(g.Members) != 4 {
				t.Fatalf("roster %d members before the object arrived", len(g.Members))
			}
			switch how {
			case "with another entry":
				key := b.KeyRegister(ht.Member(7), roster.ID)
				outs, err = n.r.Ingest(ctx, []replica.Submission{{Envelope: key.Bytes, Attachments: upd.Attach}})
			case "with a duplicate":
				outs, err = n.r.Ingest(ctx, []replica.Submission{{Envelope: roster.Bytes, Attachments: upd.Attach}})
			}
			if err != nil || outs != nil && outs[0].Status != replica.Accepted {
				t.Fatalf("ingest with the object: %+v %v", outs, err)
			}
			if f, err := n.r.Finality(ctx, space, upd.ID); err != nil || f != replica.Provisional {
				t.Fatalf("the held entry after its object arrived: %s %v", f, err)
			}
			if g, _ := n.r.Group(ctx, space, "roster"); len(g.Members) != 6 {
				t.Fatalf("roster %d members, want 6", len(g.Members))
			}
			if p, _ := n.r.Pending(ctx, space); len(p) != 0 {
				t.Fatalf("still pending: %v", p)
			}
			// The object is in the store: the state derives again from it.
			_, want, _ := n.r.State(ctx, space)
			n.restart()
			if _, got, err := n.r.State(ctx, space); err != nil || got != want {
				t.Fatalf("state after another restart %s %v, want %s", got, err, want)
			}
		})
	}
}

// TestHeldEntryRefusedAcrossRestart: a held entry judged again after a
// restart is refused with its code when its object turns out to make it
// invalid (here: signed by someone who is not an admin), like any other.
func TestHeldEntryRefusedAcrossRestart(t *testing.T) {
	ctx := context.Background()
	n := newDiskNode(t)
	n.mustOpen()
	b := ht.New(ht.Options{})
	space := b.Session.String()
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	upd := b.GroupUpdate(ht.Member(3), "roster", ht.Members(0, 6), ht.Members(3, 4), roster.ID) // not an admin
	submit(t, n.r, b.Create, "accepted")
	submit(t, n.r, roster, "accepted")
	if outs, err := n.r.Ingest(ctx, []replica.Submission{{Envelope: upd.Bytes}}); err != nil || outs[0].Status != replica.Pending {
		t.Fatalf("entry without its object: %+v %v", outs, err)
	}
	n.restart()
	key := b.KeyRegister(ht.Member(7), roster.ID)
	if _, err := n.r.Ingest(ctx, []replica.Submission{{Envelope: key.Bytes, Attachments: upd.Attach}}); err != nil {
		t.Fatal(err)
	}
	q := n.r.Quarantine(space)
	if len(q) != 1 || q[0].ID != upd.ID || q[0].Code != dag.CodeNotAuthorized {
		t.Fatalf("quarantine %+v, want the update refused not_authorized", q)
	}
}

// TestSubmitMeetsHeldEntries: a client's submission that promotes a
// peer's entry naming a missing object is accepted (the peer's entry
// waits); one whose attachments bring a held entry's object applies it;
// and one refused for its own missing object leaves no trace of the held
// entry it woke, which waits again.
func TestSubmitMeetsHeldEntries(t *testing.T) {
	ctx := context.Background()
	r := openReplica(t, nil)
	b := ht.New(ht.Options{})
	space := b.Session
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	key := b.KeyRegister(ht.Member(7), roster.ID)
	upd := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 6), ht.Members(0, 1), key.ID)
	upd2 := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 8), ht.Members(0, 1), key.ID)
	submit(t, r, b.Create, "accepted")
	submit(t, r, roster, "accepted")
	if outs, err := r.Ingest(ctx, []replica.Submission{{Envelope: upd.Bytes}}); err != nil || outs[0].Status != replica.Pending {
		t.Fatalf("peer entry before its parent: %+v %v", outs, err)
	}
	// The client's entry is upd's parent: upd is promoted, and held.
	submit(t, r, key, "accepted")
	if p, _ := r.Pending(ctx, space); !slices.Equal(p, []dag.ID{upd.ID}) {
		t.Fatalf("pending %v, want the held update", p)
	}
	// A submission refused for its own missing object, whose attachments
	// wake upd: nothing of the Put is kept, upd waits again.
	rc, err := r.Submit(ctx, upd2.Bytes, upd.Attach)
	if err != nil || rc.Status != "rejected" || code(rc) != dag.CodeUnknownParent {
		t.Fatalf("submission without its own object: %+v %v", rc, err)
	}
	if rc.CheckpointSize != 0 {
		t.Fatalf("checkpoint size %d", rc.CheckpointSize)
	}
	if g, _ := r.Group(ctx, space, "roster"); len(g.Members) != 4 {
		t.Fatalf("roster has %d members after a refused submission, want 4", len(g.Members))
	}
	st, _, err := r.State(ctx, space)
	if err != nil || st.Entries != 3 {
		t.Fatalf("state after a refused submission: %d entries %v", st.Entries, err)
	}
	// A submission that brings upd's object applies it.
	rc2, err := r.Submit(ctx, b.KeyRegister(ht.Member(9), key.ID).Bytes, upd.Attach)
	if err != nil || rc2.Status != "accepted" {
		t.Fatalf("submission bringing the held entry's object: %+v %v", rc2, err)
	}
	if g, _ := r.Group(ctx, space, "roster"); len(g.Members) != 6 {
		t.Fatalf("roster has %d members, want 6", len(g.Members))
	}
	if p, _ := r.Pending(ctx, space); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
}

// TestLegacyCheckpointLoads: a checkpoint record signed as witan signed
// them before the session was part of the signed bytes (Legacy) still
// opens after a restart, beside one signed with its session: it verifies,
// is served without "session" (so a client's check of its signature
// holds), and the signed-with-session one is served with it. A damaged
// signature is still refused (TestDamagedCheckpointRefused).
func TestLegacyCheckpointLoads(t *testing.T) {
	ctx := context.Background()
	n := newDiskNode(t)
	n.mustOpen()
	b := ht.New(ht.Options{})
	space := b.Session
	submit(t, n.r, b.Create, "accepted")
	c, err := n.r.Checkpoint(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	cs := replica.LocalPrefix + "checkpoints/" + space.String()
	ids, err := n.st.Log(ctx, cs, 0, 0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("checkpoint space log %v %v", ids, err)
	}
	old := c
	old.Legacy = true
	msg, err := old.SigningBytes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(msg), space.String()) {
		t.Fatalf("legacy signing bytes name the session: %s", msg)
	}
	old.Sig = nodeKey(t, 0).Sign(replica.DomainCheckpoint, msg)
	raw, err := old.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["seq"], rec["session"] = 2, space
	data, err := dag.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	e := dag.Entry{ID: dag.Sum(data), Space: cs, Parents: []dag.ID{ids[0]}, Data: data}
	if _, err := n.st.Put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		t.Fatal(err)
	}
	n.restart()
	cps := n.r.Checkpoints(space)
	if len(cps) != 2 || cps[0].Legacy || !cps[1].Legacy {
		t.Fatalf("checkpoints after restart: %+v", cps)
	}
	for i, c := range cps {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := replica.DecodeCheckpoint(j)
		if err != nil || back.Verify() != nil {
			t.Fatalf("checkpoint %d as served (%s) does not verify: %v", i, j, err)
		}
		if has := strings.Contains(string(j), `"session"`); has == c.Legacy {
			t.Fatalf("checkpoint %d (legacy %v) served as %s", i, c.Legacy, j)
		}
	}
}
