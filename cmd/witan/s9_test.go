package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// TestS9PartitionHeal is S9 for an eventual node (§9, §10), black box:
// two witan up processes on loopback, never connected, each given the
// same session over HTTP; during the partition, members vote on A and
// on B (members 0–2 on both sides, differently) and each side's
// determination is valid for what it saw. When B is told to pull from A
// (POST /peers, libp2p on loopback) the two converge on the same heads
// and state, the two determinations contradict each other, so the MR is
// flagged contradictory_determination and nothing executes (§9); a
// determination that lists every ballot of both settles it
// (docs/deviations.md, OQ-3).
//
// By hand (N = 10, 1/2 gt, basis electorate, on_threshold): A sees
// approvals by 0–5: 6·2 > 10, approved. B sees rejections by 0–2 and
// 6–9: R = 7, (10−7)·2 = 6 > 10 fails, rejected. Together members 0–2
// equivocate: A = 3, R = 4, V = 3, (10−4−3)·2 = 6 > 10 fails: rejected.
func TestS9PartitionHeal(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	b := ht.New(ht.Options{Label: "S9 partition"})
	space := b.Session.String()
	a := startUp(t, bin, t.TempDir(), "-session", space)
	bn := startUp(t, bin, t.TempDir(), "-session", space)
	ca := &httpapi.Client{BaseURL: a.info.HTTP, Session: space}
	cb := &httpapi.Client{BaseURL: bn.info.HTTP, Session: space}
	submit := func(cs []*httpapi.Client, tx ht.Tx) dag.ID {
		t.Helper()
		for _, c := range cs {
			rc, err := c.Submit(ctx, tx.Bytes, tx.Attach)
			if err != nil || rc.Status != "accepted" {
				t.Fatalf("%s on %s: %v", tx.Env.Type, c.BaseURL, err)
			}
		}
		return tx.ID
	}
	both := []*httpapi.Client{ca, cb}
	last := submit(both, b.Create)
	last = submit(both, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), last))
	last = submit(both, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	last = submit(both, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	last = submit(both, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, last)
	last = submit(both, tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, last)
	fork := submit(both, open)

	// The partition.
	var onA, onB []dag.ID
	last = fork
	for i := 0; i < 6; i++ {
		last = submit([]*httpapi.Client{ca}, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last))
		onA = append(onA, last)
	}
	detA := submit([]*httpapi.Client{ca}, b.Determine(ht.Member(3), mr, onA, "approved", last))
	last = fork
	for _, i := range []int{0, 1, 2, 6, 7, 8, 9} {
		last = submit([]*httpapi.Client{cb}, b.Ballot(ht.Member(i), mr, "reject", dag.ID{}, last))
		onB = append(onB, last)
	}
	detB := submit([]*httpapi.Client{cb}, b.Determine(ht.Member(7), mr, onB, "rejected", last))

	// Heal: B pulls from A over libp2p; A learns B's heads by gossip.
	var ans httpapi.ConnectAnswer
	if err := cb.Do(ctx, "POST", "/peers", nil, httpapi.ConnectRequest{Addr: a.info.P2P[0], Spaces: []string{space}}, &ans); err != nil {
		t.Fatalf("POST /peers: %v", err)
	}
	heads := func(c *httpapi.Client) []dag.ID {
		var h httpapi.HeadsAnswer
		if err := c.Get(ctx, "/heads", nil, &h); err != nil {
			return nil
		}
		return h.Heads
	}
	eventually(t, "A and B converge", 60*time.Second, func() (bool, string) {
		ha, hb := heads(ca), heads(cb)
		return slices.Equal(ha, hb) && slices.Contains(ha, detA) && slices.Contains(ha, detB), "A " + idsString(ha) + " B " + idsString(hb)
	})
	var sa, sb httpapi.SessionAnswer
	if err := ca.Get(ctx, "/sessions/"+space, nil, &sa); err != nil {
		t.Fatal(err)
	}
	if err := cb.Get(ctx, "/sessions/"+space, nil, &sb); err != nil {
		t.Fatal(err)
	}
	if sa.StateHash != sb.StateHash {
		t.Fatalf("state hashes differ: %s %s", sa.StateHash, sb.StateHash)
	}
	mrState := func(c *httpapi.Client) map[string]any {
		var m map[string]any
		if err := c.Get(ctx, "/merge-requests/"+mr.String(), nil, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range both {
		m := mrState(c)
		flags, _ := m["flags"].([]any)
		if m["status"] != "open" || !slices.Contains(flags, any(house.FlagContradictory)) || m["merge"] != nil {
			t.Fatalf("%s after the heal: status %v flags %v merge %v", c.BaseURL, m["status"], m["flags"], m["merge"])
		}
	}

	// Settle it: a determination counting every ballot of both sides.
	all := append(slices.Clone(onA), onB...)
	submit([]*httpapi.Client{ca}, b.Determine(ht.Member(4), mr, all, "rejected", detA, detB))
	eventually(t, "the settlement reaches B", 60*time.Second, func() (bool, string) {
		m := mrState(cb)
		return m["status"] == "rejected", "B status " + m["status"].(string)
	})
	if m := mrState(ca); m["status"] != "rejected" {
		t.Fatalf("A: %v", m["status"])
	}
	var ta httpapi.TallyAnswer
	if err := ca.Get(ctx, "/merge-requests/"+mr.String()+"/tally", nil, &ta); err != nil {
		t.Fatal(err)
	}
	if tl := ta.Result.Tally; tl.Approve != 3 || tl.Reject != 4 || tl.Void != 3 {
		t.Fatalf("tally after the heal %+v, want A=3 R=4 V=3", tl)
	}
	a.stop(t)
	bn.stop(t)
}
