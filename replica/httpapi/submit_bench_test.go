package httpapi_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/httpapi/httpload"
	"github.com/witan-dev/witan/replica/node"
)

// BenchmarkSubmitConcurrentHTTP is the write path's goal: POST
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
	txs := bl.BallotLoad(b.N, ballotsPerMR, func(tx ht.Tx) {
		if rc, err := l.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			b.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	})
	envs := make([][]byte, len(txs))
	for i, tx := range txs {
		envs[i] = tx.Bytes
	}
	// The load generator shares the two cores with the node: httpload
	// keeps it light (requests made before the clock starts).
	host := strings.TrimPrefix(srv.URL, "http://")
	reqs, err := httpload.Transactions(host, envs)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := httpload.Dial(host, clients)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	lat, err := cl.Run(reqs)
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	pct := func(p int) float64 { return httpload.Percentile(lat, p) }
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
