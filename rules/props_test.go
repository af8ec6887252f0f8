package rules_test

import (
	"fmt"
	"math/big"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// Properties of 30k §7's formal reference (D27): determinism, integer-only
// arithmetic (checked against a big.Int model), monotonicity of
// on_threshold, rejection soundness and completeness, equivocation never
// increases A; and incremental folding equals the full fold.

type genRule struct {
	ref                  rules.Ref
	kind                 string
	num, den, qnum, qden int64
	cmp                  string
	basis                string
	closing              string
	reversion            [2]int64 // zero: none
	required             int64
}

func drawRule(t *rapid.T, n int, kinds ...string) genRule {
	if len(kinds) == 0 {
		kinds = []string{rules.KindAlwaysAllow, rules.KindDesignatedApprovers, rules.KindThresholdVote, rules.KindThresholdVote}
	}
	g := genRule{kind: rapid.SampledFrom(kinds).Draw(t, "kind")}
	var params string
	switch g.kind {
	case rules.KindAlwaysAllow:
		params = `{}`
	case rules.KindDesignatedApprovers:
		g.required = int64(rapid.IntRange(1, n+2).Draw(t, "required"))
		params = fmt.Sprintf(`{"approvers":"group:g","required":%d}`, g.required)
	case rules.KindThresholdVote:
		g.den = int64(rapid.IntRange(1, 7).Draw(t, "den"))
		g.num = int64(rapid.IntRange(1, int(g.den)).Draw(t, "num"))
		g.cmp = rapid.SampledFrom([]string{"gt", "gte"}).Draw(t, "cmp")
		g.qden = int64(rapid.IntRange(1, 5).Draw(t, "qden"))
		g.qnum = int64(rapid.IntRange(0, int(g.qden)).Draw(t, "qnum"))
		g.closing = rapid.SampledFrom([]string{"on_threshold", "on_deadline"}).Draw(t, "closing")
		g.basis = "electorate"
		extra := ""
		if g.closing == "on_deadline" {
			g.basis = rapid.SampledFrom([]string{"electorate", "votes_cast"}).Draw(t, "basis")
			extra = `,"deadline":"2026-09-24T12:00:00Z"`
		}
		if rapid.Bool().Draw(t, "has reversion") {
			g.reversion[1] = int64(rapid.IntRange(1, 7).Draw(t, "rden"))
			g.reversion[0] = int64(rapid.IntRange(1, int(g.reversion[1])).Draw(t, "rnum"))
			extra += fmt.Sprintf(`,"reversion":{"num":%d,"den":%d}`, g.reversion[0], g.reversion[1])
		}
		params = fmt.Sprintf(`{"num":%d,"den":%d,"cmp":%q,"basis":%q,"quorum_num":%d,"quorum_den":%d,"closing":%q%s}`,
			g.num, g.den, g.cmp, g.basis, g.qnum, g.qden, g.closing, extra)
	}
	r, err := rules.ParseRef([]byte(fmt.Sprintf(`{"kind":%q,"version":1,"params":%s,"text_ref":%q}`, g.kind, params, textRef)))
	if err != nil {
		t.Fatalf("ParseRef: %v", err)
	}
	g.ref = r
	return g
}

// drawBallots draws a random history: members 0..n+1 (n and n+1 are not in
// the electorate), every choice, ballots on another MR, supersedes links to
// the member's own earlier ballots, to anyone's, and to ballots that are
// not there, and repeats. Links point only backwards, as real tx ids must.
func drawBallots(t *rapid.T, n int, label string) []rules.Ballot {
	count := rapid.IntRange(0, 40).Draw(t, label+" count")
	var out []rules.Ballot
	for i := 0; i < count; i++ {
		m := rapid.IntRange(0, n+1).Draw(t, label+" member")
		b := rules.Ballot{Tx: id(fmt.Sprintf("%s-%d", label, i)), Author: member(m)}
		b.MR = mrID
		if rapid.IntRange(0, 15).Draw(t, label+" other mr") == 0 {
			b.MR = otherMR
		}
		b.Choice = rapid.SampledFrom([]rules.Choice{rules.Approve, rules.Reject, rules.Abstain}).Draw(t, label+" choice")
		b.Emergency = rules.Emergency(rapid.IntRange(0, 2).Draw(t, label+" emergency"))
		switch rapid.IntRange(0, 6).Draw(t, label+" link") {
		case 0, 1: // none
		case 2, 3: // the member's own latest ballot, if any
			for j := len(out) - 1; j >= 0; j-- {
				if out[j].Author == b.Author {
					b.Supersedes = out[j].Tx
					break
				}
			}
		case 4: // any earlier ballot
			if len(out) > 0 {
				b.Supersedes = out[rapid.IntRange(0, len(out)-1).Draw(t, label+" target")].Tx
			}
		case 6: // any of the member's own earlier ballots: forks
			var own []dag.ID
			for _, x := range out {
				if x.Author == b.Author {
					own = append(own, x.Tx)
				}
			}
			if len(own) > 0 {
				b.Supersedes = own[rapid.IntRange(0, len(own)-1).Draw(t, label+" own")]
			}
		case 5: // a ballot that is not in the set
			b.Supersedes = id(fmt.Sprintf("missing-%d", rapid.IntRange(0, 3).Draw(t, label+" missing")))
		}
		out = append(out, b)
	}
	for k := rapid.IntRange(0, 3).Draw(t, label+" repeats"); k > 0 && len(out) > 0; k-- {
		x := out[rapid.IntRange(0, len(out)-1).Draw(t, label+" repeat")]
		if rapid.IntRange(0, 3).Draw(t, label+" conflicting") == 0 {
			// The same tx id with another body: impossible for real ids,
			// but the result must still not depend on order.
			x.Choice = rapid.SampledFrom([]rules.Choice{rules.Approve, rules.Reject, rules.Abstain}).Draw(t, label+" other choice")
		}
		out = append(out, x)
	}
	return out
}

// drawChains draws long supersedes chains from few members, so that the
// per-member index (from 8 ballots on) is exercised: mostly each ballot
// supersedes the member's latest, sometimes an older one (a fork), a
// missing one (a gap) or none (a second root).
func drawChains(t *rapid.T, n int, label string) []rules.Ballot {
	var out []rules.Ballot
	for m := 0; m < min(n, 3); m++ {
		var mine []dag.ID
		for i := rapid.IntRange(6, 30).Draw(t, label+" length"); i > 0; i-- {
			b := rules.Ballot{Tx: id(fmt.Sprintf("%s-%d-%d", label, m, len(mine))), Author: member(m)}
			b.MR = mrID
			b.Choice = rapid.SampledFrom([]rules.Choice{rules.Approve, rules.Reject, rules.Abstain}).Draw(t, label+" choice")
			if len(mine) > 0 {
				switch rapid.IntRange(0, 30).Draw(t, label+" link") {
				case 0:
					b.Supersedes = mine[rapid.IntRange(0, len(mine)-1).Draw(t, label+" fork")]
				case 1:
					b.Supersedes = id("gap")
				case 2:
				default:
					b.Supersedes = mine[len(mine)-1]
				}
			}
			mine = append(mine, b.Tx)
			out = append(out, b)
		}
	}
	return out
}

func drawHistory(t *rapid.T, n int) []rules.Ballot {
	if rapid.IntRange(0, 3).Draw(t, "long chains") == 0 {
		return drawChains(t, n, "c")
	}
	return drawBallots(t, n, "b")
}

func drawContext(t *rapid.T) rules.Context {
	var ctx rules.Context
	ctx.Facts.Reverts = rapid.Bool().Draw(t, "reverts")
	ctx.Facts.Emergency = rapid.Bool().Draw(t, "emergency")
	if rapid.Bool().Draw(t, "has time") {
		ctx.At = deadline.Add(time.Duration(rapid.IntRange(-2, 2).Draw(t, "at")) * time.Hour)
	}
	return ctx
}

func mustEvaluate(t *rapid.T, r rules.Ref, n int, bs []rules.Ballot, ctx rules.Context) rules.Result {
	res, err := rules.Evaluate(r, members(n), mrID, bs, ctx)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return res
}

func permute[T any](t *rapid.T, xs []T) []T {
	out := append([]T(nil), xs...)
	for i := len(out) - 1; i > 0; i-- {
		j := rapid.IntRange(0, i).Draw(t, "swap")
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Determinism: the result is a function of the set of ballots; order and
// repeats change nothing.
func TestPropDeterminism(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 10).Draw(t, "n")
		g := drawRule(t, n)
		bs := drawBallots(t, n, "b")
		ctx := drawContext(t)
		r1 := mustEvaluate(t, g.ref, n, bs, ctx)
		r2 := mustEvaluate(t, g.ref, n, permute(t, append(bs, bs...)), ctx)
		if !reflect.DeepEqual(r1, r2) {
			t.Fatalf("order changed the result:\n%+v\n%+v", r1, r2)
		}
	})
}

// Incremental == full: a Poll fed one ballot at a time, in any order, gives
// after every ballot the result of evaluating that prefix from scratch.
// Ballots go through AddAt with the author's position or a wrong one,
// which must not matter.
func TestPropIncrementalEqualsFull(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 10).Draw(t, "n")
		g := drawRule(t, n)
		bs := permute(t, drawHistory(t, n))
		ctx := drawContext(t)
		el, err := rules.NewElectorate(members(n))
		if err != nil {
			t.Fatal(err)
		}
		p := rules.NewPoll(compile(t, g.ref), el, mrID)
		for i, b := range bs {
			at := rapid.IntRange(-1, n).Draw(t, "at")
			if k, ok := el.Index(b.Author); ok && rapid.Bool().Draw(t, "right") {
				at = k
			}
			_ = p.AddAt(at, b)
			inc := p.Result(ctx)
			full := mustEvaluate(t, g.ref, n, bs[:i+1], ctx)
			if !reflect.DeepEqual(inc, full) {
				t.Fatalf("after %d ballots: incremental\n%+v\nfull\n%+v", i+1, inc, full)
			}
		}
	})
}

// naiveCount applies §7's ballot validity by its words: a member's ballots
// count only if every two are linked by a supersedes chain, and the
// effective one is the one no other supersedes.
func naiveCount(n int, bs []rules.Ballot) (a, r, b, v, yes int64) {
	in := map[dag.Key]bool{}
	for _, k := range members(n) {
		in[k] = true
	}
	byMember := map[dag.Key]map[dag.ID]rules.Ballot{}
	for _, x := range bs {
		if x.MR != mrID || !in[x.Author] {
			continue
		}
		if byMember[x.Author] == nil {
			byMember[x.Author] = map[dag.ID]rules.Ballot{}
		}
		if old, ok := byMember[x.Author][x.Tx]; ok && !bodyLess(x, old) {
			continue // for one tx id with two bodies, the smaller body counts
		}
		byMember[x.Author][x.Tx] = x
	}
	for _, set := range byMember {
		reach := func(from, to dag.ID) bool {
			for steps := 0; steps <= len(set); steps++ {
				if from == to {
					return true
				}
				x, ok := set[from]
				if !ok || !x.Supersedes.Valid() {
					return false
				}
				from = x.Supersedes
				if _, ok := set[from]; !ok {
					return false
				}
			}
			return false
		}
		linked := true
		for x := range set {
			for y := range set {
				if !reach(x, y) && !reach(y, x) {
					linked = false
				}
			}
		}
		if !linked {
			v++
			continue
		}
		var tip rules.Ballot
		tips := 0
		for x, bx := range set {
			superseded := false
			for _, by := range set {
				if by.Supersedes == x {
					superseded = true
				}
			}
			if !superseded {
				tip, tips = bx, tips+1
			}
		}
		if tips != 1 {
			panic("a linked set has one tip")
		}
		switch tip.Choice {
		case rules.Approve:
			a++
		case rules.Reject:
			r++
		case rules.Abstain:
			b++
		}
		if tip.Emergency == rules.EmergencyYes {
			yes++
		}
	}
	return
}

func bodyLess(x, y rules.Ballot) bool {
	if c := x.Supersedes.Compare(y.Supersedes); c != 0 {
		return c < 0
	}
	if x.Choice != y.Choice {
		return x.Choice < y.Choice
	}
	return x.Emergency < y.Emergency
}

func bi(x int64) *big.Int { return big.NewInt(x) }

func mul(x, y int64) *big.Int { return new(big.Int).Mul(bi(x), bi(y)) }

func cmpHolds(cmp string, x, y *big.Int) bool {
	if cmp == "gt" {
		return x.Cmp(y) > 0
	}
	return x.Cmp(y) >= 0
}

// naiveOutcome writes §7's formulas out in big integers, ignoring the clock.
func naiveOutcome(g genRule, n int, a, r, b, v int64, f rules.Facts) rules.Outcome {
	N := int64(n)
	switch g.kind {
	case rules.KindAlwaysAllow:
		return rules.Approved
	case rules.KindDesignatedApprovers:
		if a >= g.required {
			return rules.Approved
		}
		if N-r-v < g.required {
			return rules.Rejected
		}
		return rules.Pending
	}
	num, den := g.num, g.den
	if f.Reverts && g.reversion[1] != 0 {
		num, den = g.reversion[0], g.reversion[1]
	}
	D := N
	if g.basis == "votes_cast" {
		D = a + r
	}
	quorum := mul(a+r+b, g.qden).Cmp(mul(g.qnum, N)) >= 0
	if quorum && D > 0 && cmpHolds(g.cmp, mul(a, den), mul(num, D)) {
		return rules.Approved
	}
	if g.closing == "on_deadline" {
		if !quorum {
			return rules.Expired
		}
		return rules.Rejected
	}
	if N == 0 || !cmpHolds(g.cmp, mul(N-r-v, den), mul(num, N)) || mul(N-v, g.qden).Cmp(mul(g.qnum, N)) < 0 {
		return rules.Rejected
	}
	return rules.Pending
}

// The fast fold agrees with the naive reading of the spec, and every
// comparison with a big-integer model.
func TestPropMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 10).Draw(t, "n")
		g := drawRule(t, n)
		bs := permute(t, drawHistory(t, n))
		ctx := drawContext(t)
		res := mustEvaluate(t, g.ref, n, bs, ctx)
		a, r, b, v, yes := naiveCount(n, bs)
		ty := res.Tally
		if got := [5]int64{int64(ty.Approve), int64(ty.Reject), int64(ty.Abstain), int64(ty.Void), int64(ty.EmergencyYes)}; got != [5]int64{a, r, b, v, yes} {
			t.Fatalf("A,R,B,V,yes = %v, naive %v", got, [5]int64{a, r, b, v, yes})
		}
		if len(res.Voided) != int(v) {
			t.Fatalf("voided list %d, V %d", len(res.Voided), v)
		}
		if want := naiveOutcome(g, n, a, r, b, v, ctx.Facts); res.IfClosed != want {
			t.Fatalf("if closed %s, naive %s (A=%d R=%d B=%d V=%d N=%d, rule %s)", res.IfClosed, want, a, r, b, v, n, g.ref.Params)
		}
	})
}

// bestExtension adds, for every member who is neither void nor rejecting,
// an approve ballot superseding their effective ballot (or a fresh one):
// the most approval the spec's rejection tests allow for.
func bestExtension(n int, bs []rules.Ballot, res rules.Result) []rules.Ballot {
	voided := map[dag.Key]bool{}
	for _, k := range res.Voided {
		voided[k] = true
	}
	// Each member's effective ballot: the one of theirs nobody supersedes.
	byTx := map[dag.ID]rules.Ballot{}
	var order []dag.ID
	for _, b := range bs {
		if b.MR != mrID {
			continue
		}
		old, ok := byTx[b.Tx]
		if !ok {
			order = append(order, b.Tx)
		}
		if !ok || bodyLess(b, old) {
			byTx[b.Tx] = b // one body per tx id: the smaller, as the poll does
		}
	}
	own := map[dag.Key][]rules.Ballot{}
	for _, tx := range order {
		b := byTx[tx]
		own[b.Author] = append(own[b.Author], b)
	}
	out := append([]rules.Ballot(nil), bs...)
	for i, k := range members(n) {
		if voided[k] {
			continue
		}
		var tip *rules.Ballot
		for j, x := range own[k] {
			superseded := false
			for _, y := range own[k] {
				if y.Supersedes == x.Tx && y.Tx != x.Tx {
					superseded = true
				}
			}
			if !superseded {
				tip = &own[k][j]
			}
		}
		if tip != nil && tip.Choice == rules.Reject {
			continue
		}
		nb := rules.Ballot{Tx: id(fmt.Sprintf("best-%d", i)), Author: k}
		nb.MR, nb.Choice = mrID, rules.Approve
		if tip != nil {
			nb.Supersedes = tip.Tx
		}
		out = append(out, nb)
	}
	return out
}

func onThresholdKinds() []string {
	return []string{rules.KindDesignatedApprovers, rules.KindThresholdVote}
}

func drawOnThreshold(t *rapid.T, n int) genRule {
	for {
		g := drawRule(t, n, onThresholdKinds()...)
		if g.kind != rules.KindThresholdVote || g.closing == "on_threshold" {
			return g
		}
	}
}

// Rejection soundness: never reject while approval is possible. Rejection
// completeness: never stay pending once approval is impossible. Both for
// the kinds that close without a clock.
func TestPropRejectionSoundAndComplete(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 10).Draw(t, "n")
		g := drawOnThreshold(t, n)
		bs := drawBallots(t, n, "b")
		ctx := rules.Context{Facts: rules.Facts{Reverts: rapid.Bool().Draw(t, "reverts")}}
		res := mustEvaluate(t, g.ref, n, bs, ctx)
		best := mustEvaluate(t, g.ref, n, bestExtension(n, bs, res), ctx)
		switch res.Outcome {
		case rules.Rejected:
			if best.Outcome == rules.Approved {
				t.Fatalf("rejected although approval is possible: %+v", best.Tally)
			}
		case rules.Pending:
			if best.Outcome != rules.Approved {
				t.Fatalf("pending although approval is impossible: best %s %+v", best.Outcome, best.Tally)
			}
		}
	})
}

// Monotonicity of on_threshold: more approvals never turn approval into
// rejection (nor pending into rejection).
func TestPropOnThresholdMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 10).Draw(t, "n")
		g := drawOnThreshold(t, n)
		bs := drawBallots(t, n, "b")
		ctx := rules.Context{Facts: rules.Facts{Reverts: rapid.Bool().Draw(t, "reverts")}}
		before := mustEvaluate(t, g.ref, n, bs, ctx)
		// Approvals from members who have not voted.
		voted := map[dag.Key]bool{}
		for _, b := range bs {
			if b.MR == mrID {
				voted[b.Author] = true
			}
		}
		more := append([]rules.Ballot(nil), bs...)
		for i, k := range members(n) {
			if !voted[k] && rapid.Bool().Draw(t, "approve") {
				nb := rules.Ballot{Tx: id(fmt.Sprintf("more-%d", i)), Author: k}
				nb.MR, nb.Choice = mrID, rules.Approve
				more = append(more, nb)
			}
		}
		after := mustEvaluate(t, g.ref, n, more, ctx)
		if after.Tally.Approve < before.Tally.Approve {
			t.Fatalf("A fell from %d to %d", before.Tally.Approve, after.Tally.Approve)
		}
		switch {
		case before.Outcome == rules.Approved && after.Outcome != rules.Approved,
			before.Outcome == rules.Pending && after.Outcome == rules.Rejected:
			t.Fatalf("more approvals turned %s into %s", before.Outcome, after.Outcome)
		}
	})
}

// Equivocation never increases A: a member who casts a second, unlinked
// ballot (approve, to tempt it) never adds an approval.
func TestPropEquivocationNeverIncreasesA(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 10).Draw(t, "n")
		g := drawRule(t, n)
		bs := drawBallots(t, n, "b")
		ctx := drawContext(t)
		before := mustEvaluate(t, g.ref, n, bs, ctx)
		var mine []rules.Ballot
		m := member(rapid.IntRange(0, n-1).Draw(t, "equivocator"))
		for _, b := range bs {
			if b.Author == m && b.MR == mrID {
				mine = append(mine, b)
			}
		}
		if len(mine) == 0 {
			return
		}
		eq := rules.Ballot{Tx: id("equivocation"), Author: m}
		eq.MR, eq.Choice = mrID, rules.Approve
		if rapid.Bool().Draw(t, "fork") {
			eq.Supersedes = mine[rapid.IntRange(0, len(mine)-1).Draw(t, "fork point")].Supersedes // a sibling, or a second root
		}
		after := mustEvaluate(t, g.ref, n, append(bs, eq), ctx)
		if after.Tally.Approve > before.Tally.Approve {
			t.Fatalf("equivocation raised A from %d to %d", before.Tally.Approve, after.Tally.Approve)
		}
		if after.Tally.Void < before.Tally.Void {
			t.Fatalf("equivocation lowered V")
		}
	})
}
