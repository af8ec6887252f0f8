package replica_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/crashtest"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// The shared-commit crash test: a child process ingests a peer's ballots
// (Ingest calls of shareCrashCall, in parts) into a replica on disk while
// clients submit ballots from many goroutines, so that the clients'
// ballots share the parts' commits (replica/groupcommit.go). It prints
// "ack <i>" for each client ballot whose receipt said accepted and
// "peer <i>" for each peer ballot an Ingest call returned accepted. The
// parent SIGKILLs it at a random moment, reopens the replica and checks
// that every acknowledged ballot, of either kind, is in the log; then a
// new child goes on with what the log does not hold.
//
// WITAN_SHARE_CRASH_KILLS sets the number of kills (default 3);
// WITAN_SHARE_CRASH_SEED replays the kill timings of a logged run.

const (
	shareCrashChildEnv = "WITAN_SHARE_CRASH_CHILD"
	shareCrashBallots  = 3000 // of each kind
	shareCrashClients  = 32
	shareCrashCall     = 600 // a peer's Ingest call: a part of 500, one of 100
)

// shareCrashHistory is the deterministic history: a session, its roster,
// two open MRs, then one ballot per member on each: the first MR's are
// the peer's, the second's the clients'.
func shareCrashHistory() (head, peer, clients []ht.Tx) {
	b := ht.New(ht.Options{Simulation: true})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, shareCrashBallots), ht.Members(0, 1), b.Create.ID)
	head = []ht.Tx{b.Create, roster}
	var mrs []dag.ID
	for k := range 2 {
		open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
			Members: ht.Members(0, shareCrashBallots), Rule: ht.Majority(house.MinRootNotice), Summary: fmt.Sprintf("MR %d", k)}, roster.ID)
		head = append(head, open)
		mrs = append(mrs, mr)
	}
	for i := range shareCrashBallots {
		peer = append(peer, b.Ballot(ht.Member(i), mrs[0], "approve", dag.ID{}, head[2].ID))
		clients = append(clients, b.Ballot(ht.Member(i), mrs[1], "reject", dag.ID{}, head[3].ID))
	}
	return head, peer, clients
}

func shareCrashChild(dir string) {
	ctx := context.Background()
	fail := func(what string, err any) {
		fmt.Fprintln(os.Stderr, "child", what+":", err)
		os.Exit(2)
	}
	r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(nil, 0)})
	if err != nil {
		fail("open", err)
	}
	head, peer, clients := shareCrashHistory()
	for _, tx := range head {
		if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			fail("head", fmt.Sprint(rc, err))
		}
	}
	log, _ := r.Log(ctx, head[0].Env.Session, 0, 0)
	var mu gosync.Mutex
	w := bufio.NewWriter(os.Stdout)
	say := func(kind string, i int) {
		mu.Lock()
		fmt.Fprintf(w, "%s %d\n", kind, i)
		w.Flush()
		mu.Unlock()
	}
	next := make(chan int)
	var wg gosync.WaitGroup
	for range shareCrashClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rc, err := r.Submit(ctx, clients[i].Bytes, nil)
				if err != nil || rc.Status != "accepted" {
					fail("submit", fmt.Sprint(rc, err))
				}
				say("ack", i)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		var todo []int
		for i := range peer {
			if !slices.Contains(log, peer[i].ID) {
				todo = append(todo, i)
			}
		}
		for len(todo) > 0 {
			call := todo[:min(shareCrashCall, len(todo))]
			todo = todo[len(call):]
			subs := make([]replica.Submission, len(call))
			for k, i := range call {
				subs[k] = replica.Submission{Envelope: peer[i].Bytes}
			}
			out, err := r.Ingest(dag.WithSource(ctx, "peer"), subs)
			if err != nil {
				fail("ingest", err)
			}
			for k, i := range call {
				if out[k].Status != replica.Accepted {
					fail("ingest", out[k])
				}
				say("peer", i)
			}
		}
	}()
	for i := range clients {
		if !slices.Contains(log, clients[i].ID) {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	os.Exit(0)
}

func TestShareCrash(t *testing.T) {
	if dir := os.Getenv(shareCrashChildEnv); dir != "" {
		shareCrashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes; not with -short")
	}
	kills := crashtest.Count(t, "WITAN_SHARE_CRASH_KILLS", 3)
	rng := crashtest.Rand(t, "WITAN_SHARE_CRASH_SEED", 1)
	dir := t.TempDir()
	ctx := context.Background()
	head, peer, clients := shareCrashHistory()
	space := head[0].Env.Session
	acked, peerAcked := map[int]bool{}, map[int]bool{}
	for k := 0; k < kills; k++ {
		cmd, out := crashtest.Start(t, "TestShareCrash", shareCrashChildEnv+"="+dir)
		sc := bufio.NewScanner(out)
		ack := func(line string) bool {
			kind, n, _ := strings.Cut(line, " ")
			i, err := strconv.Atoi(n)
			if err != nil || (kind != "ack" && kind != "peer") {
				t.Fatalf("child said %q", line)
			}
			if kind == "peer" {
				peerAcked[i] = true
				return false
			}
			acked[i] = true
			return true
		}
		// Clients' acknowledgements to see before the kill (the peer's
		// come 600 at a time). The clients' ballots join the peer's
		// parts, one each a part, so that the kill mostly comes while the
		// peer syncs.
		wait := 1 + rng.IntN(100)
		for seen := 0; seen < wait && sc.Scan(); {
			if ack(sc.Text()) {
				seen++
			}
		}
		time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
		crashtest.Kill(cmd)
		// Lines the child wrote before it died were acknowledged too.
		for sc.Scan() {
			ack(sc.Text())
		}
		cmd.Wait()
		if len(acked) == 0 {
			t.Fatalf("kill %d: the child acknowledged no client ballot", k)
		}
		r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0)})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", k, err)
		}
		log, err := r.Log(ctx, space, 0, 0)
		if err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
		for i := range acked {
			if !slices.Contains(log, clients[i].ID) {
				t.Fatalf("kill %d: client ballot %d was acknowledged and is not in the log after the kill (%d entries, %d acknowledged)", k, i, len(log), len(acked))
			}
		}
		for i := range peerAcked {
			if !slices.Contains(log, peer[i].ID) {
				t.Fatalf("kill %d: peer ballot %d was acknowledged and is not in the log after the kill (%d entries)", k, i, len(log))
			}
		}
		t.Logf("kill %d: %d client ballots and %d peer ballots acknowledged, %d entries in the log", k, len(acked), len(peerAcked), len(log))
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
