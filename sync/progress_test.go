package sync_test

import (
	"context"
	"fmt"
	"testing"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestWithProgress: a pull run under WithProgress reports its transfer
// as it happens: the responder's header (51 entries expected, none done),
// then one report per batch ingested (batches of 10: 10, 20, … 51), then
// the end; a pull under another ctx reports nothing to it. WatchProgress
// sees the reports of every pull of the engine, until cancelled.
func TestWithProgress(t *testing.T) {
	src, space := build(t, 50) // the session's root and 50 entries
	b := ws.NewEngine(src, ws.Options{MaxBatchItems: 10})
	a := ws.NewEngine(synctest.NewMem(synctest.Options{}), ws.Options{IngestItems: 10})
	var got, watched []string
	cancel := a.WatchProgress(func(p ws.Progress, done bool) {
		watched = append(watched, fmt.Sprintf("r%d %d/%d done=%v", p.Round, p.EntriesDone, p.EntriesExpected, done))
	})
	ctx := ws.WithProgress(context.Background(), func(p ws.Progress, done bool) {
		got = append(got, fmt.Sprintf("r%d %d/%d done=%v", p.Round, p.EntriesDone, p.EntriesExpected, done))
		if p.BytesDone > p.BytesExpected {
			t.Errorf("bytes %d of %d", p.BytesDone, p.BytesExpected)
		}
	})
	st, err := pipePull(ctx, a, b, space)
	if err != nil || st.Accepted != 51 || st.Rounds != 1 {
		t.Fatalf("%v %+v", err, st)
	}
	want := []string{"r1 0/51 done=false", "r1 10/51 done=false", "r1 20/51 done=false", "r1 30/51 done=false",
		"r1 40/51 done=false", "r1 50/51 done=false", "r1 51/51 done=false", "r1 51/51 done=true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("progress\n got %q\nwant %q", got, want)
	}
	if fmt.Sprint(watched) != fmt.Sprint(want) {
		t.Fatalf("watched\n got %q\nwant %q", watched, want)
	}
	// Another pull, not under that ctx: nothing more is reported to fn;
	// the watcher sees it (one round of a pull that brings nothing new).
	if _, err := pipePull(context.Background(), a, b, space); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("a pull under another ctx reported: %q", got[len(want):])
	}
	if len(watched) == len(want) || watched[len(watched)-1] != "r1 0/0 done=true" {
		t.Fatalf("the watcher missed the second pull: %q", watched[len(want):])
	}
	cancel()
	n := len(watched)
	if _, err := pipePull(context.Background(), a, b, space); err != nil {
		t.Fatal(err)
	}
	if len(watched) != n {
		t.Fatalf("reported after cancel: %q", watched[n:])
	}
}
