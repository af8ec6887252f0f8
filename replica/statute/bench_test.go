package statute

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// bigTree builds a uslm-1 tree of about n nodes: titles of sections of
// subsections of paragraphs, with numbers, cross-references and
// definitions sprinkled through the text.
func bigTree(n int) *Tree {
	root := NodeSpec{NID: "/us", Kind: "root", Children: []NodeSpec{}}
	count := 1
	for ti := 0; count < n; ti++ {
		title := NodeSpec{NID: fmt.Sprintf("/us/t%d", ti), Kind: "title", Heading: fmt.Sprintf("Title %d", ti), Children: []NodeSpec{}}
		count++
		for si := 0; si < 50 && count < n; si++ {
			sec := NodeSpec{NID: fmt.Sprintf("%s/s%d", title.NID, si), Kind: "section", Heading: fmt.Sprintf("Section %d", si),
				Text: fmt.Sprintf("[[def:term%d]] A term%d is a thing of %d days.", si, si, si+30), Children: []NodeSpec{}}
			count++
			for ui := 0; ui < 10 && count < n; ui++ {
				sub := NodeSpec{NID: fmt.Sprintf("%s/%d", sec.NID, ui), Kind: "subsection",
					Text: fmt.Sprintf("Except as provided in [[ref:%s/%d]], the limit is $%d,000.", sec.NID, (ui+1)%10, ui+1), Children: []NodeSpec{}}
				count++
				for pi := 0; pi < 9 && count < n; pi++ {
					sub.Children = append(sub.Children, NodeSpec{NID: fmt.Sprintf("%s/%d", sub.NID, pi), Kind: "paragraph",
						Text: fmt.Sprintf("Paragraph %d requires a report within %d days.", pi, 10*pi+5)})
					count++
				}
				sec.Children = append(sec.Children, sub)
			}
			title.Children = append(title.Children, sec)
		}
		root.Children = append(root.Children, title)
	}
	return MustTree(&root)
}

type bigMR struct {
	target *Tree
	patch  *Patch
}

var (
	bigOnce sync.Once
	bigMRv  bigMR
)

// bigMergeRequest: an MR that touches 5,000 nodes of a ~100,000-node tree
// (4,900 text edits, 50 inserts, 50 deletes), derived as a merge.
func bigMergeRequest(b *testing.B) bigMR {
	bigOnce.Do(func() {
		base := bigTree(100_000)
		order := base.Order()
		rng := rand.New(rand.NewPCG(1, 2))
		bl := &builder{cur: base.Clone()}
		picked := map[string]bool{}
		for len(picked) < 4900 {
			nid := order[1+rng.IntN(len(order)-1)]
			if picked[nid] {
				continue
			}
			picked[nid] = true
			n := bl.cur.nodes[nid]
			if err := bl.replace(nid, &NodeSpec{NID: nid, Kind: n.kind, Heading: n.heading, Text: n.text + " Amended: 45 days."}); err != nil {
				panic(err)
			}
		}
		for i := 0; i < 50; i++ {
			parent := fmt.Sprintf("/us/t%d/s%d", i%20, i%50)
			if err := bl.insert(parent, "", &NodeSpec{NID: fmt.Sprintf("%s/new%d", parent, i), Kind: "subsection", Text: "[[sunset:90]] New $5 duty."}); err != nil {
				panic(err)
			}
		}
		for deleted := 0; deleted < 50; {
			nid := order[1+rng.IntN(len(order)-1)]
			n, ok := bl.cur.nodes[nid]
			if !ok || picked[nid] || n.kind != "paragraph" {
				continue
			}
			if err := bl.delete(nid); err != nil {
				panic(err)
			}
			deleted++
		}
		p, err := Derive(base, bl.cur, base, nil)
		if err != nil {
			panic(err)
		}
		bigMRv = bigMR{target: base, patch: p}
	})
	return bigMRv
}

func benchEnv() Env {
	p, err := LoadProfile("uslm-1")
	if err != nil {
		panic(err)
	}
	return Env{MR: dag.Sum([]byte("mr")), Profile: p, Jurisdictions: []string{"CA"}, Fiscal: true}
}

// BenchmarkFacts: /facts for an MR touching 5,000 nodes of a 100,000-node
// tree (goal <= 100 ms). Each iteration starts from a fresh Review, so the
// structural diff is included.
func BenchmarkFacts(b *testing.B) {
	m := bigMergeRequest(b)
	env := benchEnv()
	b.ResetTimer()
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		f, err := Facts(ReviewOf(m.target, m.patch), env, FactInputs{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.patch.Ops)), "ops")
	b.ReportMetric(float64(m.target.Len()), "nodes")
}

// BenchmarkChecks: /checks for the same MR (goal <= 100 ms). The
// whole-tree checks (structure, references, definitions, cycles) run over
// all ~100,000 nodes of the merged target.
func BenchmarkChecks(b *testing.B) {
	m := bigMergeRequest(b)
	env := benchEnv()
	b.ResetTimer()
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		c := RunChecks(ReviewOf(m.target, m.patch), env)
		if len(c.Checks) != 7 {
			b.Fatal("checks missing")
		}
	}
}

// BenchmarkDerive: deriving the patch of that MR at open time (for
// information: merge-base snapshots are given).
func BenchmarkDerive(b *testing.B) {
	m := bigMergeRequest(b)
	src := m.patch.Result
	b.ResetTimer()
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		if _, err := Derive(m.target, src, m.target, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeChange: executing the approval: re-applying the 5,000-node
// patch to the head (pre checks included) and building the merge change.
func BenchmarkMergeChange(b *testing.B) {
	m := bigMergeRequest(b)
	b.ResetTimer()
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		c, _, err := MergeChange(dag.Sum([]byte("mr")), dag.Sum([]byte("t")), dag.Sum([]byte("s")), m.target, m.patch.Ops)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.ID(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLawAt: the law in force on a date across 300 merges into a
// 10,000-node root, some with future effective dates, sunsets and
// per-node effective dates.
func BenchmarkLawAt(b *testing.B) {
	seed := bigTree(10_000)
	law := NewLaw(seed, []string{"CA", "NY"})
	snaps := snapMap{}
	head := seed
	order := seed.Order()
	rng := rand.New(rand.NewPCG(3, 4))
	start := MustDate("2027-01-01")
	for i := 0; i < 300; i++ {
		bl := &builder{cur: head.Clone()}
		for k := 0; k < 5; k++ {
			nid := order[1+rng.IntN(len(order)-1)]
			n := bl.cur.nodes[nid]
			txt := fmt.Sprintf("Amended by merge %d.", i)
			switch k {
			case 0:
				txt += " [[sunset:90]]"
			case 1:
				txt += fmt.Sprintf(" [[effective:%s]]", start.AddDays(i+30))
			case 2:
				txt += " [[applies:CA]]"
			}
			if err := bl.replace(nid, &NodeSpec{NID: nid, Kind: n.kind, Heading: n.heading, Text: txt}); err != nil {
				b.Fatal(err)
			}
		}
		eff := start.AddDays(i)
		if i%50 == 49 {
			eff = eff.AddDays(20) // held back for a while
		}
		change := dag.Sum([]byte(fmt.Sprint("change", i)))
		snaps[change] = bl.cur
		if err := law.Add(Enactment{MR: dag.Sum([]byte(fmt.Sprint("mr", i))), Change: change, Effective: eff, Before: head, After: bl.cur}); err != nil {
			b.Fatal(err)
		}
		head = bl.cur
	}
	b.ResetTimer()
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	i := 0
	for b.Loop() {
		d := start.AddDays(i % 400)
		jur := ""
		if i%2 == 1 {
			jur = "NY"
		}
		if _, err := law.At(d, jur, nil, snaps); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
