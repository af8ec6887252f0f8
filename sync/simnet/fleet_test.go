package simnet_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/simnet"
	"github.com/witan-dev/witan/sync/synctest"
)

// A fleet: N agents, each a replica of the fleet's shared memory spaces,
// on the gossip model. fleetRun measures, at one size:
//   - spread: rounds until a block written at one agent is held by all;
//   - busy traffic: gossip bytes and pulls per agent per round while the
//     fleet writes about one block a second (one round in ten), all told;
//   - idle traffic: the same with no writes (re-announcements only);
//   - heal: rounds until every agent holds every block after a partition
//     into halves, each of which wrote 5 blocks, heals.
type fleetResult struct {
	N             int
	ContentIDs    bool
	Spread        int   // rounds
	Heal          []int // rounds, sorted, after short cuts
	HealReconnect []int // rounds, sorted, after cuts that closed connections
	BusyBytes     float64
	BusyPulls     float64
	IdleBytes     float64
	IdlePulls     float64
	BusyRounds    int
	IdleRounds    int
	Wall          time.Duration
	Mesh          float64 // mean mesh degree
	AnnouncedMsgs int
}

const (
	fleetSpaces = 2
	fleetHeals  = 3 // partitions healed each way
)

type fleet struct {
	net     *simnet.Net
	reps    []*synctest.Replica
	authors []*synctest.Author
	spaces  []string
	rng     *rand.Rand
	written int
	// wide: every block after a space's first is written on that first
	// one alone, so the space's heads grow by one a block (a class's
	// ballots, each a leaf on its question), past what an announcement
	// names.
	wide  bool
	first map[string]dag.ID
}

func newFleet(n int, seed uint64, g simnet.Gossip) *fleet {
	f := &fleet{net: simnet.New(simnet.Config{Seed: seed, Gossip: &g}), rng: rand.New(rand.NewPCG(seed, 7)), first: map[string]dag.ID{}}
	for i := range n {
		r := synctest.NewMem(synctest.Options{})
		f.reps = append(f.reps, r)
		f.authors = append(f.authors, synctest.NewAuthor(byte(i%251+1)))
		f.net.Add(fmt.Sprintf("agent%d", i), r, sync.Options{})
	}
	for s := range fleetSpaces {
		f.spaces = append(f.spaces, fmt.Sprintf("mem:team%d", s))
	}
	return f
}

// write puts a block at agent i in space sp, on top of its heads there.
func (f *fleet) write(ctx context.Context, i int, sp string) error {
	hs, err := f.reps[i].Heads(ctx, sp)
	if err != nil {
		return err
	}
	if len(hs) > 2 {
		hs = hs[:2]
	}
	if root, ok := f.first[sp]; ok && f.wide {
		hs = []dag.ID{root}
	}
	f.written++
	data, id := f.authors[i].Block(fmt.Sprintf("agent %d, block %d", i, f.written), hs...)
	if _, ok := f.first[sp]; !ok {
		f.first[sp] = id
	}
	res, err := f.reps[i].Ingest(ctx, sp, []sync.Item{{Data: data}})
	if err != nil {
		return err
	}
	if it := res.Items[0]; it.Outcome != sync.Accepted {
		return fmt.Errorf("own block: %v %s %s", it.Outcome, it.Code, it.Reason)
	}
	return nil
}

func (f *fleet) converged(ctx context.Context) (bool, error) {
	for _, sp := range f.spaces {
		ok, err := f.net.Converged(ctx, sp)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (f *fleet) untilConverged(ctx context.Context, most int) (int, error) {
	for r := 0; r <= most; r++ {
		ok, err := f.converged(ctx)
		if err != nil || ok {
			return r, err
		}
		if err := f.net.Round(ctx); err != nil {
			return r, err
		}
	}
	return most, fmt.Errorf("not converged after %d rounds (%+v)", most, f.net.Stats())
}

func fleetRun(ctx context.Context, n int, g simnet.Gossip, seed uint64, busyRounds, idleRounds int) (fleetResult, error) {
	return fleetRunWide(ctx, n, g, seed, busyRounds, idleRounds, false)
}

func fleetRunWide(ctx context.Context, n int, g simnet.Gossip, seed uint64, busyRounds, idleRounds int, wide bool) (fleetResult, error) {
	start := time.Now()
	res := fleetResult{N: n, ContentIDs: g.ContentIDs, BusyRounds: busyRounds, IdleRounds: idleRounds}
	f := newFleet(n, seed, g)
	f.wide = wide
	for _, sp := range f.spaces {
		if err := f.write(ctx, 0, sp); err != nil {
			return res, err
		}
	}
	if _, err := f.untilConverged(ctx, 2000); err != nil {
		return res, fmt.Errorf("first blocks: %w", err)
	}
	deg := 0
	for i := range n {
		deg += len(f.net.Mesh(i))
	}
	res.Mesh = float64(deg) / float64(n)
	// Spread: one block, from one agent.
	if err := f.write(ctx, f.rng.IntN(n), f.spaces[0]); err != nil {
		return res, err
	}
	r, err := f.untilConverged(ctx, 2000)
	if err != nil {
		return res, fmt.Errorf("spread: %w", err)
	}
	res.Spread = r
	// Busy: a block a second, fleet-wide.
	before := f.net.Stats()
	for range busyRounds {
		if f.rng.IntN(10) == 0 {
			if err := f.write(ctx, f.rng.IntN(n), f.spaces[f.rng.IntN(len(f.spaces))]); err != nil {
				return res, err
			}
		}
		if err := f.net.Round(ctx); err != nil {
			return res, err
		}
	}
	after := f.net.Stats()
	if os.Getenv("WITAN_FLEET_DEBUG") != "" {
		fmt.Printf("busy n=%d published=%d suppressed=%d replies=%d digestpulls=%d insync=%d ihaves=%d iwants=%d\n", n,
			after.Published-before.Published, after.Suppressed-before.Suppressed, after.Replies-before.Replies, after.DigestPulls-before.DigestPulls, after.InSync-before.InSync, after.IHaves-before.IHaves, after.IWants-before.IWants)
	}
	res.BusyBytes = float64(after.AnnounceBytes-before.AnnounceBytes) / float64(n) / float64(busyRounds)
	res.BusyPulls = float64(after.Pulls-before.Pulls) / float64(n) / float64(busyRounds)
	if _, err := f.untilConverged(ctx, 3000); err != nil {
		return res, fmt.Errorf("after busy: %w", err)
	}
	// Idle.
	before = f.net.Stats()
	for range idleRounds {
		if err := f.net.Round(ctx); err != nil {
			return res, err
		}
	}
	after = f.net.Stats()
	res.IdleBytes = float64(after.AnnounceBytes-before.AnnounceBytes) / float64(n) / float64(idleRounds)
	res.IdlePulls = float64(after.Pulls-before.Pulls) / float64(n) / float64(idleRounds)
	// Partitions into halves, each side writing, then quiet for 50
	// rounds, healed alternately
	// as a short cut (the next announcements carry what each side
	// missed) and as one that closed connections (they reconnect and
	// pull).
	var g1, g2 []string
	for i, nd := range f.net.Nodes() {
		if i < n/2 {
			g1 = append(g1, nd.Name)
		} else {
			g2 = append(g2, nd.Name)
		}
	}
	for cycle := range 2 * fleetHeals {
		f.net.Partition(g1, g2)
		for k := range 10 {
			i := f.rng.IntN(n / 2)
			if k%2 == 1 {
				i += n / 2
			}
			if err := f.write(ctx, i, f.spaces[k%len(f.spaces)]); err != nil {
				return res, err
			}
			for range 5 {
				if err := f.net.Round(ctx); err != nil {
					return res, err
				}
			}
		}
		for range 50 { // quiet: nothing in flight when the cut heals
			if err := f.net.Round(ctx); err != nil {
				return res, err
			}
		}
		if cycle%2 == 0 {
			f.net.Heal()
		} else {
			f.net.HealReconnect()
		}
		r, err := f.untilConverged(ctx, 3000)
		if err != nil {
			return res, fmt.Errorf("heal %d: %w", cycle, err)
		}
		if cycle%2 == 0 {
			res.Heal = append(res.Heal, r)
		} else {
			res.HealReconnect = append(res.HealReconnect, r)
		}
	}
	slices.Sort(res.Heal)
	slices.Sort(res.HealReconnect)
	res.AnnouncedMsgs = f.net.Stats().Published
	res.Wall = time.Since(start)
	return res, nil
}

func (r fleetResult) String() string {
	ids := "seqno"
	if r.ContentIDs {
		ids = "content"
	}
	return fmt.Sprintf("fleet n=%d ids=%s mesh=%.1f spread_rounds=%d heal_rounds=%s heal_reconnect_rounds=%s busy_bytes_node_round=%.0f busy_pulls_node_round=%.3f idle_bytes_node_round=%.1f idle_pulls_node_round=%.4f wall=%v",
		r.N, ids, r.Mesh, r.Spread, ints(r.Heal), ints(r.HealReconnect), r.BusyBytes, r.BusyPulls, r.IdleBytes, r.IdlePulls, r.Wall.Round(time.Millisecond))
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// TestFleetGossip: on the gossip model, 40 agents converge after a write
// and after a healed partition, within a few hops of the mesh's diameter
// (for D = 8 and 40 replicas, 2 or 3 hops, plus the debounce of each
// replica that pulls and announces in turn), and a replica's idle gossip
// is re-announcements only: with content ids, nearly none.
func TestFleetGossip(t *testing.T) {
	ctx := context.Background()
	for _, content := range []bool{false, true} {
		res, err := fleetRun(ctx, 40, simnet.Gossip{ContentIDs: content}, 1, 300, 600)
		if err != nil {
			t.Fatalf("content ids %v: %v", content, err)
		}
		t.Log(res)
		// A write travels hop by hop: each hop is a round to arrive and a
		// debounce (3 rounds) before the puller announces in turn; or, on
		// the mesh, the first announcement reaches everyone within the
		// diameter and each pulls from the peer that passed it on, which
		// pulled a round before.
		if res.Spread > 4*(3+1) {
			t.Errorf("content ids %v: a write took %d rounds to reach 40 agents", content, res.Spread)
		}
		// A cut that closed connections heals in the round the links
		// reconnect, and a few hops after.
		if m := res.HealReconnect[len(res.HealReconnect)-1]; m > 10 {
			t.Errorf("content ids %v: %d rounds after a reconnecting heal", content, m)
		}
		// A short cut heals with the next announcement: a
		// re-announcement within the period (Reannounce, 300 rounds).
		if m := res.Heal[len(res.Heal)-1]; m > 300+20 {
			t.Errorf("content ids %v: %d rounds after a heal", content, m)
		}
		if res.Mesh < 8 || res.Mesh > 12 {
			t.Errorf("mesh degree %.1f, not within D=8 and Dhi=12", res.Mesh)
		}
	}
}

// TestFleetScale is the fleet benchmark: WITAN_FLEET=10,100,300,1000
// runs those sizes with both kinds of message id (WITAN_FLEET_IDS=seqno
// or content for one), printing one line per run, which
// scripts/syncplot reads. WITAN_FLEET_D sets the mesh degree,
// WITAN_FLEET_FLOOD=1 turns on flood publishing (the classroom's shape)
// and WITAN_FLEET_WIDE=1 writes every block as a new head (a class's
// ballots); WITAN_FLEET_DEBUG=1 prints the busy window's counters.
func TestFleetScale(t *testing.T) {
	sizes := os.Getenv("WITAN_FLEET")
	if sizes == "" {
		t.Skip("WITAN_FLEET=10,100,300,1000 runs the fleet benchmark")
	}
	ctx := context.Background()
	g := simnet.Gossip{}
	if d, err := strconv.Atoi(os.Getenv("WITAN_FLEET_D")); err == nil {
		g.D = d
	}
	g.FloodPublish = os.Getenv("WITAN_FLEET_FLOOD") != ""
	modes := []bool{false, true}
	if m := os.Getenv("WITAN_FLEET_IDS"); m == "content" {
		modes = []bool{true}
	} else if m == "seqno" {
		modes = []bool{false}
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, content := range modes {
			g.ContentIDs = content
			res, err := fleetRunWide(ctx, n, g, 1, 300, 600, os.Getenv("WITAN_FLEET_WIDE") != "")
			if err != nil {
				t.Fatalf("n=%d content=%v: %v", n, content, err)
			}
			fmt.Println(res)
		}
	}
}
