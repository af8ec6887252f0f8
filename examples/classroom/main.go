// Command classroom: a teacher and three student laptops run an education
// session (simulation: true, education: true, ephemeral). A student
// drafts an amendment on her own laptop and opens a merge request; every
// student and the teacher vote on their own laptops; the laptops sync over
// libp2p (loopback here; mDNS finds them on a real classroom LAN), and
// each shows the same tally, provisional. The teacher submits the
// determination; once each laptop has signed its own checkpoint, every
// laptop shows the result as final_advisory (never final: these are
// eventual replicas). At the end of term the session is purged: every
// laptop deletes its store.
//
//	go run ./examples/classroom
//
// Not for use in real elections or governance.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/sync"
)

func main() {
	mdns := flag.Bool("mdns", false, "find the laptops with mDNS instead of configured addresses")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := run(ctx, os.Stdout, options{MDNS: *mdns}); err != nil {
		log.Fatal(err)
	}
}

type options struct {
	MDNS bool
	// Dir holds the laptops' stores; a temporary directory when empty.
	Dir string
}

// laptop is one participant's machine: a key and a node on disk, which
// syncs over libp2p.
type laptop struct {
	name  string
	key   *dag.Signer
	dir   string
	local *node.Node
	// a writes as this laptop's owner; parents default to what the
	// laptop's node holds.
	a *author.Author
}

// close stops the laptop's sync and closes its node.
func (l *laptop) close() {
	if l.local != nil {
		l.local.Close()
		l.local = nil
	}
}

// outcome is what the test checks.
type outcome struct {
	Laptops           int
	Ephemeral         bool
	LiveApprove       []uint64 // per laptop, before the determination
	LiveFinality      []replica.Finality
	Status            []string // per laptop, at the end
	FinalFinality     []replica.Finality
	TallyOverHTTP     replica.Finality
	StateHashesAgree  bool
	Purged            bool
	SimulationLabeled bool
}

func run(ctx context.Context, w io.Writer, o options) (*outcome, error) {
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "witan-classroom-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	names := []string{"teacher", "ana", "ben", "chloe"}
	// Envelope times: one second apart from the first lesson on.
	clock := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	var laps []*laptop
	defer func() {
		for _, l := range laps {
			l.close()
		}
	}()
	for _, n := range names {
		key, err := dag.GenerateSigner(nil)
		if err != nil {
			return nil, err
		}
		l := &laptop{name: n, key: key, dir: filepath.Join(dir, n)}
		if l.local, err = node.Open(ctx, node.Options{Dir: l.dir, NodeKey: key}); err != nil {
			return nil, err
		}
		if l.a, err = author.New(author.Options{Signer: key, Clock: tick, Heads: l.local, Groups: l.local.Replica()}); err != nil {
			return nil, err
		}
		laps = append(laps, l)
	}
	teacher, ana := laps[0], laps[1]
	var roster []dag.Key
	for _, l := range laps {
		roster = append(roster, l.key.Key())
	}

	// The teacher makes the session; its id is what the class agrees on.
	ruleText := []byte("Rules of the civics class.") // the rules' plain-language text, attached to session.create
	text := dag.Sum(ruleText)
	majority, err := author.Majority(house.MinRootNotice, text)
	if err != nil {
		return nil, err
	}
	twoThirds, err := author.TwoThirds(text)
	if err != nil {
		return nil, err
	}
	allow, err := author.AlwaysAllow(text)
	if err != nil {
		return nil, err
	}
	seed := statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{
		{NID: "/us/t1", Kind: "title", Heading: "Title 1", Children: []statute.NodeSpec{
			{NID: "/us/t1/s1", Kind: "section", Heading: "Section 1", Text: "Homework is due in 7 days."}}}}})
	genesis, err := house.Genesis(seed.Hash()).ID()
	if err != nil {
		return nil, err
	}
	create, err := teacher.a.SessionCreate(ctx, author.Session{Label: "Civics, term 1", Seed: seed, Simulation: true, Education: true,
		Registrar: "registrar", Roster: "roster", RootRule: majority, RootGovernanceRule: twoThirds, Texts: [][]byte{ruleText}})
	if err != nil {
		return nil, err
	}
	session := create.Made
	space := session.String() // sync names spaces by their string: a session id or mem:NAME
	write := func(l *laptop, tx author.Tx, err error) error {
		if err != nil {
			return err
		}
		rc, err := l.local.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil {
			return err
		}
		if err := rc.Err(); err != nil { // a *replica.Rejection, carrying the signed receipt
			return fmt.Errorf("%s's %s: %w", l.name, tx.Env.Type, err)
		}
		return nil
	}
	heads := func(l *laptop) []dag.ID {
		h, _ := l.local.Heads(ctx, space)
		return h
	}
	for _, step := range []func() (author.Tx, error){
		func() (author.Tx, error) { return create, nil },
		func() (author.Tx, error) {
			return teacher.a.GroupCreate(ctx, session, author.Group{ID: "roster", Members: roster, Admins: roster[:1]}, nil)
		},
		func() (author.Tx, error) {
			return teacher.a.GroupCreate(ctx, session, author.Group{ID: "registrar", Members: roster[:1], Admins: roster[:1]}, nil)
		},
		func() (author.Tx, error) {
			return teacher.a.GroupCreate(ctx, session, author.Group{ID: "drafters", Members: roster[1:3], Admins: roster[1:2]}, nil)
		},
		func() (author.Tx, error) {
			// Ana signs it on the teacher's laptop, after what it holds.
			return ana.a.BranchCreate(ctx, session, author.Branch{Name: "draft", Owner: "drafters", SourceBranch: house.RootBranch,
				SourceChange: genesis, MergeRule: allow, GovernanceRule: twoThirds}, heads(teacher))
		},
	} {
		tx, err := step()
		if err := write(teacher, tx, err); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(w, "teacher opened session %s (simulation, education)\n", short(session))

	// The laptops find each other and sync the session.
	for i, l := range laps {
		cfg := sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space}, MDNS: o.MDNS,
			MDNSTag: "witan-classroom-" + space[7:15], Debounce: 20 * time.Millisecond, Interval: time.Second}
		if i > 0 && !o.MDNS {
			cfg.Peers = []string{teacher.local.Sync().Addrs()[0]}
		}
		if _, err := l.local.StartSync(ctx, cfg); err != nil {
			return nil, err
		}
	}
	// The teacher's laptop also serves the HTTP API on loopback.
	srv, err := httpapi.New(httpapi.Options{Node: teacher.local, Ephemeral: true})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	api := &httpapi.Client{BaseURL: "http://" + ln.Addr().String(), Session: space}
	fmt.Fprintf(w, "teacher's node: http://%s%s\n", ln.Addr(), httpapi.Base)
	if err := converge(ctx, space, laps); err != nil {
		return nil, err
	}

	// Ana drafts on her own laptop and opens the MR.
	op, err := author.Replace(seed, "/us/t1/s1", "Homework is due in 14 days.")
	if err != nil {
		return nil, err
	}
	tx, made, err := ana.a.BranchAppend(ctx, session, author.Change{Branch: "draft", Parent: genesis, Base: seed, Ops: []statute.Op{op}}, nil)
	if err := write(ana, tx, err); err != nil {
		return nil, err
	}
	open, err := ana.a.MROpen(ctx, session, author.MR{Source: "draft", SourceHead: made.Change, TargetHead: genesis,
		Rule: majority, Summary: "Give two weeks for homework"}, nil)
	if err := write(ana, open, err); err != nil {
		return nil, err
	}
	mr := open.Made
	fmt.Fprintf(w, "ana opened MR %s: %q\n", short(mr), "Give two weeks for homework")
	if err := converge(ctx, space, laps); err != nil {
		return nil, err
	}

	// Everyone votes on their own laptop.
	choices := map[string]string{"teacher": "approve", "ana": "approve", "ben": "approve", "chloe": "reject"}
	var ballots []dag.ID
	for _, l := range laps {
		tx, err := l.a.BallotCast(ctx, session, author.Ballot{MR: mr, Choice: choices[l.name]}, nil)
		if err := write(l, tx, err); err != nil {
			return nil, err
		}
		ballots = append(ballots, tx.ID)
	}
	if err := converge(ctx, space, laps); err != nil {
		return nil, err
	}
	out := &outcome{Laptops: len(laps)}
	for _, l := range laps {
		t, err := l.local.Views().Tally(ctx, session, mr)
		if err != nil {
			return nil, err
		}
		out.LiveApprove = append(out.LiveApprove, t.Result.Tally.Approve)
		out.LiveFinality = append(out.LiveFinality, t.Finality)
		fmt.Fprintf(w, "%-8s live tally: %d approve, %d reject, %d abstain (%s)\n", l.name, t.Result.Tally.Approve, t.Result.Tally.Reject, t.Result.Tally.Abstain, t.Finality)
	}

	// The teacher determines; every laptop re-evaluates it, then signs
	// its own checkpoint.
	slices.SortFunc(ballots, dag.ID.Compare)
	det, err := teacher.a.Determine(ctx, session, author.Determination{MR: mr, Ballots: ballots, Outcome: "approved"}, nil)
	if err := write(teacher, det, err); err != nil {
		return nil, err
	}
	if err := converge(ctx, space, laps); err != nil {
		return nil, err
	}
	hashes := map[dag.ID]bool{}
	for _, l := range laps {
		if _, err := l.local.Replica().Checkpoint(ctx, session); err != nil {
			return nil, err
		}
		m, err := l.local.Views().MR(ctx, session, mr)
		if err != nil {
			return nil, err
		}
		_, h, err := l.local.Replica().State(ctx, session)
		if err != nil {
			return nil, err
		}
		hashes[h] = true
		out.Status = append(out.Status, m.Status)
		out.FinalFinality = append(out.FinalFinality, m.Finality)
		fmt.Fprintf(w, "%-8s MR %s (%s)\n", l.name, m.Status, m.Finality)
	}
	out.StateHashesAgree = len(hashes) == 1
	var ta httpapi.TallyAnswer
	if err := api.Get(ctx, "/merge-requests/"+mr.String()+"/tally", nil, &ta); err != nil {
		return nil, err
	}
	out.TallyOverHTTP, out.SimulationLabeled = ta.Finality, ta.Simulation
	var capa httpapi.Capability
	if err := api.Get(ctx, "/.well-known/oth", nil, &capa); err != nil {
		return nil, err
	}
	out.Ephemeral = capa.Ephemeral && capa.Education
	fmt.Fprintf(w, "teacher's API: tally %s, simulation %v, ephemeral %v\n", ta.Finality, ta.Simulation, capa.Ephemeral)

	// End of term: the session is purged from every laptop.
	hs.Close()
	out.Purged = true
	for _, l := range laps {
		l.close()
		if err := os.RemoveAll(l.dir); err != nil {
			return nil, err
		}
		if _, err := os.Stat(l.dir); !os.IsNotExist(err) {
			out.Purged = false
		}
	}
	fmt.Fprintln(w, "end of term: the session is purged from every laptop")
	return out, nil
}

// converge waits until every laptop holds the same heads of space.
func converge(ctx context.Context, space string, laps []*laptop) error {
	for {
		first, err := dag.HeadsOf(ctx, laps[0].local, space) // a laptop may hold nothing yet
		if err != nil {
			return err
		}
		same := len(first) > 0
		for _, l := range laps[1:] {
			h, err := dag.HeadsOf(ctx, l.local, space)
			if err != nil {
				return err
			}
			same = same && slices.Equal(h, first)
		}
		if same {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("laptops did not converge: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func short(id dag.ID) string { return id.String()[:15] + "…" }
