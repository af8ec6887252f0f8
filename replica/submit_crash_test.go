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

// The group-commit crash test: a child process submits ballots to a
// replica on disk from many goroutines at once (so that they share
// commits, replica/groupcommit.go) and prints "ack <i>" for each ballot
// whose receipt said accepted. The parent SIGKILLs it at a random moment,
// reopens the replica and checks that every acknowledged ballot is in the
// log: a receipt is only given for what a commit wrote. (A process kill
// leaves the OS's page cache, so this cannot tell a commit that was
// fsynced from one that was not; the store's SyncWrites does that.) Then
// a new child goes on with the ballots the log does not hold.
//
// WITAN_SUBMIT_CRASH_KILLS sets the number of kills (default 3);
// WITAN_SUBMIT_CRASH_SEED replays the kill timings of a logged run.

const (
	submitCrashChildEnv = "WITAN_SUBMIT_CRASH_CHILD"
	submitCrashBallots  = 3000 // more than a child gets through before its kill
	submitCrashClients  = 32
)

// submitCrashHistory is the deterministic history: a session, its roster,
// an open MR, then one ballot per member on it.
func submitCrashHistory() (head, ballots []ht.Tx) {
	b := ht.New(ht.Options{Simulation: true})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, submitCrashBallots), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, submitCrashBallots), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	for i := 0; i < submitCrashBallots; i++ {
		ballots = append(ballots, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID))
	}
	return []ht.Tx{b.Create, roster, open}, ballots
}

func submitCrashChild(dir string) {
	ctx := context.Background()
	r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(nil, 0)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	head, ballots := submitCrashHistory()
	for _, tx := range head {
		if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			fmt.Fprintln(os.Stderr, "child head:", rc, err)
			os.Exit(2)
		}
	}
	var mu gosync.Mutex
	w := bufio.NewWriter(os.Stdout)
	next := make(chan int)
	var wg gosync.WaitGroup
	for c := 0; c < submitCrashClients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rc, err := r.Submit(ctx, ballots[i].Bytes, nil)
				if err != nil || rc.Status != "accepted" {
					fmt.Fprintln(os.Stderr, "child submit:", rc, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(w, "ack %d\n", i)
				w.Flush()
				mu.Unlock()
			}
		}()
	}
	log, _ := r.Log(ctx, head[0].Env.Session, 0, 0)
	for i := range ballots {
		if !slices.Contains(log, ballots[i].ID) {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	os.Exit(0)
}

func TestSubmitGroupCrash(t *testing.T) {
	if dir := os.Getenv(submitCrashChildEnv); dir != "" {
		submitCrashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes; not with -short")
	}
	kills := crashtest.Count(t, "WITAN_SUBMIT_CRASH_KILLS", 3)
	rng := crashtest.Rand(t, "WITAN_SUBMIT_CRASH_SEED", 1)
	dir := t.TempDir()
	ctx := context.Background()
	head, ballots := submitCrashHistory()
	space := head[0].Env.Session
	acked := map[int]bool{}
	for k := 0; k < kills; k++ {
		cmd, out := crashtest.Start(t, "TestSubmitGroupCrash", submitCrashChildEnv+"="+dir)
		sc := bufio.NewScanner(out)
		ack := func(line string) {
			i, err := strconv.Atoi(strings.TrimPrefix(line, "ack "))
			if err != nil {
				t.Fatalf("child said %q", line)
			}
			acked[i] = true
		}
		wait := 1 + rng.IntN(200) // acknowledgements to see before the kill
		for seen := 0; seen < wait && sc.Scan(); seen++ {
			ack(sc.Text())
		}
		time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
		crashtest.Kill(cmd)
		// Lines the child wrote before it died were acknowledged too.
		for sc.Scan() {
			ack(sc.Text())
		}
		cmd.Wait()
		if len(acked) == 0 {
			t.Fatalf("kill %d: the child acknowledged nothing", k)
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
			if !slices.Contains(log, ballots[i].ID) {
				t.Fatalf("kill %d: ballot %d was acknowledged and is not in the log after the kill (%d entries, %d acknowledged)", k, i, len(log), len(acked))
			}
		}
		t.Logf("kill %d: %d ballots acknowledged, %d entries in the log", k, len(acked), len(log))
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
