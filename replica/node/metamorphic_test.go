package node_test

// The metamorphic suite (the habit of cockroachdb/pebble's): one seeded
// history of operations, replayed under every combination of the things
// that must not matter, must end in the same place. The history is a set
// of replicas and what is written at each (sessions with their rosters
// and MRs, ballots, superseding ballots, opinions, memory blocks with
// forks and merges), with partitions, clean restarts and kill -9s between
// the writes; a variant chooses the store (in memory, or Badger on disk),
// the batch sizes of sync, whether announcements arrive in order or
// shuffled and late, whether they are duplicated, and whether the
// history's partitions (with lost announcements and cut streams) happen.
// Every replica of every variant must end with byte-identical heads in
// every space and the same state hash in every session.
//
// CI runs metamorphicSeeds seeds (4 with -short, for the race run);
// WITAN_METAMORPHIC_SEEDS and WITAN_METAMORPHIC_FIRST run more or others,
// and -metamorphic.seed replays one seed, which is what a failure prints.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/simnet"
)

var metaSeed = flag.Uint64("metamorphic.seed", 0, "replay this one seed of TestMetamorphic under every variant")

// metamorphicSeeds is how many seeds CI runs (seeds 1 to 200).
const metamorphicSeeds = 200

type metaKind int

const (
	metaTx        metaKind = iota // submit an envelope
	metaBlock                     // put a memory block
	metaRestart                   // close the node cleanly, open it again on its store
	metaKill                      // drop the process; reopen the store from what the OS holds
	metaPartition                 // split the network (faulty variants only)
	metaHeal                      // end the partition
	metaBarrier                   // heal, and run rounds until every space converges
)

type metaOp struct {
	kind   metaKind
	node   int
	tx     ht.Tx
	space  string // memory space name
	block  mb.Block
	groups [][]string
	rounds int // rounds to run after the op
}

type metaHistory struct {
	seed  uint64
	names []string
	ops   []metaOp
}

func (h *metaHistory) String() string {
	counts := map[metaKind]int{}
	for _, o := range h.ops {
		counts[o.kind]++
	}
	return fmt.Sprintf("%d replicas, %d envelopes, %d blocks, %d restarts, %d kills, %d partitions, %d barriers",
		len(h.names), counts[metaTx], counts[metaBlock], counts[metaRestart], counts[metaKill], counts[metaPartition], counts[metaBarrier])
}

// genMetaHistory draws a history from seed. Every write is valid where
// it is made in every variant: its causal past is what an earlier barrier
// spread to every replica, or what was written at the same replica since
// (which its store keeps across restarts and kills).
func genMetaHistory(seed uint64) *metaHistory {
	rng := rand.New(rand.NewPCG(seed, 0x3e7a))
	h := &metaHistory{seed: seed}
	nodes := 3 + rng.IntN(2)
	for i := range nodes {
		h.names = append(h.names, string(rune('a'+i)))
	}
	const voters = 8
	type session struct {
		b     *ht.Builder
		mr    dag.ID
		open  dag.ID
		group dag.ID         // the roster's group.create
		voted map[int]dag.ID // member → their latest ballot
		where map[int]int    // member → replica of that ballot
		super map[dag.ID]bool
	}
	// everywhere[s] holds what every replica has (after a barrier);
	// local[k][s] what replica k wrote since.
	everywhere := map[string][]dag.ID{}
	local := make([]map[string][]dag.ID, nodes)
	for k := range local {
		local[k] = map[string][]dag.ID{}
	}
	avail := func(k int, s string) []dag.ID { return append(slices.Clone(everywhere[s]), local[k][s]...) }
	pick := func(ids []dag.ID, most int) []dag.ID {
		var out []dag.ID
		for range 1 + rng.IntN(most) {
			if id := ids[rng.IntN(len(ids))]; !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
		return out
	}
	barrier := func() {
		h.ops = append(h.ops, metaOp{kind: metaBarrier})
		for k := range local {
			for s, ids := range local[k] {
				everywhere[s] = append(everywhere[s], ids...)
			}
			local[k] = map[string][]dag.ID{}
		}
	}
	var sessions []*session
	for i := range 2 {
		b := ht.New(ht.Options{Label: fmt.Sprintf("metamorphic %d/%d", seed, i)})
		roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, voters), ht.Members(0, 1), b.Create.ID)
		open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
			Members: ht.Members(0, voters), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
		k := rng.IntN(nodes)
		for _, tx := range []ht.Tx{b.Create, roster, open} {
			h.ops = append(h.ops, metaOp{kind: metaTx, node: k, tx: tx})
		}
		sessions = append(sessions, &session{b: b, mr: mr, open: open.ID, group: roster.ID, voted: map[int]dag.ID{}, where: map[int]int{}, super: map[dag.ID]bool{}})
		local[k][b.Session.String()] = []dag.ID{b.Create.ID, roster.ID, open.ID}
	}
	barrier()
	agents := []string{"tide", "harbour", "gulls"}
	written := 0
	for range 2 + rng.IntN(3) { // epochs
		for range 4 + rng.IntN(10) {
			k := rng.IntN(nodes)
			op := metaOp{node: k, rounds: rng.IntN(3)}
			switch x := rng.IntN(100); {
			case x < 30: // a ballot, or a member's second superseding their first
				s := sessions[rng.IntN(len(sessions))]
				sp := s.b.Session.String()
				m := rng.IntN(voters)
				var sup dag.ID
				if prev, ok := s.voted[m]; ok {
					if s.super[prev] || !slices.Contains(avail(k, sp), prev) {
						continue
					}
					sup = prev
					s.super[prev] = true
				}
				choice := []string{"approve", "reject", "abstain"}[rng.IntN(3)]
				parents := append([]dag.ID{s.open}, pick(avail(k, sp), 2)...)
				if sup.Valid() && !slices.Contains(parents, sup) {
					parents = append(parents, sup)
				}
				op.kind, op.tx = metaTx, s.b.Ballot(ht.Member(m), s.mr, choice, sup, dedup(parents)...)
				s.voted[m] = op.tx.ID
				local[k][sp] = append(local[k][sp], op.tx.ID)
			case x < 50: // an opinion on the spec, replying to what the replica holds
				s := sessions[rng.IntN(len(sessions))]
				sp := s.b.Session.String()
				body := ht.OpinionBody("member", "spec", "30k", map[string]any{"summary": fmt.Sprintf("view %d", written)})
				op.kind, op.tx = metaTx, s.b.Opinion(ht.Member(rng.IntN(voters)), body, dedup(append([]dag.ID{s.group}, pick(avail(k, sp), 3)...))...)
				local[k][sp] = append(local[k][sp], op.tx.ID)
			case x < 78: // a memory block: a root, a child, or a merge of what the replica holds
				name := agents[rng.IntN(len(agents))]
				sp := node.MemoryPrefix + name
				var lineage []dag.ID
				if ids := avail(k, sp); len(ids) > 0 && rng.IntN(5) > 0 {
					lineage = pick(ids, 2)
				}
				op.kind, op.space = metaBlock, name
				op.block = mb.Block{Subject: mb.MustText(name), Body: mb.MustText(fmt.Sprintf("note %d of seed %d", written, seed)),
					Confidence: mb.MustValue(strconv.Itoa(rng.IntN(101))), Lineage: mb.MustParents(lineage...)}.Seal()
				local[k][sp] = append(local[k][sp], op.block.ID())
			case x < 85:
				op.kind = metaRestart
			case x < 92:
				op.kind = metaKill
			case x < 97:
				perm := rng.Perm(nodes)
				cut := 1 + rng.IntN(nodes-1)
				var g1, g2 []string
				for i, p := range perm {
					if i < cut {
						g1 = append(g1, h.names[p])
					} else {
						g2 = append(g2, h.names[p])
					}
				}
				op.kind, op.groups = metaPartition, [][]string{g1, g2}
			default:
				op.kind = metaHeal
			}
			written++
			h.ops = append(h.ops, op)
		}
		barrier()
	}
	return h
}

func dedup(ids []dag.ID) []dag.ID {
	var out []dag.ID
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// metaVariant is one combination of what must not matter.
type metaVariant struct {
	disk     bool // Badger on disk, else a store in memory
	small    bool // sync batches of 2 entries, ingested 3 at a time
	shuffled bool // announcements delivered in random order, up to 2 rounds late
	dup      bool // 30 % of announcements arrive twice
	faults   bool // the history's partitions, 15 % of announcements lost and streams cut
}

func (v metaVariant) String() string {
	var parts []string
	add := func(on bool, yes, no string) {
		if on {
			parts = append(parts, yes)
		} else {
			parts = append(parts, no)
		}
	}
	add(v.disk, "disk", "mem")
	add(v.small, "small", "batch")
	add(v.shuffled, "shuffled", "ordered")
	add(v.dup, "dup", "once")
	add(v.faults, "faults", "perfect")
	return strings.Join(parts, "/")
}

func allMetaVariants() []metaVariant {
	var out []metaVariant
	for bits := range 32 {
		out = append(out, metaVariant{disk: bits&1 != 0, small: bits&2 != 0, shuffled: bits&4 != 0, dup: bits&8 != 0, faults: bits&16 != 0})
	}
	return out
}

// metaReplica is one replica's process and its store.
type metaReplica struct {
	name  string
	key   *dag.Signer
	node  *node.Node
	mem   dag.Store // the in-memory store, which outlives the node
	disk  *badgerstore.Store
	base  string // the store's first directory
	dir   string // its directory now: base, or the copy of the last kill
	kills int
}

func (r *metaReplica) open(ctx context.Context, v metaVariant) error {
	st := r.mem
	if v.disk {
		var err error
		r.disk, err = badgerstore.Open(r.dir, badgerstore.Options{MemTableSize: 1 << 20, ValueLogFileSize: 1 << 20,
			BlockCacheSize: 1 << 20, BodyFileSize: 1 << 20, NoSync: true})
		if err != nil {
			return err
		}
		st = r.disk
	}
	n, err := node.Open(ctx, node.Options{Store: st, NodeKey: r.key})
	if err != nil {
		return err
	}
	r.node = n
	return nil
}

func (r *metaReplica) close() error {
	err := r.node.Close()
	if r.disk != nil {
		err = errors.Join(err, r.disk.Close())
		r.disk = nil
	}
	return err
}

// kill drops the process: on disk, the store's files are copied as the
// operating system holds them at this moment (a killed process's writes
// are in the page cache, and survive it), the old process is shut down
// out of sight, and the copy opened. In memory a kill is a restart: the
// store is the part that survives.
func (r *metaReplica) kill(ctx context.Context, v metaVariant) error {
	if !v.disk {
		if err := r.close(); err != nil {
			return err
		}
		return r.open(ctx, v)
	}
	r.kills++
	dir := fmt.Sprintf("%s.kill%d", r.base, r.kills)
	if err := copyLive(r.dir, dir); err != nil {
		return err
	}
	if err := r.close(); err != nil {
		return err
	}
	r.dir = dir
	return r.open(ctx, v)
}

// copyLive copies a running store's directory as a kill would leave it.
// The copy is not atomic: a memtable flush or a compaction that makes or
// removes a table while the files are copied leaves a MANIFEST naming a
// table the copy lacks (or the other way round), which no kill can leave,
// since Badger writes a table before the MANIFEST names it and removes it
// only after. So the copy is made again until the directory's file names
// are the same before and after it.
func copyLive(from, to string) error {
	for range 20 {
		before, err := fileNames(from)
		if err != nil {
			return err
		}
		if err := copyTree(from, to); err != nil {
			return err
		}
		after, err := fileNames(from)
		if err != nil {
			return err
		}
		if slices.Equal(before, after) {
			return nil
		}
		if err := os.RemoveAll(to); err != nil {
			return err
		}
	}
	return fmt.Errorf("copying %s: its tables kept changing", from)
}

// fileNames lists the files below dir, sorted, with the sizes of the
// tables and the MANIFEST: a table being written has its name before its
// bytes (a copy that raced one took a table of size 0, seed 155), and
// the MANIFEST grows as tables are added or removed. The value log and
// memtables are preallocated, so their sizes say nothing.
func fileNames(dir string) ([]string, error) {
	var names []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil // removed since its directory was read: the lists differ, and the copy is made again
		}
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		if strings.HasSuffix(path, ".sst") || strings.HasPrefix(filepath.Base(path), "MANIFEST") {
			names = append(names, fmt.Sprintf("%s %d", path, info.Size()))
		} else {
			names = append(names, path)
		}
		return nil
	})
	slices.Sort(names)
	return names, err
}

// copyTree copies the files below from to to. A file removed while it
// walks is left out and the walk goes on (copyLive then sees the names
// change and copies again); stopping there would leave the files after it
// uncopied in a copy whose names may yet compare equal.
func copyTree(from, to string) error {
	return filepath.Walk(from, func(path string, info os.FileInfo, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		in, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// runMeta replays h under v and returns, for each replica, the digest of
// where it ended: every space's heads, every session's state hash.
func runMeta(ctx context.Context, h *metaHistory, v metaVariant, tmp string) ([]string, error) {
	cfg := simnet.Config{Seed: h.seed*64 + uint64(len(h.names))}
	if v.shuffled {
		cfg.Shuffle, cfg.MaxDelay = true, 2
	}
	if v.dup {
		cfg.Dup = 0.3
	}
	if v.faults {
		cfg.Loss = 0.15
	}
	so := sync.Options{}
	if v.small {
		so.MaxBatchItems, so.IngestItems = 2, 3
	}
	net := simnet.New(cfg)
	reps := make([]*metaReplica, len(h.names))
	defer func() {
		for _, r := range reps {
			if r != nil && r.node != nil {
				r.close()
			}
		}
	}()
	for i, name := range h.names {
		key, err := dag.SignerFromSeed(slices.Repeat([]byte{byte(i + 1)}, 32))
		if err != nil {
			return nil, err
		}
		r := &metaReplica{name: name, key: key, mem: dag.NewMemStore(), base: filepath.Join(tmp, name), dir: filepath.Join(tmp, name)}
		if err := r.open(ctx, v); err != nil {
			return nil, err
		}
		reps[i] = r
		net.Add(name, r.node, so)
	}
	round := func(n int) error {
		for range n {
			if err := net.Round(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	for i, op := range h.ops {
		r := reps[op.node]
		switch op.kind {
		case metaTx:
			rc, err := r.node.Submit(ctx, op.tx.Bytes, op.tx.Attach)
			if err == nil {
				err = rc.Err()
			}
			if err != nil {
				return nil, fmt.Errorf("op %d: %s at %s: %w", i, op.tx.Env.Type, r.name, err)
			}
		case metaBlock:
			if _, err := r.node.PutBlock(ctx, op.space, op.block); err != nil {
				return nil, fmt.Errorf("op %d: block in %s at %s: %w", i, op.space, r.name, err)
			}
		case metaRestart, metaKill:
			var err error
			if op.kind == metaRestart {
				if err = r.close(); err == nil {
					err = r.open(ctx, v)
				}
			} else {
				err = r.kill(ctx, v)
			}
			if err != nil {
				return nil, fmt.Errorf("op %d: restart %s: %w", i, r.name, err)
			}
			if _, err := net.Restart(r.name, r.node, so); err != nil {
				return nil, err
			}
		case metaPartition:
			if v.faults {
				net.Partition(op.groups...)
			}
		case metaHeal:
			net.Heal()
		case metaBarrier:
			net.Heal()
			if err := converge(ctx, net, reps); err != nil {
				return nil, fmt.Errorf("op %d (barrier): %w (%+v)", i, err, net.Stats())
			}
		}
		if err := round(op.rounds); err != nil {
			return nil, err
		}
	}
	out := make([]string, len(reps))
	for i, r := range reps {
		d, err := metaDigest(ctx, r.node)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// converge runs rounds until every replica holds the same heads in every
// space any of them holds.
func converge(ctx context.Context, net *simnet.Net, reps []*metaReplica) error {
	const most = 400
	for range most {
		same, err := sameHeads(ctx, reps)
		if err != nil || same {
			return err
		}
		if err := net.Round(ctx); err != nil {
			return err
		}
	}
	return fmt.Errorf("not converged after %d rounds", most)
}

func sameHeads(ctx context.Context, reps []*metaReplica) (bool, error) {
	var want string
	for i, r := range reps {
		d, err := headsDigest(ctx, r.node)
		if err != nil {
			return false, err
		}
		if i == 0 {
			want = d
		} else if d != want {
			return false, nil
		}
	}
	return true, nil
}

func headsDigest(ctx context.Context, n *node.Node) (string, error) {
	spaces, err := n.Spaces(ctx)
	if err != nil {
		return "", err
	}
	slices.Sort(spaces)
	var b strings.Builder
	for _, sp := range spaces {
		hs, err := n.Heads(ctx, sp)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s:", sp)
		for _, id := range hs {
			fmt.Fprintf(&b, " %s", id)
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func metaDigest(ctx context.Context, n *node.Node) (string, error) {
	d, err := headsDigest(ctx, n)
	if err != nil {
		return "", err
	}
	spaces, _ := n.Spaces(ctx)
	slices.Sort(spaces)
	for _, sp := range spaces {
		if strings.HasPrefix(sp, node.MemoryPrefix) {
			continue
		}
		_, hash, err := n.Replica().State(ctx, dag.MustParseID(sp))
		if err != nil {
			return "", err
		}
		d += fmt.Sprintf("state %s: %s\n", sp, hash)
	}
	return d, nil
}

func metaSeedRange(t *testing.T) (first, count uint64) {
	first, count = 1, metamorphicSeeds
	if testing.Short() { // the race run: a few seeds, each some 5 s under the detector
		count = 4
	}
	if s := os.Getenv("WITAN_METAMORPHIC_SEEDS"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("WITAN_METAMORPHIC_SEEDS=%q: %v", s, err)
		}
		count = n
	}
	if s := os.Getenv("WITAN_METAMORPHIC_FIRST"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("WITAN_METAMORPHIC_FIRST=%q: %v", s, err)
		}
		first = n
	}
	if *metaSeed != 0 {
		first, count = *metaSeed, 1
	}
	return first, count
}

// metaVariantsOf returns the variants seed runs under: all 32 when one
// seed is replayed or WITAN_METAMORPHIC_ALL is set; in CI, where a disk
// variant costs some ten times a memory one (a Badger open and close at
// each restart), three: the perfect network in memory as the reference,
// one memory and one disk variant, rotating so that every 16 seeds cover
// all 32.
func metaVariantsOf(seed uint64) []metaVariant {
	all := allMetaVariants()
	if *metaSeed != 0 || os.Getenv("WITAN_METAMORPHIC_ALL") != "" {
		return all
	}
	return []metaVariant{all[0], all[2*(seed%16)], all[2*((seed*7+3)%16)+1]}
}

// TestMetamorphic replays each seed's history under the variants of
// metaVariantsOf (store × batch size × arrival order × duplication ×
// faults) and requires every replica of every variant to end with the
// same heads in every space and the same state hash in every session.
func TestMetamorphic(t *testing.T) {
	ctx := context.Background()
	first, count := metaSeedRange(t)
	start := time.Now()
	runs := 0
	for seed := first; seed < first+count; seed++ {
		h := genMetaHistory(seed)
		repro := fmt.Sprintf("go test ./replica/node/ -run 'TestMetamorphic$' -metamorphic.seed=%d -v", seed)
		var ref []string
		var refV metaVariant
		variants := metaVariantsOf(seed)
		for vi, v := range variants {
			if vi > 0 && v == variants[0] {
				continue
			}
			tmp, err := os.MkdirTemp(t.TempDir(), "meta")
			if err != nil {
				t.Fatal(err)
			}
			vt := time.Now()
			got, err := runMeta(ctx, h, v, tmp)
			if os.Getenv("WITAN_METAMORPHIC_TIMES") != "" {
				t.Logf("seed %d %s %v", seed, v, time.Since(vt))
			}
			if err != nil {
				t.Fatalf("seed %d (%s), variant %s: %v\nreproduce: %s", seed, h, v, err, repro)
			}
			runs++
			os.RemoveAll(tmp)
			for i := range got {
				if ref == nil && i == 0 {
					ref, refV = got, v
					continue
				}
				if got[i] != ref[0] {
					t.Fatalf("seed %d (%s): replica %s of variant %s ends at\n%s\nreplica %s of variant %s at\n%s\nreproduce: %s",
						seed, h, h.names[i], v, got[i], h.names[0], refV, ref[0], repro)
				}
			}
		}
		if *metaSeed != 0 {
			t.Logf("seed %d: %s; all %d variants agree:\n%s", seed, h, len(variants), ref[0])
		}
	}
	t.Logf("%d seeds, %d runs of a history, 0 divergences, %v", count, runs, time.Since(start).Round(time.Millisecond))
}

// TestMetamorphicSeesALostWrite: the comparison can fail. The history
// without its last write (which nothing later depends on) ends elsewhere
// than the whole history, and the digests say so.
func TestMetamorphicSeesALostWrite(t *testing.T) {
	ctx := context.Background()
	h := genMetaHistory(7)
	short := &metaHistory{seed: h.seed, names: h.names, ops: slices.Clone(h.ops)}
	last := -1
	for i, o := range short.ops {
		if o.kind == metaTx || o.kind == metaBlock {
			last = i
		}
	}
	short.ops = slices.Delete(short.ops, last, last+1)
	v := metaVariant{shuffled: true, dup: true, faults: true}
	whole, err := runMeta(ctx, h, v, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lost, err := runMeta(ctx, short, v, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if whole[0] == lost[0] {
		t.Fatalf("a lost %v goes unseen: both end at\n%s", h.ops[last].kind, whole[0])
	}
	if lost[0] != lost[len(lost)-1] {
		t.Fatal("the shortened history does not converge")
	}
}
