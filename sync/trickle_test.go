package sync_test

import (
	"context"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// wide returns two replicas of one session: a holds a root and 20
// siblings on it (21 entries, 20 heads), b the root and all siblings but
// the one a wrote first (so it is not among a's newest). It returns the
// siblings in the order written.
func wide(t *testing.T) (a, b *synctest.Replica, space string, sibs []dag.ID) {
	t.Helper()
	ctx := context.Background()
	author := synctest.NewAuthor(1)
	space, root, rootID := author.Session("wide")
	a, b = synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{})
	for _, r := range []*synctest.Replica{a, b} {
		if _, err := r.Submit(ctx, root); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		data, id := author.Entry(space, []dag.ID{rootID}, i)
		sibs = append(sibs, id)
		if _, err := a.Submit(ctx, data); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if _, err := b.Submit(ctx, data); err != nil {
				t.Fatal(err)
			}
		}
	}
	return a, b, space, sibs
}

// announcementOf is what r's node announces in space.
func announcementOf(t *testing.T, r *synctest.Replica, space string) ws.Announcement {
	t.Helper()
	ctx := context.Background()
	hs := heads(t, r, space)
	a, err := ws.DecodeAnnouncement(ws.NewAnnouncement(space, hs, ws.Newest(ctx, r, hs, ws.NamedHeads)).Encode())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAnnouncementNamesNewest: a node names its NamedHeads newest heads
// (last in its log), with the count and digest of all of them, in a few
// hundred bytes.
func TestAnnouncementNamesNewest(t *testing.T) {
	a, _, space, sibs := wide(t)
	an := announcementOf(t, a, space)
	want := slices.Clone(sibs[len(sibs)-ws.NamedHeads:])
	slices.SortFunc(want, dag.ID.Compare)
	if !slices.Equal(an.Heads, want) {
		t.Errorf("named %v, want the %d written last %v", an.Heads, ws.NamedHeads, want)
	}
	if an.Count != 20 || an.Digest != ws.HeadsDigest(sibs) || an.Complete() {
		t.Errorf("count %d, digest %x, complete %v", an.Count, an.Digest, an.Complete())
	}
	if n := len(an.Encode()); n > 400 {
		t.Errorf("%d bytes", n)
	}
}

// TestReceiverInSyncDoesNotPull: a replica whose heads are the sender's
// asks for nothing; one that lacks an entry the announcement does not
// name pulls once for the digest, however many senders announce it, and
// not at all once its heads are the digest's.
func TestReceiverInSyncDoesNotPull(t *testing.T) {
	ctx := context.Background()
	a, b, space, _ := wide(t)
	an := announcementOf(t, a, space)

	inSync := ws.NewAnnouncer()
	if w, err := inSync.Judge(ctx, a, an); err != nil || w != ws.WantInSync {
		t.Fatalf("a replica holding the same heads: %v %v", w, err)
	}

	r := ws.NewAnnouncer()
	wants := map[ws.Want]int{}
	for range 5 { // five senders of the same heads
		w, err := r.Judge(ctx, b, an)
		if err != nil {
			t.Fatal(err)
		}
		wants[w]++
	}
	if wants[ws.WantDigest] != 1 || wants[ws.WantNothing] != 4 {
		t.Fatalf("five announcements of one digest: %v, want one digest pull", wants)
	}
	// The pull fails: the next sender sets off another.
	r.PullDone(space, an.Key(), false)
	if w, _ := r.Judge(ctx, b, an); w != ws.WantDigest {
		t.Errorf("after a pull that failed: %v, want another digest pull", w)
	}
	// This time it brings b what a holds.
	if _, err := pipePull(ctx, ws.NewEngine(b, ws.Options{Rand: seeded(1)}), ws.NewEngine(a, ws.Options{Rand: seeded(2)}), space); err != nil {
		t.Fatal(err)
	}
	r.PullDone(space, an.Key(), true)
	for range 3 {
		if w, _ := r.Judge(ctx, b, an); w != ws.WantInSync {
			t.Errorf("b in sync: %v", w)
		}
	}
	// b writes on: a is behind, its digest covered; b answers it once a
	// period, and pulls nothing.
	data, _ := synctest.NewAuthor(5).Entry(space, heads(t, b, space)[:1], 500)
	if _, err := b.Submit(ctx, data); err != nil {
		t.Fatal(err)
	}
	if w, _ := r.Judge(ctx, b, an); w != ws.WantReply {
		t.Errorf("a behind b: %v, want a reply", w)
	}
	if w, _ := r.Judge(ctx, b, an); w != ws.WantNothing {
		t.Errorf("a behind b, again: %v, want nothing", w)
	}
}

// TestReceiverNamedHeadMissing: a named head neither held nor refused
// asks for a pull from each sender, as before; a sender whose heads the
// receiver holds with more is behind, answered once a period.
func TestReceiverNamedHeadMissing(t *testing.T) {
	ctx := context.Background()
	a, b, space, _ := wide(t)
	// b writes its own entry: now a lacks a head b names (b's newest).
	author := synctest.NewAuthor(9)
	hb := heads(t, b, space)
	data, _ := author.Entry(space, hb[:1], 99)
	if _, err := b.Submit(ctx, data); err != nil {
		t.Fatal(err)
	}
	anB := announcementOf(t, b, space)
	r := ws.NewAnnouncer()
	for range 2 {
		if w, _ := r.Judge(ctx, a, anB); w != ws.WantSender {
			t.Fatalf("a named head missing: %v, want a pull from the sender", w)
		}
	}
	// c holds everything a holds and more: a's announcement shows a
	// behind, answered once until the period ends.
	c := synctest.NewMem(synctest.Options{})
	if _, err := pipePull(ctx, ws.NewEngine(c, ws.Options{Rand: seeded(3)}), ws.NewEngine(a, ws.Options{Rand: seeded(4)}), space); err != nil {
		t.Fatal(err)
	}
	rc := ws.NewAnnouncer()
	rc.Own(space, heads(t, c, space)) // c's heads now: a's
	if _, err := pipePull(ctx, ws.NewEngine(c, ws.Options{Rand: seeded(5)}), ws.NewEngine(b, ws.Options{Rand: seeded(6)}), space); err != nil {
		t.Fatal(err)
	}
	anA := announcementOf(t, a, space)
	if w, _ := rc.Judge(ctx, c, anA); w != ws.WantReply {
		t.Fatalf("a sender behind (its digest one of c's past head sets): %v, want a reply", w)
	}
	if w, _ := rc.Judge(ctx, c, anA); w != ws.WantNothing {
		t.Errorf("the same sender again in the period: %v, want nothing", w)
	}
	rc.Reset(space)
	if w, _ := rc.Judge(ctx, c, anA); w != ws.WantReply {
		t.Errorf("next period: %v, want a reply", w)
	}
}

// TestTrickleSuppression: a node that heard TrickleK announcements of the
// heads it would announce skips its own (Redundant) until the period ends
// (Reset) or a peer shows it is behind (Unheard); an announcement caused
// only by entries others announced is Derived, a local write is not.
func TestTrickleSuppression(t *testing.T) {
	ctx := context.Background()
	a, b, space, sibs := wide(t)
	an := announcementOf(t, a, space)
	r := ws.NewAnnouncer()
	if r.Redundant(space, an.Digest) {
		t.Fatal("redundant before anything was heard")
	}
	if _, err := r.Judge(ctx, b, an); err != nil {
		t.Fatal(err)
	}
	if !r.Redundant(space, an.Digest) {
		t.Error("heard once (TrickleK = 1): not redundant")
	}
	if r.Redundant(space, ws.HeadsDigest(heads(t, b, space))) {
		t.Error("other heads counted as heard")
	}
	r.Unheard(space, an.Digest)
	if r.Redundant(space, an.Digest) {
		t.Error("redundant after Unheard")
	}
	if _, err := r.Judge(ctx, b, an); err != nil {
		t.Fatal(err)
	}
	r.Reset(space)
	if r.Redundant(space, an.Digest) {
		t.Error("redundant in the next period")
	}
	// The heads an announcement named are heard; the first sibling was
	// not named (not among a's newest), nor is a local write.
	if !r.Derived(space, an.Heads) {
		t.Error("named heads not derived")
	}
	if r.Derived(space, []dag.ID{sibs[0]}) || r.Derived(space, []dag.ID{an.Heads[0], sibs[0]}) {
		t.Error("a head no announcement named counts as derived")
	}
	if r.Derived(space, nil) {
		t.Error("no heads added counts as derived")
	}
}

// TestAddedHeads: the heads not among the last announced, in the order
// given, whatever the sizes (a fresh pull of a wide session has tens of
// thousands).
func TestAddedHeads(t *testing.T) {
	id := func(i int) dag.ID { return dag.Sum([]byte{byte(i >> 8), byte(i)}) }
	var last, heads []dag.ID
	for i := range 20000 {
		last = append(last, id(i))
	}
	for i := 19990; i < 20010; i++ {
		heads = append(heads, id(i))
	}
	got := ws.AddedHeads(heads, last)
	if len(got) != 10 {
		t.Fatalf("%d heads added, want 10", len(got))
	}
	for k, h := range got {
		if h != id(20000+k) {
			t.Fatalf("added[%d] is not head %d", k, 20000+k)
		}
	}
	if got := ws.AddedHeads(heads, nil); len(got) != len(heads) {
		t.Fatalf("against nothing announced: %d added, want %d", len(got), len(heads))
	}
	if got := ws.AddedHeads(nil, last); len(got) != 0 {
		t.Fatalf("no heads: %d added", len(got))
	}
}
