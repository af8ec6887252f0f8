package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
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

// benchMember returns the i-th synthetic member of the benchmark session
// (30k §3: simulation only), from a fixed seed so runs compare.
func benchMember(i int) *dag.Signer {
	seed := sha256.Sum256([]byte(fmt.Sprintf("witan bench member %d", i)))
	s, err := dag.SignerFromSeed(seed[:])
	if err != nil {
		panic(err) // a 32-byte seed always makes a signer
	}
	return s
}

// benchSeed is the benchmark session's statute: one title of three
// sections.
func benchSeed() *statute.Tree {
	title := statute.NodeSpec{NID: "/us/t1", Kind: "title", Heading: "Title 1"}
	for i := 1; i <= 3; i++ {
		title.Children = append(title.Children, statute.NodeSpec{NID: fmt.Sprintf("/us/t1/s%d", i), Kind: "section",
			Heading: fmt.Sprintf("Section %d", i), Text: "The period is 30 days."})
	}
	return statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{title}})
}

// benchSession makes a session with a roster of n and an open MR, and n
// ballots, one per member, all signed ahead of time with the author API.
func benchSession(ctx context.Context, n int) (setup, ballots []author.Tx, err error) {
	members := make([]*dag.Signer, n)
	keys := make([]dag.Key, n)
	authors := make([]*author.Author, n)
	clock := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	for i := range members {
		members[i] = benchMember(i)
		keys[i] = members[i].Key()
		if authors[i], err = author.New(author.Options{Signer: members[i], Clock: tick}); err != nil {
			return nil, nil, err
		}
	}
	ruleText := []byte("witan bench rule text") // the rules' plain-language text, attached to session.create
	text := dag.Sum(ruleText)
	majority, err := author.Majority(house.MinRootNotice, text)
	if err != nil {
		return nil, nil, err
	}
	twoThirds, err := author.TwoThirds(text)
	if err != nil {
		return nil, nil, err
	}
	chair := authors[0]
	seed := benchSeed()
	create, err := chair.SessionCreate(ctx, author.Session{Label: "witan bench", Seed: seed, Simulation: true,
		Registrar: "registrar", Roster: "roster", RootRule: majority, RootGovernanceRule: twoThirds, Texts: [][]byte{ruleText}})
	if err != nil {
		return nil, nil, err
	}
	session := create.Made
	genesis, err := house.Genesis(seed.Hash()).ID()
	if err != nil {
		return nil, nil, err
	}
	roster, err := chair.GroupCreate(ctx, session, author.Group{ID: "roster", Members: keys, Admins: keys[:1]}, []dag.ID{create.ID})
	if err != nil {
		return nil, nil, err
	}
	registrar, err := chair.GroupCreate(ctx, session, author.Group{ID: "registrar", Members: keys[:1], Admins: keys[:1]}, []dag.ID{roster.ID})
	if err != nil {
		return nil, nil, err
	}
	open, err := chair.MROpen(ctx, session, author.MR{Source: house.RootBranch, SourceHead: genesis, TargetHead: genesis,
		Members: keys, Rule: majority}, []dag.ID{registrar.ID})
	if err != nil {
		return nil, nil, err
	}
	setup = []author.Tx{create, roster, registrar, open}
	for i := range members {
		tx, err := authors[i].BallotCast(ctx, session, author.Ballot{MR: open.Made, Choice: "approve"}, []dag.ID{open.ID})
		if err != nil {
			return nil, nil, err
		}
		ballots = append(ballots, tx)
	}
	return setup, ballots, nil
}

func runBench(ctx context.Context, n int, bar *progress) ([]BenchRow, error) {
	defer bar.done()
	var rows []BenchRow
	setup, ballots, err := benchSession(ctx, n)
	if err != nil {
		return nil, err
	}
	space := setup[0].Env.Session
	key, err := dag.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	open := func() (*node.Node, error) {
		return node.Open(ctx, node.Options{InMemory: true, NodeKey: key})
	}
	submitAll := func(l *node.Node, txs []author.Tx) error {
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
