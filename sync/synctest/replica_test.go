package synctest_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestIngestOutcomes: each kind of item gets its outcome, whether Ingest
// decodes and verifies the batch itself, or a Prepare call did all of it
// or some of it before (as a sync requester's reader does).
func TestIngestOutcomes(t *testing.T) {
	for _, prep := range []string{"none", "all", "some"} {
		t.Run("prepared="+prep, func(t *testing.T) { ingestOutcomes(t, prep) })
	}
}

func ingestOutcomes(t *testing.T, prep string) {
	ctx := context.Background()
	a := synctest.NewAuthor(1)
	space, root, rootID := a.Session("t")
	good, goodID := a.Entry(space, []dag.ID{rootID}, 1)
	env, _, _, _ := dag.DecodeEnvelope(good)
	env.Sig[3] ^= 8
	forged := env.Canonical()
	forgedID := dag.Sum(forged)
	orphanParent := dag.Sum([]byte("absent"))
	orphan, orphanID := a.Entry(space, []dag.ID{orphanParent}, 2)
	childOfForged, childID := a.Entry(space, []dag.ID{forgedID}, 3)
	other, _, _ := synctest.NewAuthor(2).Session("other")
	elsewhere, elsewhereID := a.Entry(other, []dag.ID{dag.Sum([]byte("p"))}, 4)
	stranger := synctest.NewAuthor(3)
	strange, strangeID := stranger.Entry(space, []dag.ID{rootID}, 5)

	r := synctest.NewMem(synctest.Options{Authorize: func(e *dag.Envelope) error {
		if e.Author == stranger.Signer.Key() {
			return errors.New("not a member")
		}
		return nil
	}})
	notified := 0
	cancel := r.Subscribe(func(s string) {
		if s == space {
			notified++
		}
	})
	defer cancel()
	items := []sync.Item{{Data: root}, {Data: good}, {Data: good}, {Data: forged}, {Data: orphan}, {Data: childOfForged}, {Data: elsewhere}, {Data: strange}, {Data: []byte("junk")}}
	switch prep {
	case "all":
		synctest.Preparing{Replica: r}.Prepare(ctx, space, items)
	case "some":
		synctest.Preparing{Replica: r}.Prepare(ctx, space, items[2:5])
	}
	for i, it := range items {
		if want := prep == "all" || prep == "some" && i >= 2 && i < 5; (it.Prepared != nil) != want {
			t.Fatalf("item %d: Prepared %v, want it set: %v", i, it.Prepared, want)
		}
	}
	res, err := r.Ingest(ctx, space, items)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      dag.ID
		outcome sync.Outcome
		code    dag.Code
	}{
		{rootID, sync.Accepted, ""},
		{goodID, sync.Accepted, ""},
		{goodID, sync.Duplicate, ""},
		{forgedID, sync.Quarantined, dag.CodeBadSignature},
		{orphanID, sync.Pending, ""},
		{childID, sync.Quarantined, dag.CodeUnknownParent},
		{elsewhereID, sync.Quarantined, dag.CodeSchema},
		{strangeID, sync.Quarantined, dag.CodeNotAuthorized},
		{dag.Sum([]byte("junk")), sync.Quarantined, dag.CodeSchema},
	}
	for i, w := range want {
		got := res.Items[i]
		if got.ID != w.id || got.Outcome != w.outcome || got.Code != w.code {
			t.Errorf("item %d: got %+v, want %v %s %s", i, got, w.id, w.outcome, w.code)
		}
	}
	if notified != 1 {
		t.Errorf("notified %d times", notified)
	}
	// Sent again, a refused entry is a duplicate that carries its code.
	res, _ = r.Ingest(ctx, space, []sync.Item{{Data: forged}, {Data: []byte("junk")}})
	for _, it := range res.Items {
		if it.Outcome != sync.Duplicate || it.Code == "" {
			t.Errorf("%+v", it)
		}
	}
	if missing, _ := r.Missing(ctx, space); len(missing) != 1 || missing[0] != orphanParent {
		t.Errorf("missing %v", missing)
	}
}

// TestIngestReusesItsScratch: Ingest keeps its per-call storage (the
// decodings, the ids met, two batches' entries and index) for the next
// call, and a batch's storage serves another batch only once its put has
// landed. Over a Badger store, whose puts run while the next batch is
// judged, calls of several batches each store the chain whole and in
// order, and a call that repeats part of an earlier one reports those
// items duplicates and the rest accepted.
func TestIngestReusesItsScratch(t *testing.T) {
	ctx := context.Background()
	st, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	r := synctest.New(st, synctest.Options{})
	defer r.Close()
	a := synctest.NewAuthor(1)
	space, root, rootID := a.Session("t")
	const n = 5000
	items, ids := []sync.Item{{Data: root}}, []dag.ID{rootID}
	for i := 1; i < n; i++ {
		data, id := a.Entry(space, []dag.ID{ids[i-1]}, i)
		items, ids = append(items, sync.Item{Data: data}), append(ids, id)
	}
	check := func(res sync.IngestResult, from int, dupBefore int) {
		t.Helper()
		for k, it := range res.Items {
			i := from + k
			want := sync.Accepted
			if i < dupBefore {
				want = sync.Duplicate
			}
			if it.ID != ids[i] || it.Outcome != want {
				t.Fatalf("item %d: %v %v, want %v %v", i, it.ID, it.Outcome, ids[i], want)
			}
		}
	}
	res, err := r.Ingest(ctx, space, items[:3000])
	if err != nil {
		t.Fatal(err)
	}
	check(res, 0, 0)
	res, err = r.Ingest(ctx, space, items[2000:])
	if err != nil {
		t.Fatal(err)
	}
	check(res, 2000, 3000)
	log, err := r.Log(ctx, space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != n {
		t.Fatalf("the log holds %d entries, want %d", len(log), n)
	}
	for i, id := range log {
		if id != ids[i] {
			t.Fatalf("log position %d: %v, want %v", i+1, id, ids[i])
		}
		en, err := r.Get(ctx, id)
		if err != nil || !bytes.Equal(en.Data, items[i].Data) {
			t.Fatalf("entry %d read back: %v (%d bytes, want %d)", i, err, len(en.Data), len(items[i].Data))
		}
	}
}
