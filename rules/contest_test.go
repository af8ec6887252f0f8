package rules_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// Hand-derived contest outcomes (30k §7, D47, D71, D77). Every expected
// value below is worked out in the comment beside the case from §7's
// words, never copied from the code's output; testdata/contest/ holds the
// same cases as provisional vectors for other implementations.

// opt returns option number n (1 = X, 2 = Y, 3 = Z, 4 = W), an MR id
// whose digest starts with n, so that X < Y < Z < W in id order and every
// MR sorts before "status_quo".
func opt(n byte) dag.ID {
	var d [32]byte
	d[0] = n
	return dag.IDFromDigest(d)
}

var optLetters = map[byte]dag.ID{'X': opt(1), 'Y': opt(2), 'Z': opt(3), 'W': opt(4), 'S': {}}

func optLetter(name string) string {
	if name == rules.StatusQuo {
		return "S"
	}
	for l, o := range optLetters {
		if o.Valid() && o.String() == name {
			return string(l)
		}
	}
	return name
}

var contestID = id("contest")

// rk is a compact ranking: member m ranks the letters of order (S is the
// status quo) as tx "tx", superseding tx "sup" (empty for none).
type rk struct {
	m     int
	tx    string
	sup   string
	order string
}

func (r rk) ranking() rules.Ranking {
	out := rules.Ranking{Tx: id(r.tx), Author: member(r.m)}
	out.Contest = contestID
	out.Ranking = []dag.ID{}
	for i := 0; i < len(r.order); i++ {
		out.Ranking = append(out.Ranking, optLetters[r.order[i]])
	}
	if r.sup != "" {
		out.Supersedes = id(r.sup)
	}
	return out
}

// bloc returns count rankings of order from members from, from+1, ...
func bloc(from, count int, order string) []rk {
	var out []rk
	for m := from; m < from+count; m++ {
		out = append(out, rk{m: m, tx: fmt.Sprintf("rank-%d-%s", m, order), order: order})
	}
	return out
}

func rks(parts ...[]rk) []rk {
	var out []rk
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

const majorityDeadline = `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":"2026-09-24T12:00:00Z"}`
const majorityThreshold = `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`

type contestCase struct {
	name      string
	why       string // the derivation, by hand from §7
	params    string
	n         int
	options   string // letters
	rankings  []rk
	ifClosed  rules.Outcome
	winner    string   // letter
	rounds    []string // each round's winner, letters
	decisions string   // "X:approved:contest_won Y:rejected:contest_lost"
	above     string   // "X:5:1" entries, space separated; "" for nil
	pairs     map[string]uint64
	skipped   []string // round 1's skipped pairs, "ZX" = Z over X
	rankers   uint64
	void      uint64
}

func contestCases() []contestCase {
	return []contestCase{
		{
			why:  "N=5. X vs S: X above S by m0, m4 (2); S above X by m1, m2, m3 (3; m2, m3 rank only S, so X is below it). Y vs S: 2 to 3 likewise. X vs Y: m0, m4 put X above Y (2), m1 Y above X (1), m2, m3 tie. Pairs S>X 3:2, S>Y 3:2 (same counts; loser id X < Y), X>Y 2:1: all lock, S is unbeaten, so every option is rejected with contest_lost.",
			name: "status quo wins when no option beats it", params: majorityDeadline, n: 5, options: "XY",
			rankings: []rk{{0, "a", "", "XSY"}, {1, "b", "", "YSX"}, {2, "c", "", "S"}, {3, "d", "", "S"}, {4, "e", "", "XYS"}},
			ifClosed: rules.Rejected, winner: "S", rounds: []string{"S"},
			decisions: "X:rejected:contest_lost Y:rejected:contest_lost",
			pairs:     map[string]uint64{"XS": 2, "SX": 3, "YS": 2, "SY": 3, "XY": 2, "YX": 1},
			rankers:   5,
		},
		{
			why:  "N=5. Three X>Y>S, one Y>X>S, one S>Y>X. X>Y 3:2, X>S 4:1, Y>S 4:1. Sorted: X>S, Y>S (4:1 both, winner id X < Y), X>Y. X unbeaten; against S A=4, R=1: 4*2 > 1*5, approved.",
			name: "Condorcet winner passes its rule", params: majorityDeadline, n: 5, options: "XY",
			rankings: rks(bloc(0, 3, "XYS"), bloc(3, 1, "YXS"), bloc(4, 1, "SYX")),
			ifClosed: rules.Approved, winner: "X", rounds: []string{"X"},
			decisions: "X:approved:contest_won Y:rejected:contest_lost",
			pairs:     map[string]uint64{"XY": 3, "YX": 2, "XS": 4, "SX": 1, "YS": 4},
			rankers:   5,
		},
		{
			why:  "N=9, a cycle X>Y>Z>X above S: 4 X>Y>Z>S, 3 Y>Z>X>S, 2 Z>X>Y>S. X>Y 6:3, Y>Z 7:2, Z>X 5:4; each over S 9:0. Sorted: X>S, Y>S, Z>S (9:0, by id), Y>Z 7:2, X>Y 6:3, Z>X 5:4. Z>X would close X>Y>Z>X: skipped. X unbeaten; A=9 passes.",
			name: "three-way cycle: weakest pair skipped", params: majorityDeadline, n: 9, options: "XYZ",
			rankings: rks(bloc(0, 4, "XYZS"), bloc(4, 3, "YZXS"), bloc(7, 2, "ZXYS")),
			ifClosed: rules.Approved, winner: "X", rounds: []string{"X"},
			decisions: "X:approved:contest_won Y:rejected:contest_lost Z:rejected:contest_lost",
			pairs:     map[string]uint64{"XY": 6, "YX": 3, "YZ": 7, "ZY": 2, "ZX": 5, "XZ": 4, "XS": 9},
			skipped:   []string{"ZX"},
			rankers:   9,
		},
		{
			why:  "N=10. 5 X>Y>S, 1 Y>S (X below), 3 S (X, Y below), 1 empty ranking (all equal). X vs S 5:4, Y vs S 6:3, X vs Y 5:1. Round 1: Y>S 6:3, X>Y 5:1, X>S 5:4 lock; X wins but A=5: 5*2 > 10 fails (quorum 0 is met, so rejected), contest_rule_failed. Round 2 (Y, S; counts reused): Y>S 6:3, Y wins, 6*2 > 10 passes. ranked_above_winner: X above Y 5, below 1.",
			name: "fallback: first winner fails by one, second passes", params: majorityDeadline, n: 10, options: "XY",
			rankings: rks(bloc(0, 5, "XYS"), bloc(5, 1, "YS"), bloc(6, 3, "S"), bloc(9, 1, "")),
			ifClosed: rules.Approved, winner: "Y", rounds: []string{"X", "Y"},
			decisions: "X:rejected:contest_rule_failed Y:approved:contest_won",
			above:     "X:5:1",
			pairs:     map[string]uint64{"XS": 5, "SX": 4, "YS": 6, "SY": 3, "XY": 5, "YX": 1},
			rankers:   10,
		},
		{
			why:  "N=10. 5 X>S>Y, 1 S>Y (X below), 3 S, 1 empty. X vs S 5:4, S vs Y 9:0, X vs Y 5:1. Round 1: S>Y, X>Y, X>S lock; X wins, A=5 fails. Round 2: S>Y 9:0, S wins: Y contest_lost, no ranked_above_winner (nothing approved).",
			name: "fallback ends with the status quo", params: majorityDeadline, n: 10, options: "XY",
			rankings: rks(bloc(0, 5, "XSY"), bloc(5, 1, "SY"), bloc(6, 3, "S"), bloc(9, 1, "")),
			ifClosed: rules.Rejected, winner: "S", rounds: []string{"X", "S"},
			decisions: "X:rejected:contest_rule_failed Y:rejected:contest_lost",
			pairs:     map[string]uint64{"XS": 5, "SX": 4, "SY": 9, "YS": 0, "XY": 5, "YX": 1},
			rankers:   10,
		},
		{
			why:  "N=9, a cycle through the status quo: 4 X>Y>S, 3 Y>S>X, 2 S>X>Y. X>Y 6:3, Y>S 7:2, S>X 5:4. Round 1: Y>S, X>Y lock, S>X skipped (X>Y>S>X); X wins, but against S A=4, R=5: 4*2 > 9 fails. Round 2: Y>S 7:2, Y wins, 7*2 > 9 passes. ranked_above_winner: X above Y 6, below 3.",
			name: "cycle through the status quo, then fallback", params: majorityDeadline, n: 9, options: "XY",
			rankings: rks(bloc(0, 4, "XYS"), bloc(4, 3, "YSX"), bloc(7, 2, "SXY")),
			ifClosed: rules.Approved, winner: "Y", rounds: []string{"X", "Y"},
			decisions: "X:rejected:contest_rule_failed Y:approved:contest_won",
			above:     "X:6:3",
			pairs:     map[string]uint64{"XY": 6, "YX": 3, "YS": 7, "SY": 2, "SX": 5, "XS": 4},
			skipped:   []string{"SX"},
			rankers:   9,
		},
		{
			why:  "N=3. m0 ranks X>S, then supersedes it with S>X: S>X counts. m1 casts two unlinked rankings: void. m2 ranks X>S. X vs S 1:1 (tied, never locked), S>Y 2:0, X>Y 2:0 (Y unranked by both). Sorted X>Y, S>Y (2:0, winner id X < S). X and S are unbeaten; the status quo wins the tie: both rejected.",
			name: "equivocation voids; an unbeaten tie goes to the status quo", params: majorityDeadline, n: 3, options: "XY",
			rankings: []rk{{0, "m0-1", "", "XS"}, {0, "m0-2", "m0-1", "SX"}, {1, "m1-1", "", "XS"}, {1, "m1-2", "", "XYS"}, {2, "m2", "", "XS"}},
			ifClosed: rules.Rejected, winner: "S", rounds: []string{"S"},
			decisions: "X:rejected:contest_lost Y:rejected:contest_lost",
			pairs:     map[string]uint64{"XS": 1, "SX": 1, "SY": 2, "XY": 2, "YX": 0},
			rankers:   2, void: 1,
		},
		{
			why:  "N=5 under on_threshold: one member ranks X>S. X wins (X>S 1:0, X>Y 1:0, S>Y 1:0). Against S, A=1, R=0, V=0: not yet passing (1*2 > 5 fails) but (N-R-V)*2 = 10 > 5, so approval is still possible: the contest stays pending, nothing is rejected.",
			name: "on_threshold winner still pending", params: majorityThreshold, n: 5, options: "XY",
			rankings: []rk{{0, "a", "", "XS"}},
			ifClosed: rules.Pending, winner: "", rounds: []string{"X"},
			decisions: "X:pending: Y:pending:",
			pairs:     map[string]uint64{"XS": 1, "XY": 1, "SY": 1},
			rankers:   1,
		},
	}
}

func runContestCase(t *testing.T, tc contestCase, rankings []rk) rules.ContestResult {
	t.Helper()
	body := rules.ContestOpenBody{}
	for i := 0; i < len(tc.options); i++ {
		body.Options = append(body.Options, optLetters[tc.options[i]])
	}
	var rs []rules.Ranking
	for _, r := range rankings {
		rs = append(rs, r.ranking())
	}
	res, err := rules.EvaluateContest(ref(t, rules.KindThresholdVote, tc.params, -1), members(tc.n), contestID, body, rs, rules.ContestContext{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestContestHandDerived(t *testing.T) {
	for _, tc := range contestCases() {
		t.Run(tc.name, func(t *testing.T) {
			// Any order of the same rankings gives the same result.
			rev := make([]rk, len(tc.rankings))
			for i, r := range tc.rankings {
				rev[len(rev)-1-i] = r
			}
			for pass, order := range [][]rk{tc.rankings, rev} {
				res := runContestCase(t, tc, order)
				checkContestCase(t, tc, res, pass)
			}
		})
	}
}

func checkContestCase(t *testing.T, tc contestCase, res rules.ContestResult, pass int) {
	t.Helper()
	if res.IfClosed != tc.ifClosed {
		t.Errorf("pass %d: if_closed %s, want %s", pass, res.IfClosed, tc.ifClosed)
	}
	if w := optLetter(res.Winner); res.Winner != "" && w != tc.winner || res.Winner == "" && tc.winner != "" {
		t.Errorf("pass %d: winner %q, want %s", pass, w, tc.winner)
	}
	var rounds []string
	for _, r := range res.Rounds {
		rounds = append(rounds, optLetter(r.Winner))
	}
	if strings.Join(rounds, ",") != strings.Join(tc.rounds, ",") {
		t.Errorf("pass %d: round winners %v, want %v", pass, rounds, tc.rounds)
	}
	var dec []string
	for _, d := range res.Decisions {
		dec = append(dec, fmt.Sprintf("%s:%s:%s", optLetter(d.Option), d.Outcome, d.Reason))
	}
	if got := strings.Join(dec, " "); got != tc.decisions {
		t.Errorf("pass %d: decisions %q, want %q", pass, got, tc.decisions)
	}
	var above []string
	for _, a := range res.RankedAboveWinner {
		above = append(above, fmt.Sprintf("%s:%d:%d", optLetter(a.Option), a.AboveWinner, a.BelowWinner))
	}
	if got := strings.Join(above, " "); got != tc.above || (tc.above == "") != (res.RankedAboveWinner == nil) {
		t.Errorf("pass %d: ranked_above_winner %q (nil %v), want %q", pass, got, res.RankedAboveWinner == nil, tc.above)
	}
	idx := map[string]int{}
	for i, o := range res.Options {
		idx[optLetter(o)] = i
	}
	for p, want := range tc.pairs {
		if got := res.Pairwise[idx[p[:1]]][idx[p[1:]]]; got != want {
			t.Errorf("pass %d: %s over %s: %d, want %d", pass, p[:1], p[1:], got, want)
		}
	}
	var skipped []string
	for _, p := range res.Rounds[0].Skipped {
		skipped = append(skipped, optLetter(p.Winner)+optLetter(p.Loser))
	}
	if strings.Join(skipped, ",") != strings.Join(tc.skipped, ",") {
		t.Errorf("pass %d: skipped %v, want %v", pass, skipped, tc.skipped)
	}
	if res.Rankers != tc.rankers || res.Void != tc.void {
		t.Errorf("pass %d: rankers %d void %d, want %d %d", pass, res.Rankers, res.Void, tc.rankers, tc.void)
	}
}

func TestContestBodies(t *testing.T) {
	x, y := opt(1).String(), opt(2).String()
	nine := make([]string, 10)
	for i := range nine {
		nine[i] = fmt.Sprintf("%q", opt(byte(i+1)).String())
	}
	for _, tc := range contestBodyCases(x, y, nine) {
		var err error
		switch tc.typ {
		case "contest.open":
			_, err = rules.DecodeContestOpen([]byte(tc.body))
		case "contest.rank":
			_, err = rules.DecodeRankBody([]byte(tc.body))
		}
		if got := string(dag.CodeOf(err)); got != tc.code {
			t.Errorf("%s %s: code %q (%v), want %q", tc.typ, tc.body, got, err, tc.code)
		}
	}
}

type bodyCase struct{ typ, body, code string }

// contestBodyCases: the bodies of contest.open and contest.rank, each with
// the code §7 gives it ("" = accepted).
func contestBodyCases(x, y string, ten []string) []bodyCase {
	return []bodyCase{
		{"contest.open", fmt.Sprintf(`{"options":[%q,%q]}`, x, y), ""},
		{"contest.open", fmt.Sprintf(`{"options":[%q,%q],"deadline":"2026-09-24T12:00:00Z"}`, x, y), ""},
		{"contest.open", fmt.Sprintf(`{"options":[%s]}`, strings.Join(ten[:9], ",")), ""},
		{"contest.open", fmt.Sprintf(`{"options":[%q]}`, x), "contest_invalid"},
		{"contest.open", `{"options":[]}`, "contest_invalid"},
		{"contest.open", fmt.Sprintf(`{"options":[%s]}`, strings.Join(ten, ",")), "contest_invalid"},
		{"contest.open", fmt.Sprintf(`{"options":[%q,%q]}`, x, x), "contest_invalid"},
		{"contest.open", fmt.Sprintf(`{"options":[%q,"status_quo"]}`, x), "schema"},
		{"contest.open", fmt.Sprintf(`{"options":[%q,%q],"extra":1}`, x, y), "schema"},
		{"contest.open", fmt.Sprintf(`{"options":[%q,%q],"deadline":"tomorrow"}`, x, y), "schema"},
		{"contest.rank", fmt.Sprintf(`{"contest":%q,"ranking":[%q,"status_quo",%q],"supersedes":null}`, x, y, y), "schema"},
		{"contest.rank", fmt.Sprintf(`{"contest":%q,"ranking":[%q,"status_quo"],"supersedes":null}`, x, y), ""},
		{"contest.rank", fmt.Sprintf(`{"contest":%q,"ranking":[],"supersedes":%q}`, x, y), ""},
		{"contest.rank", fmt.Sprintf(`{"contest":%q,"ranking":[%q,"status_quo"]}`, x, y), ""},
		{"contest.rank", fmt.Sprintf(`{"contest":%q}`, x), "schema"},
		{"contest.rank", fmt.Sprintf(`{"contest":%q,"ranking":["status_quo","status_quo"]}`, x), "schema"},
		{"contest.rank", fmt.Sprintf(`{"contest":%q,"ranking":["nobody"]}`, x), "schema"},
	}
}

func TestContestRefusesCapitalVote(t *testing.T) {
	r, err := rules.ParseRef([]byte(fmt.Sprintf(`{"kind":"capital_vote","version":1,"params":{"budget":10,"cost":"linear","num":1,"den":2,"cmp":"gt","closing":"on_deadline"},"text_ref":%q}`, textRef)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rules.EvaluateContest(r, members(3), contestID, rules.ContestOpenBody{Options: []dag.ID{opt(1), opt(2)}}, nil, rules.ContestContext{})
	if dag.CodeOf(err) != dag.CodeContestInvalid {
		t.Fatalf("capital_vote contest: %v, want contest_invalid", err)
	}
}

func TestContestRefusesRankings(t *testing.T) {
	rule := compile(t, ref(t, rules.KindThresholdVote, majorityDeadline, -1))
	c, err := rules.NewContest(rule, electorate(t, 3), contestID, rules.ContestOpenBody{Options: []dag.ID{opt(1), opt(2)}})
	if err != nil {
		t.Fatal(err)
	}
	other := rk{0, "other", "", "XS"}.ranking()
	other.Contest = id("another contest")
	for _, tc := range []struct {
		r    rules.Ranking
		code dag.Code
	}{
		{other, dag.CodeBallotInvalid},
		{rk{7, "stranger", "", "XS"}.ranking(), dag.CodeBallotInvalid},
		{rk{0, "z", "", "ZS"}.ranking(), dag.CodeBallotInvalid},
	} {
		if err := c.Add(tc.r); dag.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.r.Tx, err, tc.code)
		}
	}
	res := c.Result(rules.ContestContext{})
	if len(res.Invalid) != 3 || res.Rankers != 0 {
		t.Fatalf("invalid %d rankers %d, want 3 and 0", len(res.Invalid), res.Rankers)
	}
}

// The contest's ranking deadline and the approved option's notice are
// advisory on an eventual node: IfClosed ignores them, Outcome honours
// them, Timing records them.
func TestContestTiming(t *testing.T) {
	deadline := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	tc := contestCases()[1] // X approved
	body := rules.ContestOpenBody{Options: []dag.ID{opt(1), opt(2)}, Deadline: deadline}
	var rs []rules.Ranking
	for _, r := range tc.rankings {
		rs = append(rs, r.ranking())
	}
	r := ref(t, rules.KindThresholdVote, majorityThreshold, 86400)
	open := deadline.Add(-100 * time.Hour)
	noDeadline := rules.ContestOpenBody{Options: body.Options}
	for _, c := range []struct {
		body rules.ContestOpenBody
		at   time.Time
		want rules.Outcome
	}{
		{body, deadline.Add(-time.Second), rules.Pending},
		{body, deadline, rules.Approved},
		{noDeadline, open.Add(86399 * time.Second), rules.Pending},
		{noDeadline, open.Add(86400 * time.Second), rules.Approved},
	} {
		res, err := rules.EvaluateContest(r, members(tc.n), contestID, c.body, rs, rules.ContestContext{At: c.at, NoticeStart: open})
		if err != nil {
			t.Fatal(err)
		}
		if res.IfClosed != rules.Approved || res.Outcome != c.want {
			t.Errorf("at %s: if_closed %s outcome %s, want approved and %s", c.at, res.IfClosed, res.Outcome, c.want)
		}
	}
}

// BenchmarkContest11000 holds the contest's goal: a contest of 9 options
// with 11,000 ranking members determines in at most 50 ms. Each member
// ranks a pseudo-random prefix of a pseudo-random order of the 9 options
// and the status quo, so nearly every ranking is distinct; one in fifty
// members also equivocates. Measured: folding every ranking and the
// determination (pairwise counts and all rounds).
func BenchmarkContest11000(b *testing.B) {
	const n, k = 11000, 9
	el := electorate(b, n)
	rule := compile(b, ref(b, rules.KindThresholdVote, majorityDeadline, -1))
	body := rules.ContestOpenBody{}
	for i := 0; i < k; i++ {
		body.Options = append(body.Options, opt(byte(i+1)))
	}
	all := append(slices.Clone(body.Options), dag.ID{})
	var rs []rules.Ranking
	seed := uint64(1)
	next := func() uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return seed >> 33 }
	for m := 0; m < n; m++ {
		order := slices.Clone(all)
		for i := len(order) - 1; i > 0; i-- {
			j := int(next() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		r := rules.Ranking{Tx: id(fmt.Sprintf("bench-%d", m)), Author: member(m)}
		r.Contest = contestID
		r.Ranking = order[:1+next()%uint64(len(order))]
		rs = append(rs, r)
		if m%50 == 0 {
			x := r
			x.Tx = id(fmt.Sprintf("bench-x-%d", m))
			rs = append(rs, x)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() {
		// CPU time as well as wall time: the shared machine is often
		// loaded far beyond its two cores.
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}()
	for i := 0; i < b.N; i++ {
		c, err := rules.NewContest(rule, el, contestID, body)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if err := c.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		res := c.Result(rules.ContestContext{})
		if res.Rankers+res.Void != n {
			b.Fatalf("rankers %d void %d", res.Rankers, res.Void)
		}
	}
}
