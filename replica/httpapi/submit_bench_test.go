package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// BenchmarkSubmitConcurrentHTTP is issue 22's write-path goal: POST
// /transactions from 200 concurrent clients to a node on a real loopback
// listener, Badger on disk with fsync on (each receipt is sent only once
// its entry is durable). Each request is a signed ballot of its own
// member; ballots are spread over MRs of ballotsPerMR members. It reports
// submissions/s and the latency percentiles (goal: ≥ 5,000/s, p99 ≤ 100
// ms). submits/cpu-s divides by the process's CPU time, the load
// generator's included: the machine is shared.
//
//	go test ./replica/httpapi -run '^$' -bench SubmitConcurrentHTTP -benchtime 20000x
func BenchmarkSubmitConcurrentHTTP(b *testing.B) {
	const clients, ballotsPerMR = 200, 2000
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	l, err := node.Open(context.Background(), node.Options{Dir: b.TempDir(), NodeKey: key, Clock: clk.now})
	if err != nil {
		b.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: l, MaxBodyBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer func() { srv.Close(); l.Close() }()

	// The session, submitted directly; then b.N ballots, made before the
	// clock starts.
	bl := ht.New(ht.Options{Simulation: true})
	var last dag.ID
	ok := func(tx ht.Tx) {
		if rc, err := l.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			b.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
		last = tx.ID
	}
	ok(bl.Create)
	ok(bl.GroupCreate(ht.Member(0), "roster", ht.Members(0, ballotsPerMR), ht.Members(0, 1), last))
	ok(bl.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	bodies := make([][]byte, 0, b.N)
	for len(bodies) < b.N {
		open, mr := bl.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: bl.Genesis, TargetHead: bl.Genesis,
			Members: ht.Members(0, ballotsPerMR), Rule: ht.Majority(house.MinRootNotice), Summary: fmt.Sprintf("MR %d", len(bodies))}, last)
		ok(open)
		for i := 0; i < ballotsPerMR && len(bodies) < b.N; i++ {
			tx := bl.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID)
			body, err := json.Marshal(httpapi.Transaction{Envelope: tx.Bytes})
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, body)
		}
	}
	// The load generator shares the two cores with the node, so it is
	// kept light: the requests are whole HTTP/1.1 messages made before the
	// clock starts, each client writes them on its own keep-alive
	// connection and reads the answer with http.ReadResponse (no
	// http.Client: its transport costs two goroutines and channel hops per
	// request).
	host := strings.TrimPrefix(srv.URL, "http://")
	reqs := make([][]byte, len(bodies))
	for i, body := range bodies {
		reqs[i] = append(fmt.Appendf(nil, "POST %s/transactions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			httpapi.Base, host, len(body)), body...)
	}
	conns := make([]net.Conn, clients)
	for c := range conns {
		if conns[c], err = net.Dial("tcp", host); err != nil {
			b.Fatal(err)
		}
		defer conns[c].Close()
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := conns[c]
			br := bufio.NewReader(conn)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					return
				}
				t0 := time.Now()
				if _, err := conn.Write(reqs[i]); err != nil {
					failed.Store(err.Error())
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				msg, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.Store(fmt.Sprint(resp.Status, " ", string(msg), err))
					return
				}
			}
		}()
	}
	wg.Wait()
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	slices.Sort(lat)
	pct := func(p int) float64 { return float64(lat[min(len(lat)-1, len(lat)*p/100)].Microseconds()) / 1000 }
	b.ReportMetric(float64(b.N)/el.Seconds(), "submits/s")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "submits/cpu-s")
	b.ReportMetric(pct(50), "p50-ms")
	b.ReportMetric(pct(99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
