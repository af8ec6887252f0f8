package rules_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// Contests checked against a deliberately naive reference, and the
// properties of §7's formal reference (D27) restated for contests:
// determinism, integer-only counts, monotonicity, rejection soundness and
// completeness, and equivocation never increasing approvals.

// naiveContest decides a contest the slow, obvious way: positions are
// looked up by scanning each ranking, supersedes chains are found by
// trying every order of a member's rankings, a pair is locked when some
// permutation of the live options agrees with every locked pair and it,
// and the winner's rule is applied by casting synthetic ballots through
// rules.Evaluate.
type naiveContestOutcome struct {
	IfClosed  rules.Outcome
	Winner    string
	Rounds    []string
	Decisions []string
	Above     []string
	Pairwise  map[string]uint64
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for at := 0; at <= len(p); at++ {
			q := append(append(append([]int{}, p[:at]...), n-1), p[at:]...)
			out = append(out, q)
		}
	}
	return out
}

func naiveContest(t *rapid.T, ref rules.Ref, n int, options []dag.ID, rankings []rules.Ranking) naiveContestOutcome {
	names := []string{}
	for _, o := range options {
		names = append(names, o.String())
	}
	slices.Sort(names)
	names = append(names, rules.StatusQuo)
	k := len(names)
	sq := k - 1
	nameOf := func(o dag.ID) string {
		if !o.Valid() {
			return rules.StatusQuo
		}
		return o.String()
	}
	// Valid rankings by member.
	byMember := make([][]rules.Ranking, n)
	seen := map[dag.ID]bool{}
	for _, r := range rankings {
		m := -1
		for i := 0; i < n; i++ {
			if member(i) == r.Author {
				m = i
			}
		}
		if m < 0 || r.Contest != contestID || seen[r.Tx] {
			continue
		}
		ok := true
		for _, o := range r.Ranking {
			if !slices.Contains(names, nameOf(o)) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		seen[r.Tx] = true
		byMember[m] = append(byMember[m], r)
	}
	var effective []rules.Ranking
	var voidMembers []int
	for m, rs := range byMember {
		if len(rs) == 0 {
			continue
		}
		// Walk from each ranking that supersedes nothing in the set,
		// always to the one ranking that supersedes the current one; a
		// chain visits them all.
		found := false
		for _, start := range rs {
			inSet := false
			for _, x := range rs {
				inSet = inSet || x.Tx == start.Supersedes
			}
			if inSet {
				continue
			}
			cur, visited, ok := start, 1, true
			for ok {
				var next []rules.Ranking
				for _, x := range rs {
					if x.Supersedes == cur.Tx && x.Tx != cur.Tx {
						next = append(next, x)
					}
				}
				switch len(next) {
				case 0:
					ok = false
				case 1:
					cur, visited = next[0], visited+1
				default:
					ok, visited = false, -1
				}
			}
			if visited == len(rs) {
				effective = append(effective, cur)
				found = true
			}
			break
		}
		if !found {
			voidMembers = append(voidMembers, m)
		}
	}
	place := func(r rules.Ranking, name string) int {
		for i, o := range r.Ranking {
			if nameOf(o) == name {
				return i
			}
		}
		return len(r.Ranking)
	}
	d := func(x, y int) uint64 {
		var c uint64
		for _, r := range effective {
			if place(r, names[x]) < place(r, names[y]) {
				c++
			}
		}
		return c
	}
	out := naiveContestOutcome{Pairwise: map[string]uint64{}}
	for x := 0; x < k; x++ {
		for y := 0; y < k; y++ {
			if x != y {
				out.Pairwise[names[x]+">"+names[y]] = d(x, y)
			}
		}
	}
	live := []int{}
	for i := 0; i < k; i++ {
		live = append(live, i)
	}
	decisions := make([]string, k-1)
	for i := range decisions {
		decisions[i] = names[i] + ":pending:"
	}
	var removed []int
	for {
		if len(live) == 1 {
			out.Rounds = append(out.Rounds, rules.StatusQuo)
			out.IfClosed = rules.Rejected
			break
		}
		type pr struct{ w, l int }
		var pairs []pr
		for _, x := range live {
			for _, y := range live {
				if x != y && d(x, y) > d(y, x) {
					pairs = append(pairs, pr{x, y})
				}
			}
		}
		before := func(a, b pr) bool {
			if d(a.w, a.l) != d(b.w, b.l) {
				return d(a.w, a.l) > d(b.w, b.l)
			}
			if d(a.l, a.w) != d(b.l, b.w) {
				return d(a.l, a.w) < d(b.l, b.w)
			}
			if names[a.w] != names[b.w] {
				return names[a.w] < names[b.w]
			}
			return names[a.l] < names[b.l]
		}
		for i := 1; i < len(pairs); i++ { // insertion sort
			for j := i; j > 0 && before(pairs[j], pairs[j-1]); j-- {
				pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
			}
		}
		var locked []pr
		for _, p := range pairs {
			try := append(slices.Clone(locked), p)
			consistent := false
			for _, perm := range permutations(len(live)) {
				at := map[int]int{}
				for i, x := range perm {
					at[live[x]] = i
				}
				ok := true
				for _, q := range try {
					if at[q.w] > at[q.l] {
						ok = false
					}
				}
				if ok {
					consistent = true
					break
				}
			}
			if consistent {
				locked = try
			}
		}
		winner := -1
		for _, x := range live {
			beaten := false
			for _, q := range locked {
				if q.l == x {
					beaten = true
				}
			}
			if !beaten && (winner < 0 || x == sq) {
				winner = x
			}
		}
		out.Rounds = append(out.Rounds, names[winner])
		if winner == sq {
			out.IfClosed = rules.Rejected
			break
		}
		outcome := naiveRule(t, ref, n, effective, voidMembers, names[winner], place)
		if outcome == rules.Approved {
			out.IfClosed = rules.Approved
			out.Winner = names[winner]
			for _, x := range live {
				if x != sq && x != winner {
					decisions[x] = names[x] + ":rejected:contest_lost"
				}
			}
			decisions[winner] = names[winner] + ":approved:contest_won"
			for _, x := range removed {
				out.Above = append(out.Above, fmt.Sprintf("%s:%d:%d", names[x], d(x, winner), d(winner, x)))
			}
			slices.Sort(out.Above)
			break
		}
		if outcome == rules.Pending {
			out.IfClosed = rules.Pending
			break
		}
		decisions[winner] = names[winner] + ":rejected:contest_rule_failed"
		removed = append(removed, winner)
		live = slices.DeleteFunc(live, func(x int) bool { return x == winner })
	}
	if out.IfClosed == rules.Rejected {
		out.Winner = rules.StatusQuo
		for _, x := range live {
			if x != sq {
				decisions[x] = names[x] + ":rejected:contest_lost"
			}
		}
	}
	out.Decisions = decisions
	return out
}

// naiveRule applies the option's rule to ballots synthesised from the
// rankings: approve for above the status quo, reject for below, abstain
// for level; two unlinked ballots for each void member.
func naiveRule(t *rapid.T, ref rules.Ref, n int, effective []rules.Ranking, void []int, name string, place func(rules.Ranking, string) int) rules.Outcome {
	mr, err := dag.ParseID(name)
	if err != nil {
		t.Fatal(err)
	}
	var bs []rules.Ballot
	for i, r := range effective {
		b := rules.Ballot{Tx: id(fmt.Sprintf("naive-%d", i)), Author: r.Author}
		b.MR = mr
		switch a, s := place(r, name), place(r, rules.StatusQuo); {
		case a < s:
			b.Choice = rules.Approve
		case s < a:
			b.Choice = rules.Reject
		default:
			b.Choice = rules.Abstain
		}
		bs = append(bs, b)
	}
	for _, m := range void {
		for j := 0; j < 2; j++ {
			b := rules.Ballot{Tx: id(fmt.Sprintf("naive-void-%d-%d", m, j)), Author: member(m)}
			b.MR, b.Choice = mr, rules.Approve
			bs = append(bs, b)
		}
	}
	res, err := rules.Evaluate(ref, members(n), mr, bs, rules.Context{})
	if err != nil {
		t.Fatal(err)
	}
	return res.IfClosed
}

func fastOutcome(res rules.ContestResult) naiveContestOutcome {
	out := naiveContestOutcome{IfClosed: res.IfClosed, Winner: res.Winner, Pairwise: map[string]uint64{}}
	for _, r := range res.Rounds {
		out.Rounds = append(out.Rounds, r.Winner)
	}
	for _, d := range res.Decisions {
		out.Decisions = append(out.Decisions, fmt.Sprintf("%s:%s:%s", d.Option, d.Outcome, d.Reason))
	}
	for _, a := range res.RankedAboveWinner {
		out.Above = append(out.Above, fmt.Sprintf("%s:%d:%d", a.Option, a.AboveWinner, a.BelowWinner))
	}
	for i := range res.Options {
		for j := range res.Options {
			if i != j {
				out.Pairwise[res.Options[i]+">"+res.Options[j]] = res.Pairwise[i][j]
			}
		}
	}
	return out
}

type drawnContest struct {
	rule     genRule
	n        int
	options  []dag.ID
	rankings []rules.Ranking
}

// drawContest draws a small contest: 1-7 members (plus a non-member), 2-4
// options, up to 24 rankings that rank a prefix of a random order of the
// options and the status quo, sometimes superseding the member's latest
// ranking or an older one (a fork), sometimes a ranking that is not there
// (a second root, so the member is void).
func drawContest(t *rapid.T, kinds ...string) drawnContest {
	var c drawnContest
	c.n = rapid.IntRange(1, 7).Draw(t, "n")
	c.rule = drawRule(t, c.n, kinds...)
	k := rapid.IntRange(2, 4).Draw(t, "options")
	for i := 0; i < k; i++ {
		c.options = append(c.options, opt(byte(i+1)))
	}
	all := append(slices.Clone(c.options), dag.ID{})
	count := rapid.IntRange(0, 24).Draw(t, "rankings")
	for i := 0; i < count; i++ {
		m := rapid.IntRange(0, c.n).Draw(t, "member")
		if m == c.n && rapid.IntRange(0, 3).Draw(t, "outsider") != 0 {
			m = 0
		}
		r := rules.Ranking{Tx: id(fmt.Sprintf("r-%d", i)), Author: member(m)}
		r.Contest = contestID
		perm := rapid.Permutation(all).Draw(t, "order")
		r.Ranking = perm[:rapid.IntRange(0, len(perm)).Draw(t, "length")]
		var own []dag.ID
		for _, x := range c.rankings {
			if x.Author == r.Author {
				own = append(own, x.Tx)
			}
		}
		switch rapid.IntRange(0, 5).Draw(t, "link") {
		case 1, 2, 3:
			if len(own) > 0 {
				r.Supersedes = own[len(own)-1]
			}
		case 4:
			if len(own) > 0 {
				r.Supersedes = own[rapid.IntRange(0, len(own)-1).Draw(t, "older")]
			}
		case 5:
			r.Supersedes = id("missing")
		}
		c.rankings = append(c.rankings, r)
	}
	return c
}

func (c drawnContest) eval(t *rapid.T, rankings []rules.Ranking) rules.ContestResult {
	res, err := rules.EvaluateContest(c.rule.ref, members(c.n), contestID, rules.ContestOpenBody{Options: c.options}, rankings, rules.ContestContext{})
	if err != nil {
		t.Fatalf("EvaluateContest: %v", err)
	}
	return res
}

func TestContestMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawContest(t)
		got := fastOutcome(c.eval(t, c.rankings))
		want := naiveContest(t, c.rule.ref, c.n, c.options, c.rankings)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Fatalf("fast and naive differ:\n fast  %s\n naive %s", gb, wb)
		}
	})
}

// Determinism: any order of the same rankings gives byte-identical
// results.
func TestContestDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawContest(t)
		a, _ := json.Marshal(c.eval(t, c.rankings))
		shuffled := rapid.Permutation(c.rankings).Draw(t, "shuffled")
		b, _ := json.Marshal(c.eval(t, shuffled))
		if string(a) != string(b) {
			t.Fatalf("order changed the result:\n%s\n%s", a, b)
		}
	})
}

// Integer-only: the counts add up exactly. Every pair's two counts never
// exceed the rankers; each round's tally is A = d[w][sq], R = d[sq][w], B
// the rest of the rankers.
func TestContestCountsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawContest(t)
		res := c.eval(t, c.rankings)
		k := len(res.Options)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				if i != j && res.Pairwise[i][j]+res.Pairwise[j][i] > res.Rankers {
					t.Fatalf("d[%d][%d]+d[%d][%d] > rankers", i, j, j, i)
				}
			}
		}
		for _, r := range res.Rounds {
			if r.Tally == nil {
				continue
			}
			w := slices.Index(res.Options, r.Winner)
			tl := r.Tally
			if tl.Approve != res.Pairwise[w][k-1] || tl.Reject != res.Pairwise[k-1][w] || tl.Approve+tl.Reject+tl.Abstain != res.Rankers || tl.Void != res.Void {
				t.Fatalf("round %d tally %+v does not match the pairwise counts", r.Round, tl)
			}
		}
	})
}

// Monotonicity: a member who raises the approved option one place in a
// new ranking superseding their own never turns its approval into
// anything else.
func TestContestMonotone(t *testing.T) {
	checked := 0
	rapid.Check(t, func(t *rapid.T) {
		c := drawContest(t, rules.KindAlwaysAllow, rules.KindAlwaysAllow, rules.KindThresholdVote)
		res := c.eval(t, c.rankings)
		if res.IfClosed != rules.Approved {
			return
		}
		w, _ := dag.ParseID(res.Winner)
		for m := 0; m < c.n; m++ {
			raise(t, c, res, w, m, &checked)
		}
	})
	if checked == 0 {
		t.Fatalf("only %d draws reached the check", checked)
	}
}

// raise has member m raise w one place in a new ranking superseding their
// effective one and checks that w stays approved.
func raise(t *rapid.T, c drawnContest, res rules.ContestResult, w dag.ID, m int, checked *int) {
	// The member's effective ranking, if any: the one nobody supersedes.
	var own []rules.Ranking
	for _, r := range c.rankings {
		if r.Author == member(m) {
			own = append(own, r)
		}
	}
	var tip *rules.Ranking
	for i := range own {
		superseded := false
		for _, x := range own {
			if x.Supersedes == own[i].Tx {
				superseded = true
			}
		}
		if !superseded {
			if tip != nil {
				return
			}
			tip = &own[i]
		}
	}
	raised := rules.Ranking{Tx: id("raised"), Author: member(m)}
	raised.Contest = contestID
	order := []dag.ID{}
	if tip != nil {
		raised.Supersedes = tip.Tx
		order = slices.Clone(tip.Ranking)
	}
	if len(own) > 0 && tip == nil {
		return
	}
	at := slices.Index(order, w)
	switch {
	case at < 0:
		order = append(order, w)
	case at > 0:
		order[at-1], order[at] = order[at], order[at-1]
	default:
		return
	}
	raised.Ranking = order
	*checked++
	after := c.eval(t, append(slices.Clone(c.rankings), raised))
	if after.IfClosed != rules.Approved || after.Winner != res.Winner {
		t.Fatalf("raising %s turned approval into %s (winner %s)", res.Winner, after.IfClosed, after.Winner)
	}
}

// Rejection soundness and completeness: an option is rejected for failing
// its rule only when its own rule, applied alone to its counts against
// the status quo, rejects (or expires) it; the contest rejects everything
// only when the status quo wins or is left alone; it stays pending only
// while the round's winner can still pass. And a contest never lowers the
// bar: the approved option passes its own rule alone.
func TestContestRejectionSoundComplete(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawContest(t)
		res := c.eval(t, c.rankings)
		last := res.Rounds[len(res.Rounds)-1]
		alone := func(r rules.Round) rules.Outcome {
			mr, _ := dag.ParseID(r.Winner)
			var bs []rules.Ballot
			for i := uint64(0); i < r.Tally.Approve; i++ {
				bs = append(bs, mkBallot(fmt.Sprintf("a%d", i), int(i), mr, rules.Approve))
			}
			for i := uint64(0); i < r.Tally.Reject; i++ {
				bs = append(bs, mkBallot(fmt.Sprintf("r%d", i), int(r.Tally.Approve+i), mr, rules.Reject))
			}
			for i := uint64(0); i < r.Tally.Abstain; i++ {
				bs = append(bs, mkBallot(fmt.Sprintf("b%d", i), int(r.Tally.Approve+r.Tally.Reject+i), mr, rules.Abstain))
			}
			for i := uint64(0); i < r.Tally.Void; i++ {
				m := int(r.Tally.Approve + r.Tally.Reject + r.Tally.Abstain + i)
				bs = append(bs, mkBallot(fmt.Sprintf("v%d", i), m, mr, rules.Approve), mkBallot(fmt.Sprintf("w%d", i), m, mr, rules.Reject))
			}
			out, err := rules.Evaluate(c.rule.ref, members(c.n), mr, bs, rules.Context{})
			if err != nil {
				t.Fatal(err)
			}
			return out.IfClosed
		}
		for _, r := range res.Rounds {
			if r.Winner == rules.StatusQuo {
				continue
			}
			o := alone(r)
			if o != r.Outcome {
				t.Fatalf("round %d: contest says %s, the rule alone %s", r.Round, r.Outcome, o)
			}
			if r.Round < len(res.Rounds) && o != rules.Rejected && o != rules.Expired {
				t.Fatalf("round %d's winner was removed though its rule says %s", r.Round, o)
			}
		}
		switch res.IfClosed {
		case rules.Rejected:
			if last.Winner != rules.StatusQuo {
				t.Fatalf("all rejected but the last round's winner is %s", last.Winner)
			}
		case rules.Pending:
			if last.Outcome != rules.Pending {
				t.Fatalf("pending but the last round's winner is %s", last.Outcome)
			}
		case rules.Approved:
			if last.Outcome != rules.Approved || last.Winner != res.Winner {
				t.Fatalf("approved %s but the last round says %s for %s", res.Winner, last.Outcome, last.Winner)
			}
		}
	})
}

func mkBallot(tx string, m int, mr dag.ID, c rules.Choice) rules.Ballot {
	b := rules.Ballot{Tx: id("alone-" + tx), Author: member(m)}
	b.MR, b.Choice = mr, c
	return b
}

// Equivocation never increases approvals: a second, unlinked ranking by a
// member never raises any option's count above the status quo, nor the
// rankers.
func TestContestEquivocationNeverIncreasesApprovals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawContest(t)
		before := c.eval(t, c.rankings)
		m := rapid.IntRange(0, c.n-1).Draw(t, "equivocator")
		had := false
		for _, r := range c.rankings {
			had = had || r.Author == member(m)
		}
		if !had {
			t.Skip("a first ranking is not equivocation")
		}
		x := rules.Ranking{Tx: id("equivocation"), Author: member(m)}
		x.Contest = contestID
		all := append(slices.Clone(c.options), dag.ID{})
		x.Ranking = rapid.Permutation(all).Draw(t, "order")
		after := c.eval(t, append(slices.Clone(c.rankings), x))
		k := len(before.Options)
		for i := 0; i < k-1; i++ {
			if after.Pairwise[i][k-1] > before.Pairwise[i][k-1] {
				t.Fatalf("%s gained approvals by equivocation: %d -> %d", before.Options[i], before.Pairwise[i][k-1], after.Pairwise[i][k-1])
			}
		}
		if after.Rankers > before.Rankers {
			t.Fatalf("rankers grew by equivocation")
		}
		if !slices.Contains(after.Voided, member(m)) {
			t.Fatalf("the equivocating member is not void")
		}
	})
}
