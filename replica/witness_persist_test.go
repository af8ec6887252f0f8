package replica_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestCosignaturesSurviveRestart: the cosignatures a node keeps of its
// checkpoints are in the node-local space witan-local/witness/<session>,
// one record each, and read back on Open. Node 0 signs cp1 (size 1),
// cp2 (size 2) and cp2b (size 2, a minute later). Witness 1 co-signs
// cp2: kept, one record. Witness 1's cosignature of cp1 (earlier) and of
// cp2 again change nothing and write nothing. Witness 2 co-signs cp1:
// kept, two records. After a restart on the same directory the extract's
// view is the same (cp2 by witness 1, cp1 by witness 2). Witness 1 then
// co-signs cp2b, which replaces cp2 (three records). Thirty more
// witnesses fill the session's 32 places; a 33rd is refused, and still
// after another restart. A record changed in the store (its cosignature
// no longer verifies) makes Open fail with ErrCheckpointMismatch.
func TestCosignaturesSurviveRestart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	open := func() *replica.Replica {
		t.Helper()
		r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0), Clock: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	space := b.Create.Env.Session
	r := open()
	checkpoint := func() replica.Checkpoint {
		t.Helper()
		clk.advance(time.Minute)
		cp, err := r.Checkpoint(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	submit(t, r, b.Create, "accepted")
	cp1 := checkpoint()
	submit(t, r, roster, "accepted")
	cp2 := checkpoint()
	cp2b := checkpoint()
	if cp1.Size != 1 || cp2.Size != 2 || cp2b.Size != 2 {
		t.Fatalf("sizes %d %d %d", cp1.Size, cp2.Size, cp2b.Size)
	}
	cosig := func(w int, cp replica.Checkpoint) replica.Cosignature {
		t.Helper()
		k := nodeKey(t, w)
		msg, err := cp.SigningBytes()
		if err != nil {
			t.Fatal(err)
		}
		return replica.Cosignature{Witness: k.Key(), Sig: base64.RawURLEncoding.EncodeToString(k.Sign(replica.DomainWitness, msg))}
	}
	add := func(w int, cp replica.Checkpoint) error {
		t.Helper()
		return r.AddCosignature(ctx, cp, cosig(w, cp))
	}
	want := func(cp replica.Checkpoint, ws ...int) {
		t.Helper()
		got := r.Cosignatures(cp)
		if len(got) != len(ws) {
			t.Fatalf("cosignatures of size %d at %s: %+v, want witnesses %v", cp.Size, cp.TS, got, ws)
		}
		for i, w := range ws {
			if got[i] != cosig(w, cp) {
				t.Fatalf("cosignature %d of size %d: %+v, want witness %d's", i, cp.Size, got[i], w)
			}
		}
	}
	for _, c := range []struct {
		w  int
		cp replica.Checkpoint
	}{{1, cp2}, {1, cp1}, {1, cp2}, {2, cp1}} {
		if err := add(c.w, c.cp); err != nil {
			t.Fatalf("witness %d, size %d: %v", c.w, c.cp.Size, err)
		}
	}
	want(cp2, 1)
	want(cp1, 2)
	r.Close()

	countRecords := func() []dag.Entry {
		t.Helper()
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ids, err := st.Log(ctx, replica.LocalPrefix+"witness/"+space.String(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []dag.Entry
		for _, id := range ids {
			e, err := st.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	if n := len(countRecords()); n != 2 {
		t.Fatalf("%d records, want 2 (an earlier and a repeated cosignature write nothing)", n)
	}

	r = open()
	want(cp2, 1)
	want(cp1, 2)
	if got := r.CosignedCheckpoints(space); len(got) != 2 || got[0].Size != 2 || got[1].Size != 1 {
		t.Fatalf("cosigned checkpoints after the restart: %+v", got)
	}
	if err := add(1, cp2b); err != nil {
		t.Fatal(err)
	}
	want(cp2)
	want(cp2b, 1)
	for w := 3; w < 3+30; w++ {
		if err := add(w, cp2b); err != nil {
			t.Fatalf("witness %d (place %d): %v", w, w, err)
		}
	}
	if err := add(33, cp2b); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("a 33rd witness: %v, want schema", err)
	}
	r.Close()
	if n := len(countRecords()); n != 33 {
		t.Fatalf("%d records, want 33", n)
	}
	r = open()
	if err := add(33, cp2b); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("a 33rd witness after the restart: %v, want schema", err)
	}
	if got := len(r.Cosignatures(cp2b)); got != 31 {
		t.Fatalf("%d cosignatures of cp2b after the restart, want 31", got)
	}
	r.Close()

	// Doctor one record: witness 2's cosignature of cp1, signed by
	// witness 2 over cp2 instead, re-stored under its new hash.
	recs := countRecords()
	var rec map[string]any
	if err := json.Unmarshal(recs[1].Data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec["witness"] != nodeKey(t, 2).Key().String() {
		t.Fatalf("record 1 is not witness 2's: %s", recs[1].Data)
	}
	rec["sig"] = cosig(2, cp2).Sig
	data, err := dag.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, dag.Batch{Entries: []dag.Entry{{ID: dag.Sum(data), Space: recs[1].Space, Data: data}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0), Clock: clk.now}); !errors.Is(err, replica.ErrCheckpointMismatch) {
		if err == nil {
			r.Close()
		}
		t.Fatalf("Open with a doctored cosignature: %v, want ErrCheckpointMismatch", err)
	}
}
