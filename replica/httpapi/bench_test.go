package httpapi_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// benchBallots opens a session with a roster of n on node and returns n
// signed ballots, one per member.
func benchBallots(b *testing.B, n *apiNode, count int) []ht.Tx {
	ballots, _ := benchBallotsWith(b, n, count, ht.Options{Simulation: true})
	return ballots
}

// benchBallotsWith is benchBallots for a session made with o; it also
// returns the MR.
func benchBallotsWith(b *testing.B, n *apiNode, count int, o ht.Options) ([]ht.Tx, dag.ID) {
	b.Helper()
	bl := ht.New(o)
	var last dag.ID
	ok := func(tx ht.Tx) {
		if rc, err := n.node.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			b.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
		last = tx.ID
	}
	ok(bl.Create)
	ok(bl.GroupCreate(ht.Member(0), "roster", ht.Members(0, count), ht.Members(0, 1), last))
	ok(bl.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	open, mr := bl.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: bl.Genesis, TargetHead: bl.Genesis,
		Members: ht.Members(0, count), Rule: ht.Majority(house.MinRootNotice)}, last)
	ok(open)
	out := make([]ht.Tx, count)
	for i := range out {
		out[i] = bl.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID)
	}
	return out, mr
}

// BenchmarkTallyBy: GET /tally?by=region on an MR with 1,000 voters in
// four regions (the poll is refolded per region on every request).
func BenchmarkTallyBy(b *testing.B) {
	const voters = 1000
	n := newNode(b)
	members := map[string]any{}
	regions := []string{"east", "north", "south", "west"}
	for i := 0; i < voters; i++ {
		members[ht.Member(i).Key().String()] = map[string]string{"region": regions[i%4], "density": "urban"}
	}
	table, err := dag.Marshal(map[string]any{"attributes": map[string][]string{"region": regions, "density": {"urban"}}, "members": members})
	if err != nil {
		b.Fatal(err)
	}
	ballots, mr := benchBallotsWith(b, n, voters, ht.Options{Simulation: true, Districts: table})
	for _, tx := range ballots {
		if _, err := n.node.Submit(context.Background(), tx.Bytes, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var a httpapi.TallyByAnswer
		if err := n.c.Get(context.Background(), "/merge-requests/"+mr.String()+"/tally", url.Values{"by": {"region"}}, &a); err != nil || len(a.Groups) != 4 {
			b.Fatalf("%v, %d groups", err, len(a.Groups))
		}
	}
}

// BenchmarkSubmitHTTP: POST /transactions on loopback, receipt verified,
// in-memory Badger.
func BenchmarkSubmitHTTP(b *testing.B) {
	n := newNode(b)
	ballots := benchBallots(b, n, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := n.c.Submit(context.Background(), ballots[i].Bytes, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogPage: GET /log?limit=100 over a session of 1,000 entries.
func BenchmarkLogPage(b *testing.B) {
	n := newNode(b)
	for _, tx := range benchBallots(b, n, 1000) {
		if _, err := n.node.Submit(context.Background(), tx.Bytes, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var p httpapi.LogPage
		if err := n.c.Get(context.Background(), "/log", url.Values{"limit": {"100"}, "after": {httpapi.EncodeCursor(uint64(i%9) * 100)}}, &p); err != nil || len(p.Entries) != 100 {
			b.Fatalf("%v, %d entries", err, len(p.Entries))
		}
	}
}

// BenchmarkReviewDiff: GET /merge-requests/{id}/diff for an amendment of
// one section of a 2,000-section title, read from the replica's record
// (no derivation per request).
func BenchmarkReviewDiff(b *testing.B) {
	n := newNode(b)
	bl := ht.New(ht.Options{Simulation: true, Sections: 2000})
	s := &session{b: bl, space: bl.Session.String()}
	ok := func(tx ht.Tx) {
		if rc, err := n.node.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			b.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
		s.last = tx.ID
	}
	ok(bl.Create)
	ok(bl.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	ok(bl.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	ok(bl.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	ok(bl.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, bl.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := bl.Append(ht.Member(2), "draft", bl.Genesis, []statute.Op{ht.Replace(bl.Seed, "/us/t1/s1000", "The period is 45 days.")}, s.last)
	ok(tx)
	open, mr := bl.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: bl.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	ok(open)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var a map[string]any
		if err := n.c.Get(context.Background(), "/merge-requests/"+mr.String()+"/diff", nil, &a); err != nil || a["diff"] == nil {
			b.Fatalf("%v %v", err, a)
		}
	}
}
