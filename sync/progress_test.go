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
// the end; a pull under another ctx reports nothing to it.
func TestWithProgress(t *testing.T) {
	src, space := build(t, 50) // the session's root and 50 entries
	b := ws.NewEngine(src, ws.Options{MaxBatchItems: 10})
	a := ws.NewEngine(synctest.NewMem(synctest.Options{}), ws.Options{IngestItems: 10})
	var got []string
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
	// Another pull, not under that ctx: nothing more is reported.
	c := ws.NewEngine(synctest.NewMem(synctest.Options{}), ws.Options{})
	if _, err := pipePull(context.Background(), c, b, space); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("a pull under another ctx reported: %q", got[len(want):])
	}
}
