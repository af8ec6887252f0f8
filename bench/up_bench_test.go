package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/httpapi/httpload"
)

// BenchmarkUpSubmitHTTP is the write path as a user runs it: `witan up`
// (the real command, built from this tree, its Badger store on disk with
// fsync on) and a load generator of C concurrent clients (WITAN_UP_CLIENTS,
// default 200) posting b.N signed ballots to POST /transactions, each on
// its own keep-alive connection, each waiting for its receipt (sent once
// the ballot is durable) before the next. It reports submissions/s, the
// latency percentiles, and the node process's own CPU per submission
// (from /proc: the load generator's is not counted). The session (create,
// roster, MRs of 2000 members) is submitted first, untimed.
//
//	cd bench && go test -run '^$' -bench UpSubmitHTTP -benchtime 20000x
func BenchmarkUpSubmitHTTP(b *testing.B) {
	const ballotsPerMR = 2000
	clients := 200
	if n, _ := strconv.Atoi(os.Getenv("WITAN_UP_CLIENTS")); n > 0 {
		clients = n
	}
	bin := filepath.Join(b.TempDir(), "witan")
	build := exec.Command("go", "build", "-o", bin, "./cmd/witan")
	build.Dir = ".." // the witan module
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	up := exec.Command(bin, "up", "-data", b.TempDir(), "-http", "127.0.0.1:0", "-no-p2p", "-mdns=false", "-json")
	dieWithTest(up)
	stdout, err := up.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := up.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		up.Process.Signal(os.Interrupt) //nolint:errcheck // it may have exited
		up.Wait()                       //nolint:errcheck // killed or not, it is gone
	}()
	var info struct {
		HTTP string `json:"http"`
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &info) != nil || info.HTTP == "" {
		b.Fatalf("witan up's startup line: %q", sc.Text())
	}
	go func() {
		for sc.Scan() { // keep its stdout drained
		}
	}()

	ctx := context.Background()
	bl := ht.New(ht.Options{Simulation: true, Label: "up bench"})
	client := &httpapi.Client{BaseURL: info.HTTP, Session: bl.Session.String()}
	txs := bl.BallotLoad(b.N, ballotsPerMR, func(tx ht.Tx) {
		if rc, err := client.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			b.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	})
	envs := make([][]byte, len(txs))
	for i, tx := range txs {
		envs[i] = tx.Bytes
	}
	host := strings.TrimPrefix(info.HTTP, "http://")
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
	start, cpu0 := time.Now(), procCPU(b, up.Process.Pid)
	lat, err := cl.Run(reqs)
	el, cpu := time.Since(start), procCPU(b, up.Process.Pid)-cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "submits/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "node-cpu-µs/submit")
	b.ReportMetric(httpload.Percentile(lat, 50), "p50-ms")
	b.ReportMetric(httpload.Percentile(lat, 95), "p95-ms")
	b.ReportMetric(httpload.Percentile(lat, 99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// procCPU is process pid's user and system CPU time, from /proc.
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's name (in parentheses, which may
	// hold spaces): utime and stime are the 12th and 13th after it.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, stat)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}
