package replica_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/crashtest"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// The replica's power-loss test: a child process ingests a session of
// ballots into a replica on a LazyFS disk (crashtest.Disk), in
// Ingest calls of plCall envelopes, so that each call is cut into parts
// and each part is judged and written while the commit of the one before
// it syncs (pipeline.go). It prints "ack n" once a call returned with all
// of the first n entries accepted. The parent cuts the power at a moment
// drawn from a seeded generator, kills the child, opens the replica on
// the disk's backing directory (what reached the disk: Open derives the
// session from it) and checks that the log holds every acknowledged entry
// in the order sent, that the state read answers and that every head is
// in the log; then it mounts the
// disk again and a new child goes on from the log it finds.
//
// WITAN_POWERLOSS_CUTS sets the cuts (default 4, about 40 s); WITAN_POWERLOSS_SEED
// replays a logged run's cut timings. Skipped with -short, where /dev/fuse
// is absent, or when the process is not root (crashtest.Mount).

const (
	plReplicaChildEnv = "WITAN_REPLICA_POWERLOSS_CHILD" // the replica's directory, in the child
	plChainEnv        = "WITAN_REPLICA_POWERLOSS_CHAIN" // the file of the history's envelopes
	plCall            = 2500                            // three parts a call
	plEntries         = 100_000                         // more than the children get through
)

// plStoreOptions: memtables of 8 MiB (a part of 1000 envelopes needs
// most of the 15 % of one that a transaction may take), so that flushes and level-0
// compactions run inside the cut windows.
func plStoreOptions() badgerstore.Options {
	return badgerstore.Options{MemTableSize: 8 << 20, Tune: func(o badger.Options) badger.Options {
		o.NumLevelZeroTables = 2
		o.NumLevelZeroTablesStall = 4
		return o
	}}
}

// plHistory is the history the children ingest, in a causal order: a
// session, its roster (2000 members) and registrar, the opens of MRs, then
// each member's ballot on each MR. (Not a chain of tens of thousands of
// key registrations: that ran a child and its parent to ten gigabytes.)
func plHistory(n int) (*ht.Builder, []ht.Tx) {
	b := ht.New(ht.Options{Label: "replica power loss"})
	var txs []ht.Tx
	ballots := b.BallotLoad(n, 2000, func(tx ht.Tx) { txs = append(txs, tx) })
	return b, append(txs, ballots...)
}

func plReplicaChild(dir string) {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	st, err := badgerstore.Open(dir, plStoreOptions())
	if err != nil {
		fail(err)
	}
	r, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey(nil, 0)})
	if err != nil {
		fail(err)
	}
	envs, err := readChain(os.Getenv(plChainEnv))
	if err != nil {
		fail(err)
	}
	se, err := dag.DecodeSigned(envs[0].Env)
	if err != nil {
		fail(err)
	}
	log, err := r.Log(ctx, se.Envelope.Session, 0, 0)
	if err != nil {
		fail(err)
	}
	fmt.Println("ready")
	for lo := len(log); lo < len(envs); lo += plCall {
		hi := min(lo+plCall, len(envs))
		subs := make([]replica.Submission, 0, hi-lo)
		for _, tx := range envs[lo:hi] {
			subs = append(subs, replica.Submission{Envelope: tx.Env, Attachments: tx.Attach})
		}
		outs, err := r.Ingest(ctx, subs)
		if err != nil {
			fail(err)
		}
		for _, o := range outs {
			if o.Status != replica.Accepted {
				fail(fmt.Errorf("%+v", o))
			}
		}
		// Acknowledged only once Ingest returned.
		os.Stdout.WriteString("ack " + strconv.Itoa(hi) + "\n")
	}
	fmt.Println("end") // the history ran out: the cut comes all the same
	select {}
}

// plTx is one envelope of the history file, with its attachments.
type plTx struct {
	Env    []byte
	Attach [][]byte
}

// writeChain writes the envelopes of txs to a file (gob), so that each
// child reads the history instead of signing it again.
func writeChain(t *testing.T, txs []ht.Tx) string {
	out := make([]plTx, len(txs))
	for i, tx := range txs {
		out[i] = plTx{Env: tx.Bytes, Attach: tx.Attach}
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(out); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "chain")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readChain(p string) ([]plTx, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []plTx
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&out); err != nil {
		return nil, fmt.Errorf("chain file: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("chain file: empty")
	}
	return out, nil
}

// TestPowerLossPipelinedIngest: see above.
func TestPowerLossPipelinedIngest(t *testing.T) {
	if dir := os.Getenv(plReplicaChildEnv); dir != "" {
		plReplicaChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("power-loss test: not with -short")
	}
	d := crashtest.Mount(t)
	cuts := crashtest.Count(t, "WITAN_POWERLOSS_CUTS", 4)
	rng := crashtest.Rand(t, "WITAN_POWERLOSS_SEED", 7)
	ctx := context.Background()
	b, txs := plHistory(plEntries)
	space := b.Session
	chainFile := writeChain(t, txs)
	sub := "replica"
	acked := 0
	for cut := range cuts {
		cmd, out := crashtest.Start(t, "TestPowerLossPipelinedIngest", plReplicaChildEnv+"="+filepath.Join(d.Mnt, sub), plChainEnv+"="+chainFile)
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// The cut comes, in every other round, 0–3 ms after the child's
		// first to fourth acknowledgement, where a call answered before its
		// last part's commit landed would lose that part; in the others,
		// 0–500 ms after its first, wherever the parts' commits are then.
		var deadline <-chan time.Time
		afterAcks, within := -1, time.Duration(rng.IntN(500_000))*time.Microsecond
		if rng.IntN(2) == 0 {
			afterAcks, within = 1+rng.IntN(4), time.Duration(rng.IntN(3_000))*time.Microsecond
		}
		seen := 0
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					// Killed from outside (a SIGKILL is a crash as good as
					// ours: the check after the cut holds all the same);
					// anything else is the child's failure.
					if err := crashtest.WaitKilled(cmd); err != nil {
						t.Fatalf("cut %d: the child ended by itself: %v", cut, err)
					}
					t.Logf("cut %d: the child was killed before the cut", cut)
					break wait
				}
				if strings.HasPrefix(l, "error") {
					t.Fatalf("cut %d: child: %s", cut, l)
				}
				if n, found := strings.CutPrefix(l, "ack "); found {
					acked, _ = strconv.Atoi(n)
					seen++
					if deadline == nil && (afterAcks < 0 || seen == afterAcks) {
						deadline = time.After(within)
					}
				}
			case <-deadline:
				break wait
			}
		}
		if err := d.PowerCut(); err != nil {
			t.Fatal(err)
		}
		crashtest.Kill(cmd)
		// Lines the child wrote before it died were acknowledged too.
		for l := range lines {
			if n, found := strings.CutPrefix(l, "ack "); found {
				acked, _ = strconv.Atoi(n)
			}
		}
		cmd.Wait() //nolint:errcheck // killed (or waited for above)

		st, err := badgerstore.Open(filepath.Join(d.Root, sub), plStoreOptions())
		if err != nil {
			t.Fatalf("cut %d: open what reached the disk: %v", cut, err)
		}
		r, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey(t, 0)})
		if err != nil {
			t.Fatalf("cut %d: open the replica on what reached the disk: %v", cut, err)
		}
		log, err := r.Log(ctx, space, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) < acked {
			t.Errorf("cut %d: the log holds %d entries, %d were acknowledged", cut, len(log), acked)
		}
		for i := range min(len(log), len(txs)) {
			if log[i] != txs[i].ID {
				t.Fatalf("cut %d: log entry %d is %s, the one sent is %s", cut, i, log[i], txs[i].ID)
			}
		}
		if _, _, err := r.State(ctx, space); err != nil {
			t.Errorf("cut %d: state: %v", cut, err)
		}
		inLog := make(map[dag.ID]bool, len(log))
		for _, id := range log {
			inLog[id] = true
		}
		heads, err := r.Heads(ctx, space)
		if err != nil || len(log) > 0 && len(heads) == 0 {
			t.Errorf("cut %d: heads %v %v", cut, heads, err)
		}
		for _, h := range heads {
			if !inLog[h] {
				t.Errorf("cut %d: head %s is not in the log", cut, h)
			}
		}
		t.Logf("cut %d: %d entries acknowledged, %d in the log after the cut", cut, acked, len(log))
		r.Close()
		st.Close()
		if t.Failed() {
			return
		}
		if err := d.Remount(); err != nil {
			t.Fatal(err)
		}
	}
	if acked == 0 {
		t.Fatal("nothing was acknowledged: the test proved nothing")
	}
}
