package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// BenchCommand runs witan's standard node benchmarks in process, on
// in-memory Badger stores and a loopback HTTP server, and prints one
// table. Each row does a fixed number of operations (-n), so runs compare.
// Package benchmarks (go test -bench) measure the layers below in detail.
type BenchCommand struct {
	main *Main
}

// BenchRow is one benchmark's result.
type BenchRow struct {
	Name    string        `json:"name"`
	Ops     int           `json:"ops"`
	Total   time.Duration `json:"total_ns"`
	PerOp   time.Duration `json:"ns_per_op"`
	PerSec  float64       `json:"ops_per_s"`
	Comment string        `json:"comment"`
}

func (c *BenchCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("bench", "bench [-n N] [-json]")
	n := fs.Int("n", 300, "operations per benchmark (ballots: a roster of N members)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *n < 1 {
		fs.Usage()
		return errUsage
	}
	rows, err := runBench(ctx, *n, newProgress(c.main.Stderr, "bench", 6))
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(c.main.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tops\ttotal\tper op\tops/s\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.0f\t\n", r.Name, r.Ops, r.Total.Round(time.Millisecond), r.PerOp.Round(time.Microsecond), r.PerSec)
	}
	return tw.Flush()
}

func row(name string, ops int, d time.Duration, comment string) BenchRow {
	r := BenchRow{Name: name, Ops: ops, Total: d, Comment: comment}
	if ops > 0 {
		r.PerOp = d / time.Duration(ops)
	}
	if d > 0 {
		r.PerSec = float64(ops) / d.Seconds()
	}
	return r
}

// benchSession makes a session with a roster of n and an open MR, and n
// ballots, one per member, all signed ahead of time.
func benchSession(n int) (setup, ballots []ht.Tx) {
	b := ht.New(ht.Options{Simulation: true})
	setup = []ht.Tx{b.Create}
	last := func() dag.ID { return setup[len(setup)-1].ID }
	setup = append(setup, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), last()))
	setup = append(setup, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last()))
	open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, n), Rule: ht.Majority(house.MinRootNotice)}, last())
	setup = append(setup, open)
	for i := 0; i < n; i++ {
		ballots = append(ballots, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID))
	}
	return setup, ballots
}

func runBench(ctx context.Context, n int, bar *progress) ([]BenchRow, error) {
	defer bar.done()
	var rows []BenchRow
	setup, ballots := benchSession(n)
	space := setup[0].Env.Session.String()
	key, err := dag.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	open := func() (*node.Node, error) {
		return node.Open(ctx, node.Options{InMemory: true, NodeKey: key})
	}
	submitAll := func(l *node.Node, txs []ht.Tx) error {
		for _, tx := range txs {
			rc, err := l.Submit(ctx, tx.Bytes, tx.Attach)
			if err != nil {
				return err
			}
			if rc.Status != "accepted" {
				return fmt.Errorf("bench: %s refused: %v", tx.Env.Type, rc.Errors)
			}
		}
		return nil
	}

	// 1. Submit through the replica (verify, admit, store, sign a receipt).
	l, err := open()
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if err := submitAll(l, setup); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := submitAll(l, ballots); err != nil {
		return nil, err
	}
	rows = append(rows, row("submit ballot (replica)", n, time.Since(t0), "verify, admit, Badger commit, signed receipt"))
	bar.set(1, 6)

	// 2. Derived state and its hash.
	t0 = time.Now()
	for i := 0; i < n; i++ {
		if _, _, err := l.Replica().State(ctx, space); err != nil {
			return nil, err
		}
	}
	rows = append(rows, row("state hash", n, time.Since(t0), fmt.Sprintf("session of %d entries", len(setup)+n)))
	bar.set(2, 6)

	// 3. Checkpoint (RFC 9162 root, signed).
	t0 = time.Now()
	for i := 0; i < n; i++ {
		if _, err := l.Replica().Checkpoint(ctx, space); err != nil {
			return nil, err
		}
	}
	rows = append(rows, row("checkpoint", n, time.Since(t0), "signed"))
	bar.set(3, 6)

	// 4. Submit over HTTP on loopback.
	l2, err := open()
	if err != nil {
		return nil, err
	}
	defer l2.Close()
	srv, err := httpapi.New(httpapi.Options{Node: l2})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	client := &httpapi.Client{BaseURL: "http://" + ln.Addr().String()}
	for _, tx := range setup {
		if _, err := client.Submit(ctx, tx.Bytes, tx.Attach); err != nil {
			return nil, err
		}
	}
	t0 = time.Now()
	for _, tx := range ballots {
		if _, err := client.Submit(ctx, tx.Bytes, tx.Attach); err != nil {
			return nil, err
		}
	}
	rows = append(rows, row("submit ballot (HTTP)", n, time.Since(t0), "POST /transactions on loopback, receipt verified"))
	bar.set(4, 6)

	// 5. Read the log over HTTP, 100 entries a page.
	pages := max(n/10, 1)
	t0 = time.Now()
	for i := 0; i < pages; i++ {
		var p httpapi.LogPage
		if err := client.Get(ctx, "/log", url.Values{"limit": {"100"}}, &p); err != nil {
			return nil, err
		}
	}
	rows = append(rows, row("GET /log (100 entries)", pages, time.Since(t0), "with attachments"))
	bar.set(5, 6)

	// 6. Replay a log into a fresh replica, as witan verify does.
	ids, err := l.Replica().Log(ctx, space, 0, 0)
	if err != nil {
		return nil, err
	}
	subs := make([]replica.Submission, len(ids))
	for i, id := range ids {
		e, err := l.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		att, err := l.Attachments(ctx, e)
		if err != nil {
			return nil, err
		}
		subs[i] = replica.Submission{Envelope: e.Data, Attachments: att}
	}
	fresh, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: key})
	if err != nil {
		return nil, err
	}
	defer fresh.Close()
	t0 = time.Now()
	if _, err := fresh.Ingest(ctx, subs); err != nil {
		return nil, err
	}
	rows = append(rows, row("replay (verify), per entry", len(subs), time.Since(t0), "one batch: batch signature verification"))
	bar.set(6, 6)
	return rows, nil
}
