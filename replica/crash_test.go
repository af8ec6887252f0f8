package replica_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag/crashtest"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// The checkpoint crash test re-executes the test binary as a child that
// submits entries to a replica on disk and signs a checkpoint after every
// few, printing one acknowledgement line per checkpoint Checkpoint
// returned. The parent SIGKILLs the child at a random moment, reopens the
// replica and checks that every acknowledged checkpoint is there, with its
// signature, that all stored checkpoints verify and match the log (Open
// checks this), and that the entries they cover are final_advisory. Then
// it starts a new child, which goes on from the log the store holds.
//
// WITAN_REPLICA_CRASH_KILLS sets the number of kills (default 3);
// WITAN_REPLICA_CRASH_SEED replays the kill timings of a logged run.

const (
	crashChildEnv  = "WITAN_REPLICA_CRASH_CHILD"
	crashEntries   = 3000 // more than a child gets through before its kill
	crashCPEvery   = 3
	crashAckPrefix = "ack "
)

// crashHistory is the deterministic history the children submit: a
// session, its roster, then a chain of key registrations.
func crashHistory() (*ht.Builder, []ht.Tx) {
	b := ht.New(ht.Options{})
	txs := []ht.Tx{b.Create, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)}
	for i := 0; len(txs) < crashEntries; i++ {
		txs = append(txs, b.KeyRegister(ht.Member(10+i), txs[len(txs)-1].ID))
	}
	return b, txs
}

func crashChild(dir string) {
	ctx := context.Background()
	r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(nil, 0)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	b, txs := crashHistory()
	space := b.Session
	log, _ := r.Log(ctx, space, 0, 0)
	w := bufio.NewWriter(os.Stdout)
	for i := len(log); i < len(txs); i++ {
		outs, err := r.Ingest(ctx, []replica.Submission{{Envelope: txs[i].Bytes, Attachments: txs[i].Attach}})
		if err != nil || outs[0].Status != replica.Accepted {
			fmt.Fprintln(os.Stderr, "child ingest:", outs, err)
			os.Exit(2)
		}
		if (i+1)%crashCPEvery == 0 {
			c, err := r.Checkpoint(ctx, space)
			if err != nil {
				fmt.Fprintln(os.Stderr, "child checkpoint:", err)
				os.Exit(2)
			}
			fmt.Fprintf(w, "%s%d %s %s\n", crashAckPrefix, c.Size, c.Root, base64.RawURLEncoding.EncodeToString(c.Sig))
			w.Flush()
		}
	}
	os.Exit(0)
}

func TestCheckpointCrash(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	kills := crashtest.Count(t, "WITAN_REPLICA_CRASH_KILLS", 3)
	rng := crashtest.Rand(t, "WITAN_REPLICA_CRASH_SEED", 1)
	dir := t.TempDir()
	ctx := context.Background()
	b, txs := crashHistory()
	space := b.Session
	var acked []string // "size root sig" of every acknowledged checkpoint
	for k := 0; k < kills; k++ {
		cmd, out := crashtest.Start(t, "TestCheckpointCrash", crashChildEnv+"="+dir)
		sc := bufio.NewScanner(out)
		wait := 1 + rng.IntN(6) // acknowledgements to see before the kill
		for seen := 0; seen < wait && sc.Scan(); seen++ {
			acked = append(acked, strings.TrimPrefix(sc.Text(), crashAckPrefix))
		}
		time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
		crashtest.Kill(cmd)
		// Lines the child wrote before it died were acknowledged too.
		for sc.Scan() {
			acked = append(acked, strings.TrimPrefix(sc.Text(), crashAckPrefix))
		}
		cmd.Wait()
		if len(acked) == 0 {
			t.Fatalf("kill %d: the child acknowledged nothing", k)
		}

		r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0)})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", k, err)
		}
		cps := r.Checkpoints(space)
		var got []string
		for _, c := range cps {
			if err := c.Verify(); err != nil {
				t.Fatalf("kill %d: %v", k, err)
			}
			got = append(got, fmt.Sprintf("%d %s %s", c.Size, c.Root, base64.RawURLEncoding.EncodeToString(c.Sig)))
		}
		// Every acknowledged checkpoint is there, in order; at most one
		// more (written, then killed before its line) follows.
		if len(got) < len(acked) || len(got) > len(acked)+1 {
			t.Fatalf("kill %d: %d checkpoints stored, %d acknowledged", k, len(got), len(acked))
		}
		for i := range acked {
			if got[i] != acked[i] {
				t.Fatalf("kill %d: checkpoint %d is %s, acknowledged %s", k, i, got[i], acked[i])
			}
		}
		acked = got
		last := cps[len(cps)-1].Size
		for _, i := range []uint64{0, last / 2, last - 1} {
			if f, err := r.Finality(ctx, space, txs[i].ID); err != nil || f != replica.FinalAdvisory {
				t.Fatalf("kill %d: entry %d under checkpoint size %d: %s %v", k, i, last, f, err)
			}
		}
		log, _ := r.Log(ctx, space, 0, 0)
		if uint64(len(log)) > last {
			if f, _ := r.Finality(ctx, space, log[len(log)-1]); f != replica.Provisional {
				t.Fatalf("kill %d: an entry after every checkpoint: %s", k, f)
			}
		}
		t.Logf("kill %d: %d checkpoints, log %d", k, len(cps), len(log))
		r.Close()
	}
}
