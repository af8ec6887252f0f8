package replica

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// shareBenchData is a session (its head: create, roster of
// shareBenchMembers, one open MR per shareBenchMembers ballots) with the
// ballots a peer sends and those clients submit, each member voting once
// per MR. Made once per process: signing is not what is measured.
type shareBenchData struct {
	head, peer, clients []Submission
}

const shareBenchMembers = 2000

var (
	shareBenchOnce sync.Once
	shareBench     *shareBenchData
)

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func shareBenchSession(nPeer, nClients int) *shareBenchData {
	shareBenchOnce.Do(func() {
		bl := ht.New(ht.Options{Simulation: true})
		d := &shareBenchData{}
		sub := func(tx ht.Tx) Submission { return Submission{Envelope: tx.Bytes, Attachments: tx.Attach} }
		roster := bl.GroupCreate(ht.Member(0), "roster", ht.Members(0, shareBenchMembers), ht.Members(0, 1), bl.Create.ID)
		d.head = []Submission{sub(bl.Create), sub(roster)}
		ballots := func(n int) []Submission {
			var out []Submission
			for len(out) < n {
				open, mr := bl.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: bl.Genesis, TargetHead: bl.Genesis,
					Members: ht.Members(0, shareBenchMembers), Rule: ht.Majority(house.MinRootNotice), Summary: fmt.Sprintf("MR %d", len(d.head))}, roster.ID)
				d.head = append(d.head, sub(open))
				for i := 0; i < shareBenchMembers && len(out) < n; i++ {
					out = append(out, sub(bl.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID)))
				}
			}
			return out
		}
		d.peer = ballots(nPeer)
		d.clients = ballots(nClients)
		shareBench = d
	})
	return shareBench
}

// BenchmarkSharePeerAndClients measures shared commits: a
// peer's Ingest of WITAN_SHARE_PEER ballots (default 30,000, in parts of
// MaxIngestPart) into Badger on disk with fsync on, while
// WITAN_SHARE_CLIENTS clients (default 64) Submit ballots one after
// another (each waits for its receipt) until the peer's Ingest is done.
// share=on lets the clients' ballots join the peer's parts' commits;
// share=off commits them in groups of their own, as before. It reports
// the clients' submissions/s and latency percentiles, the peer's
// entries/s, and the store transactions made (puts), side by side in one
// run:
//
//	go test ./replica -run '^$' -bench SharePeerAndClients -benchtime 1x -count 3
func BenchmarkSharePeerAndClients(b *testing.B) {
	nPeer := benchEnv("WITAN_SHARE_PEER", 30000)
	nClients := benchEnv("WITAN_SHARE_CLIENTS", 64)
	d := shareBenchSession(nPeer, 4*nPeer) // clients never run out
	for _, share := range []bool{true, false} {
		name := "share=off"
		if share {
			name = "share=on"
		}
		b.Run(name, func(b *testing.B) {
			var subs, lats []time.Duration
			var peerTime time.Duration
			var puts int64
			for range b.N {
				b.StopTimer()
				ctx := context.Background()
				r, err := Open(ctx, Options{Dir: b.TempDir(), NodeKey: testNode(b)})
				if err != nil {
					b.Fatal(err)
				}
				r.noShare = !share
				if out, err := r.Ingest(ctx, d.head); err != nil || slices.ContainsFunc(out, func(o Outcome) bool { return o.Status != Accepted }) {
					b.Fatalf("head: %v %+v", err, out)
				}
				puts0 := r.puts.Load()
				b.StartTimer()
				start := time.Now()
				var next atomic.Int64
				var stop atomic.Bool
				var mu sync.Mutex
				var wg sync.WaitGroup
				var last time.Time
				for range nClients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var mine []time.Duration
						for !stop.Load() {
							i := int(next.Add(1)) - 1
							if i >= len(d.clients) {
								break
							}
							t0 := time.Now()
							rc, err := r.Submit(ctx, d.clients[i].Envelope, nil)
							if err != nil || rc.Status != "accepted" {
								b.Errorf("client ballot %d: %v %+v", i, err, rc)
								break
							}
							mine = append(mine, time.Since(t0))
						}
						mu.Lock()
						lats = append(lats, mine...)
						if now := time.Now(); now.After(last) {
							last = now
						}
						mu.Unlock()
					}()
				}
				out, err := r.Ingest(dag.WithSource(ctx, "peer"), d.peer)
				peerTime += time.Since(start)
				stop.Store(true)
				wg.Wait()
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				for i, o := range out {
					if o.Status != Accepted {
						b.Fatalf("peer's ballot %d: %+v", i, o)
					}
				}
				subs = append(subs, last.Sub(start))
				puts += r.puts.Load() - puts0
				if err := r.Close(); err != nil {
					b.Fatal(err)
				}
			}
			var clientTime time.Duration
			for _, s := range subs {
				clientTime += s
			}
			slices.Sort(lats)
			pct := func(p int) float64 {
				if len(lats) == 0 {
					return 0
				}
				return float64(lats[(len(lats)-1)*p/100].Microseconds()) / 1000
			}
			b.ReportMetric(float64(len(lats))/clientTime.Seconds(), "client-submits/s")
			b.ReportMetric(pct(50), "client-p50-ms")
			b.ReportMetric(pct(99), "client-p99-ms")
			b.ReportMetric(float64(nPeer*b.N)/peerTime.Seconds(), "peer-entries/s")
			b.ReportMetric(float64(puts)/float64(b.N), "puts/op")
			b.ReportMetric(float64(len(lats))/float64(b.N), "client-submits/op")
		})
	}
}
