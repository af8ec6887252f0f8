package replica

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

func testNode(t testing.TB) *dag.Signer {
	s, err := dag.SignerFromSeed(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// chain returns a session's create and roster, then n key.register
// entries each the child of the one before.
func chain(n int) (*ht.Builder, []ht.Tx) {
	b := ht.New(ht.Options{})
	txs := []ht.Tx{b.Create, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)}
	for i := 0; i < n; i++ {
		txs = append(txs, b.KeyRegister(ht.Member(10+i), txs[len(txs)-1].ID))
	}
	return b, txs
}

func subs(txs []ht.Tx) []Submission {
	out := make([]Submission, 0, len(txs))
	for _, tx := range txs {
		out = append(out, Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
	}
	return out
}

// TestPromotionVerifiesOnce: entries that wait for their parents are
// promoted without being decoded or verified again when this process
// verified them on arrival; after a restart (or with the cache off) they
// are verified again, once each, and the outcome is the same.
func TestPromotionVerifiesOnce(t *testing.T) {
	ctx := context.Background()
	const n = 20
	for _, tc := range []struct {
		name       string
		cache      int
		restart    bool
		reverified int
	}{
		{"cache", 0, false, 0},
		{"cache off", -1, false, n},
		{"cache too small for one entry", 16, false, n},
		{"restart", 0, true, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			open := func() (*Replica, *badgerstore.Store) {
				st, err := badgerstore.Open(dir, badgerstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				r, err := Open(ctx, Options{Store: st, NodeKey: testNode(t), PendingCache: tc.cache})
				if err != nil {
					t.Fatal(err)
				}
				return r, st
			}
			r, st := open()
			defer func() { r.Close(); st.Close() }()
			b, txs := chain(n)
			rest := slices.Clone(txs[2:])
			slices.Reverse(rest)
			outs, err := r.Ingest(ctx, subs(rest))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				if o.Status != Pending {
					t.Fatalf("before the roster: %+v", o)
				}
			}
			wantKept := n
			if tc.cache != 0 {
				wantKept = 0
			}
			if got := r.pend.len(); got != wantKept {
				t.Fatalf("cache holds %d envelopes, want %d", got, wantKept)
			}
			if tc.restart {
				r.Close()
				st.Close()
				r, st = open()
			}
			outs, err = r.Ingest(ctx, subs(txs[:2]))
			if err != nil {
				t.Fatal(err)
			}
			if outs[1].Status != Accepted {
				t.Fatalf("roster: %+v", outs[1])
			}
			if r.reverified != tc.reverified {
				t.Fatalf("%d promoted entries verified again, want %d", r.reverified, tc.reverified)
			}
			if r.pend.len() != 0 {
				t.Fatalf("cache still holds %d envelopes", r.pend.len())
			}
			log, err := r.Log(ctx, b.Session, 0, 0)
			if err != nil || len(log) != len(txs) {
				t.Fatalf("log %d entries %v, want %d", len(log), err, len(txs))
			}
		})
	}
}

// TestPromotedForgeryRefused: an entry with a bad signature is refused
// bad_signature at once, even when its parent has not arrived, and is not
// stored (nothing refused is); its child, which came first, waits for a
// parent that will never be stored, and is not kept in the pending cache
// longer than its bound.
func TestPromotedForgeryRefused(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Options{InMemory: true, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, txs := chain(2)
	forged := *txs[2].Env
	forged.Sig = slices.Clone(forged.Sig)
	forged.Sig[7] ^= 4
	fb := forged.Canonical()
	child := b.KeyRegister(ht.Member(30), forged.ID())
	if _, err := r.Ingest(ctx, []Submission{{Envelope: child.Bytes}, {Envelope: fb}}); err != nil {
		t.Fatal(err)
	}
	if r.pend.len() != 1 {
		t.Fatalf("cache holds %d envelopes, want only the child's", r.pend.len())
	}
	if st, err := r.store.Has(ctx, forged.ID()); err != nil || st != dag.Absent {
		t.Fatalf("the forgery is held %s %v; nothing refused is stored", st, err)
	}
	if _, err := r.Ingest(ctx, subs(txs[:2])); err != nil {
		t.Fatal(err)
	}
	q := r.Quarantine(b.Session.String())
	if len(q) != 1 || q[0].ID != forged.ID() || q[0].Code != dag.CodeBadSignature {
		t.Fatalf("quarantine %+v", q)
	}
	if st, err := r.store.Has(ctx, forged.ID()); err != nil || st != dag.Absent {
		t.Fatalf("the forgery is held %s %v; nothing refused is stored", st, err)
	}
}

// TestPendingCacheModel: random adds, takes and drops against a model:
// the cache never holds more than its bound, accounts its size exactly,
// forgets the oldest first, and a take returns an envelope only for the
// exact bytes it was added with.
func TestPendingCacheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		max := rapid.IntRange(1, 2000).Draw(rt, "max")
		c := newPendingCache(max)
		type rec struct {
			data []byte
			env  *dag.Envelope
		}
		model := map[dag.ID]rec{} // what was added and not taken or dropped since
		var order []dag.ID        // model's insertion order (latest add)
		ids := make([]dag.ID, 8)
		for i := range ids {
			ids[i] = dag.Sum([]byte{byte(i)})
		}
		for step := 0; step < 200; step++ {
			id := rapid.SampledFrom(ids).Draw(rt, "id")
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0:
				data := make([]byte, rapid.IntRange(0, 400).Draw(rt, "len"))
				data = append(data, byte(step))
				env := &dag.Envelope{}
				c.add(id, env, data)
				order = slices.DeleteFunc(order, func(x dag.ID) bool { return x == id })
				delete(model, id)
				if cost(data) <= max { // larger ones are never kept
					model[id] = rec{data, env}
					order = append(order, id)
				}
			case 1:
				wrong := rapid.Bool().Draw(rt, "wrong")
				m, inModel := model[id]
				_, inCache := c.m[id]
				data := m.data
				if wrong {
					data = append(slices.Clone(data), 1)
				}
				got := c.take(id, data)
				switch {
				case inCache && !wrong && (got == nil || got == m.env || !reflect.DeepEqual(*got, *m.env)):
					rt.Fatalf("take of a kept entry returned %+v, want a copy of %+v", got, m.env)
				case (!inCache || wrong) && got != nil:
					rt.Fatalf("take returned an envelope (kept %v, wrong bytes %v, in model %v)", inCache, wrong, inModel)
				}
				delete(model, id)
				order = slices.DeleteFunc(order, func(x dag.ID) bool { return x == id })
			case 2:
				c.drop(id)
				delete(model, id)
				order = slices.DeleteFunc(order, func(x dag.ID) bool { return x == id })
			}
			size := 0
			for id, p := range c.m {
				m, ok := model[id]
				if !ok || !bytes.Equal(m.data, p.data) || &m.data[0] == &p.data[0] {
					rt.Fatalf("cache holds %s, which the model does not (or not its own copy)", id)
				}
				size += cost(p.data)
			}
			if size != c.size || c.size > max {
				rt.Fatalf("size %d, counted %d, bound %d", c.size, size, max)
			}
			// What the cache kept is a suffix of the model's order: the
			// oldest go first.
			var kept []dag.ID
			for _, id := range order {
				if _, ok := c.m[id]; ok {
					kept = append(kept, id)
				}
			}
			if len(kept) > 0 && !slices.Equal(kept, order[len(order)-len(kept):]) {
				rt.Fatalf("kept %v is not the newest of %v", kept, order)
			}
		}
	})
}

// TestLocalRecordsRoundTrip: the node-local records decode to what was
// written, and refuse anything but that exact spelling.
func TestLocalRecordsRoundTrip(t *testing.T) {
	b, txs := chain(1)
	session := b.Session.String()
	e, err := heldEntry(session, txs[2].ID, txs[2].Bytes)
	if err != nil {
		t.Fatal(err)
	}
	tx, data, err := decodeHeld(session, e)
	if err != nil || tx != txs[2].ID || string(data) != string(txs[2].Bytes) {
		t.Fatalf("held record: %s %v", tx, err)
	}
	c := Checkpoint{Space: session, Size: 3, Root: MerkleRoot([]dag.ID{txs[0].ID, txs[1].ID, txs[2].ID}),
		TS: time.Date(2026, 9, 21, 1, 2, 3, 4, time.UTC), Node: testNode(t).Key(), Sig: make([]byte, 64)}
	ce, err := checkpointEntry(c, 7, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, seq, err := decodeCheckpoint(session, ce)
	if err != nil || seq != 7 || got.Size != c.Size || got.Root != c.Root || !got.TS.Equal(c.TS) || got.Node != c.Node || string(got.Sig) != string(c.Sig) {
		t.Fatalf("checkpoint record: %+v %d %v", got, seq, err)
	}
	for _, bad := range []struct {
		name string
		data string
	}{
		{"not canonical", " " + string(ce.Data)},
		{"unknown member", `{"extra":1,` + string(ce.Data[1:])},
		{"trailing data", string(ce.Data) + "{}"},
		{"not json", "checkpoint"},
	} {
		if _, _, err := decodeCheckpoint(session, dag.Entry{ID: ce.ID, Data: []byte(bad.data)}); err == nil {
			t.Errorf("checkpoint record %s: decoded", bad.name)
		}
		if _, _, err := decodeHeld(session, dag.Entry{ID: e.ID, Data: []byte(bad.data)}); err == nil {
			t.Errorf("held record %s: decoded", bad.name)
		}
	}
	if _, _, err := decodeCheckpoint("sha256:other", ce); err == nil {
		t.Error("checkpoint record of another session decoded")
	}
	if _, _, err := decodeHeld("sha256:other", e); err == nil {
		t.Error("held record of another session decoded")
	}
	other, _ := heldEntry(session, txs[1].ID, txs[2].Bytes)
	if _, _, err := decodeHeld(session, other); err == nil {
		t.Error("held record whose bytes are not its tx decoded")
	}
}
