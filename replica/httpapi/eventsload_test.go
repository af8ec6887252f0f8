package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/httpapi/httpload"
	"github.com/witan-dev/witan/replica/node"
)

// writesWithStreams measures accepted writes per second with no event
// stream open and with streams open, side by side in one run: rounds
// alternate (none, streams, none, streams, …) so that the machine's noise
// falls on both alike. Writers are 8 HTTP clients POSTing ballots to a
// node (Badger in memory) on a real listener; each stream is an HTTP
// client on GET /events of the ballots' session that reads everything
// (read) or nothing at all.
//
// It returns the writes per second of all the rounds without streams and
// with, and the median over the pairs of rounds of the ratio of the one
// with streams to the one before it without: the measure the tests hold,
// since a neighbour's burst on the shared machine falls on a round or two,
// not on the median.
func writesWithStreams(t testing.TB, streams, rounds, perRound int, read bool) (none, with, median float64) {
	t.Helper()
	l, err := node.Open(context.Background(), node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: l, MaxBodyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer func() { srv.Close(); l.Close() }()
	bl := ht.New(ht.Options{Simulation: true})
	txs := bl.BallotLoad(2*rounds*perRound, 2000, func(tx ht.Tx) {
		if rc, err := l.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	})
	envs := make([][]byte, len(txs))
	for i, tx := range txs {
		envs[i] = tx.Bytes
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	reqs, err := httpload.Transactions(host, envs)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := httpload.Dial(host, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// The streams, open from the start and closed for the rounds without.
	// Each resumes at the log's end, as a client that has kept up does
	// (Last-Event-ID): what is measured is following the writes.
	open := func() []net.Conn {
		size, err := l.Replica().LogSize(context.Background(), bl.Session)
		if err != nil {
			t.Fatal(err)
		}
		var cs []net.Conn
		for range streams {
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "GET %s/events?session=%s HTTP/1.1\r\nHost: %s\r\nLast-Event-ID: %d\r\n\r\n", httpapi.Base, bl.Session, host, size)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("event stream: %v %v", resp, err)
			}
			// Read everything as it comes, as raw bytes (the chunks
			// unparsed) in large reads: the reader's own cost stays small
			// beside the node's, which is what is measured.
			if !read {
				cs = append(cs, c)
				continue
			}
			go func() {
				br.Discard(br.Buffered())                                                //nolint:errcheck
				io.CopyBuffer(struct{ io.Writer }{io.Discard}, c, make([]byte, 256<<10)) //nolint:errcheck // until closed
			}()
			cs = append(cs, c)
		}
		return cs
	}
	var tNone, tWith time.Duration
	var ratios []float64
	next := 0
	for range rounds {
		var elNone time.Duration
		for _, withStreams := range []bool{false, true} {
			var cs []net.Conn
			if withStreams {
				cs = open()
				// Each stream has caught up with the log before the clock
				// starts.
				time.Sleep(200 * time.Millisecond)
			}
			start := time.Now()
			if _, err := cl.Run(reqs[next : next+perRound]); err != nil {
				t.Fatal(err)
			}
			el := time.Since(start)
			next += perRound
			if withStreams {
				tWith += el
				ratios = append(ratios, elNone.Seconds()/el.Seconds())
				for _, c := range cs {
					c.Close()
				}
				for deadline := time.Now().Add(5 * time.Second); s.EventClients() > 0 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
			} else {
				tNone += el
				elNone = el
			}
		}
	}
	n := float64(rounds * perRound)
	slices.Sort(ratios)
	return n / tNone.Seconds(), n / tWith.Seconds(), ratios[len(ratios)/2]
}

// Event streams do not starve writes: with 200 streams open, reading
// everything or nothing, writes stay at 80 % or more of writes with none,
// in one run (the median over alternating pairs of rounds). (On the node
// that had each stream read and encode every entry itself, woken by the
// writer one by one, they fell to a tenth.) WITAN_HOSTILE_FULL=1 runs more
// rounds.
//
// The 80 % holds on a machine that is not busy with other work (a load
// average at most its CPU count). On a busy one the streams' goroutines
// and the writers share what the neighbours leave, and the median has
// measured 36-81 % at a load of 29 on two cores; there the test holds the
// floor that still tells the fan-out from the design it replaced (40 %,
// four times a tenth) and says which bound it held. A machine counts as
// busy when its load average is over its CPU count, or when other
// processes took more than a quarter of its CPU time while the rounds ran
// (the load average lags a neighbour that starts meanwhile by a minute).
func TestEventStreamsDoNotStarveWrites(t *testing.T) {
	if testing.Short() {
		// A throughput ratio: the race detector (whose run is -short)
		// slows the streams' goroutines far more than the writers', so it
		// measures the detector, not the fan-out.
		t.Skip("a throughput ratio between two loads; runs without -short")
	}
	rounds := 7
	if os.Getenv("WITAN_HOSTILE_FULL") != "" {
		rounds = 15
	}
	for _, read := range []bool{true, false} {
		// A second try when the first is under the bound: a neighbour's
		// minute-long load can fall on most rounds with streams.
		for try := 1; ; try++ {
			load, busy := machineBusy()
			before, sampled := cpuSample()
			none, with, median := writesWithStreams(t, 200, rounds, 1500, read)
			// The load average lags by a minute: a neighbour that starts
			// during the measurement (another package's tests, a build)
			// shows only in what the CPUs did meanwhile.
			others := 0.0
			if after, ok := cpuSample(); ok && sampled {
				others = after.othersShare(before)
			}
			busy = busy || others > 0.25
			bound := 0.8
			if busy {
				bound = 0.4
			}
			t.Logf("writes/s: %.0f with no stream, %.0f with 200 event streams (reading: %v): %.0f %% in all, median of %d pairs of rounds %.0f %% (load average %s, other processes %.0f %% of the CPUs meanwhile, bound %.0f %%)",
				none, with, read, 100*with/none, rounds, 100*median, load, 100*others, 100*bound)
			if median >= bound {
				break
			}
			if try == 2 {
				t.Errorf("writes with 200 event streams (reading: %v) are %.0f %% of writes with none (median), below %.0f %%", read, 100*median, 100*bound)
				break
			}
		}
	}
}

// machineBusy reports the one-minute load average and whether it is over
// the machine's CPU count (other work then shares the CPUs a throughput
// ratio is measured on). Where /proc/loadavg cannot be read, the machine
// counts as quiet and the full bound applies.
func machineBusy() (string, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown", false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown", false
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return f[0], false
	}
	return f[0], load > float64(runtime.NumCPU())
}

// cpuTimes is what the machine's CPUs and this process had spent, in
// clock ticks, at one moment (Linux /proc).
type cpuTimes struct{ busy, total, self uint64 }

// cpuSample reads the machine's CPU times (/proc/stat's cpu line) and this
// process's (/proc/self/stat's utime and stime); ok is false where they
// cannot be read.
func cpuSample() (cpuTimes, bool) {
	var c cpuTimes
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return c, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return c, false
	}
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return c, false
		}
		c.total += n
		if i != 3 && i != 4 {
			c.busy += n
		}
	}
	b, err = os.ReadFile("/proc/self/stat")
	if err != nil {
		return c, false
	}
	// The fields after the command's closing parenthesis start at the
	// third (state); utime and stime are the 14th and 15th.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return c, false
	}
	f = strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return c, false
	}
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return c, false
		}
		c.self += n
	}
	return c, true
}

// othersShare is the share of the machine's CPU time since before that
// went to other processes than this one.
func (c cpuTimes) othersShare(before cpuTimes) float64 {
	total := c.total - before.total
	busy, self := c.busy-before.busy, c.self-before.self
	if total == 0 || busy <= self {
		return 0
	}
	return float64(busy-self) / float64(total)
}

// BenchmarkWritesWithEventStreams reports the same, side by side:
//
//	go test ./replica/httpapi -run '^$' -bench WritesWithEventStreams -benchtime 1x
func BenchmarkWritesWithEventStreams(b *testing.B) {
	for range b.N {
		none, with, median := writesWithStreams(b, 200, 7, 1500, true)
		b.ReportMetric(none, "writes/s-none")
		b.ReportMetric(with, "writes/s-200streams")
		b.ReportMetric(100*with/none, "%-all")
		b.ReportMetric(100*median, "%-median")
		b.ReportMetric(0, "ns/op")
	}
}
