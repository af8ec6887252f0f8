package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// readSizes are the session sizes BenchmarkStateReadsHTTP builds, in
// entries: WITAN_BENCH_READ_SIZES (comma-separated) or 10,000 and
// 100,000. The reads must not grow with the size (their finality comes
// from the two numbers the replica keeps, never from the log).
func readSizes(b *testing.B) []int {
	s := os.Getenv("WITAN_BENCH_READ_SIZES")
	if s == "" {
		return []int{10_000, 100_000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("WITAN_BENCH_READ_SIZES: %v", err)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkStateReadsHTTP: the nine GETs whose finality labels the whole
// state (/branches, /branches/{name}, /branches/{name}/tree, /groups/{id},
// /sessions/{id}, /law, /cite/{hash}, /cite/{hash}/diff, /checkpoint) on
// sessions of each size of readSizes, checkpointed, on a real listener;
// each reports its p95 latency (p95-ms). The sizes run side by side in
// one run: the figures of one endpoint must not grow with the size.
func BenchmarkStateReadsHTTP(b *testing.B) {
	for _, size := range readSizes(b) {
		n := newNode(b)
		ctx := context.Background()
		bl := ht.New(ht.Options{Simulation: true})
		space := bl.Session.String()
		rep := n.node.Replica()
		var batch []replica.Submission
		flush := func() {
			if len(batch) == 0 {
				return
			}
			out, err := rep.Ingest(ctx, batch)
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range out {
				if o.Status != replica.Accepted {
					b.Fatalf("%+v", o)
				}
			}
			batch = batch[:0]
		}
		submit := func(tx ht.Tx) {
			batch = append(batch, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
			flush() // the create, the groups and each open go alone, before their children
		}
		start := time.Now()
		ballots := bl.BallotLoad(size, 1000, submit)
		for i, tx := range ballots {
			batch = append(batch, replica.Submission{Envelope: tx.Bytes})
			if len(batch) == 2000 || i == len(ballots)-1 {
				flush()
			}
		}
		if _, err := rep.Checkpoint(ctx, dag.MustParseID(space)); err != nil {
			b.Fatal(err)
		}
		logSize, err := rep.LogSize(ctx, dag.MustParseID(space))
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("session of %d entries built in %v", logSize, time.Since(start).Round(time.Millisecond))
		gen := bl.Genesis.String()
		reads := []struct {
			name, path string
			q          url.Values
		}{
			{"branches", "/branches", nil},
			{"branch", "/branches/root", nil},
			{"tree", "/branches/root/tree", url.Values{"nid": {"/us/t1/s1"}}},
			{"group", "/groups/roster", nil},
			{"session", "/sessions/" + space, nil},
			{"law", "/law", nil},
			{"cite", "/cite/" + gen, url.Values{"nid": {"/us/t1/s1"}}},
			{"cite-diff", "/cite/" + gen + "/diff", url.Values{"to": {gen}}},
			{"checkpoint", "/checkpoint", nil},
		}
		for _, rd := range reads {
			b.Run(fmt.Sprintf("%s/entries=%d", rd.name, size), func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				for i := 0; i < b.N; i++ {
					var m map[string]any
					t0 := time.Now()
					if err := n.c.Get(ctx, rd.path, rd.q, &m); err != nil {
						b.Fatalf("GET %s: %v", rd.path, err)
					}
					lat = append(lat, time.Since(t0))
					if f := m["finality"]; f != string(replica.FinalAdvisory) {
						b.Fatalf("GET %s: finality %v after a checkpoint of the whole log", rd.path, f)
					}
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			})
		}
	}
}
