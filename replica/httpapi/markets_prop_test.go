package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/sync"
)

// naiveBallot is one generated ballot, kept for the naive recomputation.
type naiveBallot struct {
	pos        int // index of its tx in the chain
	member, mr int
	choice     string
	supersedes int // pos of the ballot it supersedes, or -1
}

// naiveStats recomputes the registry's metrics from the raw ballots, MR
// opens and determination among the first cut+1 txs of the chain, with
// nothing of witan: per member and MR, the ballots in the cut; two not
// linked by supersedes void the member; else the last of the chain
// counts.
type naiveMR struct {
	id            dag.ID
	opener        int
	a, r, b, n    uint64
	voters        []int
	merged        bool
	determinedPos int // -1: none
	openPos       int
}

func naive(mrs []naiveMR, ballots []naiveBallot, cut int, members int) []naiveMR {
	out := make([]naiveMR, 0, len(mrs))
	for j, m := range mrs {
		if m.openPos > cut {
			continue
		}
		x := naiveMR{id: m.id, opener: m.opener, n: uint64(members), openPos: m.openPos, determinedPos: -1}
		for k := 0; k < members; k++ {
			var mine []naiveBallot
			for _, b := range ballots {
				if b.mr == j && b.member == k && b.pos <= cut {
					mine = append(mine, b)
				}
			}
			if len(mine) == 0 {
				continue
			}
			eff := mine[0]
			if len(mine) == 2 {
				if mine[1].supersedes != mine[0].pos {
					continue // equivocation: void
				}
				eff = mine[1]
			}
			switch eff.choice {
			case "approve":
				x.a++
			case "reject":
				x.r++
			case "abstain":
				x.b++
			}
			x.voters = append(x.voters, k)
		}
		if m.determinedPos >= 0 && m.determinedPos <= cut {
			x.merged, x.determinedPos = true, m.determinedPos
		}
		out = append(out, x)
	}
	return out
}

func frac(a, b uint64) string { return fmt.Sprintf("%d/%d", a, b) }

// openProp opens a node with its listener; the caller closes it.
func openProp(t *rapid.T) (*apiNode, func()) {
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	l, err := node.Open(context.Background(), node.Options{InMemory: true, NodeKey: key, Clock: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: l, LoopbackOperator: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	return &apiNode{node: l, srv: srv, c: &httpapi.Client{BaseURL: srv.URL}, clk: clk}, func() { srv.Close(); l.Close() }
}

// TestStatsNaiveRapid: for random ballots (plain, superseded,
// equivocating, none) on random MRs, one of them merged by a
// determination, delivered to a fresh node in a random order, GET /stats
// for every metric and scope, as of the node's checkpoint and as of a
// random entry (a causal cut), equals the naive recomputation above, and
// rankings built from the naive values hold while one with two items of
// different values swapped fails.
func TestStatsNaiveRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		members := rapid.IntRange(2, 5).Draw(rt, "members")
		nMRs := rapid.IntRange(1, 3).Draw(rt, "mrs")
		b := ht.New(ht.Options{})
		var txs []ht.Tx
		last := dag.ID{}
		add := func(tx ht.Tx) { txs = append(txs, tx); last = tx.ID }
		add(b.Create)
		add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, members), ht.Members(0, 1), last))
		add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
		add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(0, 2), ht.Members(0, 2), last))
		add(b.BranchCreate(ht.Member(0), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
		tx, draftHead := b.Append(ht.Member(1), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, last)
		add(tx)
		add(b.BranchCreate(ht.Member(0), "feature", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
		tx, featHead := b.Append(ht.Member(0), "feature", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s2", "The period is 60 days.")}, last)
		add(tx)
		// MR 0: feature into draft under always_allow (it merges on its
		// determination); the others: draft into root, never determined.
		var mrs []naiveMR
		for j := 0; j < nMRs; j++ {
			opener := rapid.IntRange(0, members-1).Draw(rt, "opener")
			m := ht.MR{Source: "draft", SourceHead: draftHead, TargetHead: b.Genesis, Members: ht.Members(0, members),
				Rule: ht.Majority(house.MinRootNotice), Summary: strconv.Itoa(j)}
			if j == 0 {
				m = ht.MR{Source: "feature", SourceHead: featHead, Target: "draft", TargetHead: draftHead, Members: ht.Members(0, members), Rule: ht.AlwaysAllow()}
			}
			open, id := b.Open(ht.Member(opener), m, last)
			add(open)
			mrs = append(mrs, naiveMR{id: id, opener: opener, openPos: len(txs) - 1, determinedPos: -1})
		}
		var ballots []naiveBallot
		var mr0Ballots []dag.ID
		choices := []string{"approve", "reject", "abstain"}
		for j := range mrs {
			for k := 0; k < members; k++ {
				kind := rapid.IntRange(0, 3).Draw(rt, "kind") // none, one, superseded, equivocation
				if kind == 0 {
					continue
				}
				c1 := choices[rapid.IntRange(0, 2).Draw(rt, "c1")]
				b1 := b.Ballot(ht.Member(k), mrs[j].id, c1, dag.ID{}, last)
				add(b1)
				ballots = append(ballots, naiveBallot{pos: len(txs) - 1, member: k, mr: j, choice: c1, supersedes: -1})
				ids := []dag.ID{b1.ID}
				if kind >= 2 {
					c2 := choices[rapid.IntRange(0, 2).Draw(rt, "c2")]
					sup, supPos := dag.ID{}, -1
					if kind == 2 {
						sup, supPos = b1.ID, len(txs)-1
					}
					b2 := b.Ballot(ht.Member(k), mrs[j].id, c2, sup, last)
					if b2.ID == b1.ID {
						continue
					}
					add(b2)
					ballots = append(ballots, naiveBallot{pos: len(txs) - 1, member: k, mr: j, choice: c2, supersedes: supPos})
					ids = append(ids, b2.ID)
				}
				if j == 0 {
					mr0Ballots = append(mr0Ballots, ids...)
				}
			}
		}
		add(b.Determine(ht.Member(0), mrs[0].id, mr0Ballots, "approved", last))
		mrs[0].determinedPos = len(txs) - 1

		// Delivery in a random order: the node holds what waits.
		n, done := openProp(rt)
		defer done()
		ctx := context.Background()
		idx := make([]int, len(txs))
		for i := range idx {
			idx[i] = i
		}
		var items []sync.Item
		for _, i := range rapid.Permutation(idx).Draw(rt, "order") {
			tx := txs[i]
			it := sync.Item{Data: tx.Bytes}
			for _, a := range tx.Attach {
				it.Objects = append(it.Objects, dag.NewObject(a))
			}
			items = append(items, it)
		}
		space := b.Session.String()
		if _, err := n.node.Ingest(ctx, space, items); err != nil {
			rt.Fatal(err)
		}
		if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(space)); err != nil {
			rt.Fatal(err)
		}
		firstMR := mrs[0].openPos
		cut := rapid.IntRange(firstMR, len(txs)-1).Draw(rt, "cut")
		for _, c := range []struct {
			asOf string
			upto int
		}{{"", len(txs) - 1}, {txs[cut].ID.String(), cut}} {
			want := naive(mrs, ballots, c.upto, members)
			get := func(metric, scope string) any {
				q := url.Values{"metric": {metric}, "scope": {scope}, "session": {space}}
				if c.asOf != "" {
					q.Set("as_of", c.asOf)
				}
				var m map[string]any
				if err := n.c.Get(ctx, "/stats", q, &m); err != nil {
					rt.Fatalf("/stats %v: %v", q, err)
				}
				return m["value"]
			}
			var cast, opened, merged uint64
			for _, m := range want {
				id := m.id.String()
				for _, x := range []struct {
					metric string
					want   any
				}{{"approve_share", frac(m.a, m.a+m.r)}, {"approve_of_electorate", frac(m.a, m.n)},
					{"turnout", frac(m.a+m.r+m.b, m.n)}, {"ballots_cast", float64(m.a + m.r + m.b)}} {
					if got := get(x.metric, id); got != x.want {
						rt.Fatalf("as of %q: %s of MR %d = %v, naive %v", c.asOf, x.metric, slices.IndexFunc(mrs, func(y naiveMR) bool { return y.id == m.id }), got, x.want)
					}
				}
				cast += m.a + m.r + m.b
				opened++
				if m.merged {
					merged++
				}
			}
			for metric, w := range map[string]uint64{"ballots_cast": cast, "mrs_opened": opened, "mrs_merged": merged} {
				if got := get(metric, "session"); got != float64(w) {
					rt.Fatalf("as of %q: session %s = %v, naive %d", c.asOf, metric, got, w)
				}
			}
			if got := get("mrs_opened", "group:drafters"); got != float64(opened) {
				rt.Fatalf("as of %q: group mrs_opened = %v, naive %d", c.asOf, got, opened)
			}
			for k := 0; k < members; k++ {
				var bc, op, mg uint64
				for _, m := range want {
					if slices.Contains(m.voters, k) {
						bc++
					}
					if m.opener == k {
						op++
						if m.merged {
							mg++
						}
					}
				}
				key := ht.Member(k).Key().String()
				for metric, w := range map[string]uint64{"ballots_cast": bc, "mrs_opened": op, "mrs_merged": mg} {
					if got := get(metric, key); got != float64(w) {
						rt.Fatalf("as of %q: member %d %s = %v, naive %d", c.asOf, k, metric, got, w)
					}
				}
			}
		}

		// Rankings as of the whole chain's last entry, from the naive
		// values: sorted desc by approve_share, ties by id.
		want := naive(mrs, ballots, len(txs)-1, members)
		type item struct {
			id  string
			num uint64
			den uint64
		}
		var items2 []item
		for _, m := range want {
			items2 = append(items2, item{m.id.String(), m.a, m.a + m.r})
		}
		cmp := func(x, y item) int { // desc; 0/0 lowest; ties by id
			xv, yv := x.den != 0, y.den != 0
			if xv != yv {
				if xv {
					return -1
				}
				return 1
			}
			if xv && x.num*y.den != y.num*x.den {
				if x.num*y.den > y.num*x.den {
					return -1
				}
				return 1
			}
			if x.id < y.id {
				return -1
			}
			return 1
		}
		slices.SortFunc(items2, cmp)
		body := func(list []item) map[string]any {
			var its []any
			for _, x := range list {
				its = append(its, map[string]any{"id": x.id, "value": frac(x.num, x.den)})
			}
			return ht.OpinionBody("member", "session", space, map[string]any{"ranking": map[string]any{"metric": "approve_share", "scope_type": "mr",
				"filter": map[string]any{"session": space}, "as_of": last, "order": "desc", "items": its}})
		}
		good := b.Opinion(ht.Member(0), body(items2), last)
		var sub []sync.Item
		sub = append(sub, sync.Item{Data: good.Bytes})
		check := []struct {
			tx   ht.Tx
			want string
		}{{good, "holds"}}
		if len(items2) >= 2 && (items2[0].num*items2[1].den != items2[1].num*items2[0].den || (items2[0].den == 0) != (items2[1].den == 0)) {
			sw := slices.Clone(items2)
			sw[0], sw[1] = sw[1], sw[0]
			bad := b.Opinion(ht.Member(0), body(sw), last)
			sub = append(sub, sync.Item{Data: bad.Bytes})
			check = append(check, struct {
				tx   ht.Tx
				want string
			}{bad, "fails"})
		}
		if _, err := n.node.Ingest(ctx, space, sub); err != nil {
			rt.Fatal(err)
		}
		for _, c := range check {
			var ev map[string]any
			if err := n.c.Get(ctx, "/opinions/"+c.tx.ID.String()+"/evaluation", url.Values{"session": {space}}, &ev); err != nil {
				rt.Fatal(err)
			}
			got := ""
			for _, r := range ev["results"].([]any) {
				if m := r.(map[string]any); m["kind"] == "ranking" {
					got = m["result"].(string)
				}
			}
			if got != c.want {
				rt.Fatalf("ranking %v: %s, want %s", items2, got, c.want)
			}
		}
	})
}
