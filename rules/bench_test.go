package rules_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// S11 scale (§10): an 11,000-member roster. Run with, for example,
//
//	go test ./rules -run '^$' -bench . -benchtime 2s
const rosterSize = 11000

// seqID is a cheap distinct id for benchmarks: hashing is not what is
// measured here.
func seqID(tag byte, n uint64) dag.ID {
	var d [32]byte
	d[0] = tag
	binary.BigEndian.PutUint64(d[24:], n)
	return dag.IDFromDigest(d)
}

// sessionBallots returns the ballots of one MR from the first `voters`
// members: about 5% of them change their vote once (supersedes) and about
// 0.2% equivocate.
func sessionBallots(mr dag.ID, voters int, seq *uint64) []rules.Ballot {
	out := make([]rules.Ballot, 0, voters+voters/16)
	for m := 0; m < voters; m++ {
		*seq++
		b := rules.Ballot{Tx: seqID(1, *seq), Author: member(m)}
		b.MR = mr
		b.Choice = rules.Choice(1 + (m*7+int(*seq))%3)
		out = append(out, b)
		switch {
		case m%20 == 3:
			*seq++
			nb := b
			nb.Tx, nb.Supersedes, nb.Choice = seqID(1, *seq), b.Tx, rules.Approve
			out = append(out, nb)
		case m%500 == 7:
			*seq++
			nb := b
			nb.Tx, nb.Choice = seqID(1, *seq), rules.Reject
			out = append(out, nb)
		}
	}
	return out
}

func benchRule(b *testing.B, i int) *rules.Rule {
	switch i % 4 {
	case 0:
		return compile(b, ref(b, rules.KindThresholdVote, majorityOnThreshold, 259200))
	case 1:
		return compile(b, ref(b, rules.KindThresholdVote, twoThirdsQuorumHalf, -1))
	case 2:
		return compile(b, ref(b, rules.KindThresholdVote, castOnDeadline, -1))
	default:
		return compile(b, ref(b, rules.KindDesignatedApprovers, `{"approvers":"group:committee","required":5000}`, -1))
	}
}

// BenchmarkFold folds every ballot of one MR with 11,000 members from an
// empty poll: the full derivation of a tally. Reports ballots/s.
func BenchmarkFold(b *testing.B) {
	el := electorate(b, rosterSize)
	rule := benchRule(b, 0)
	var seq uint64
	bs := sessionBallots(mrID, rosterSize, &seq)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := rules.NewPoll(rule, el, mrID)
		for _, x := range bs {
			_ = p.Add(x)
		}
		_ = p.Tally(rules.Facts{})
	}
	b.ReportMetric(float64(len(bs))*float64(b.N)/b.Elapsed().Seconds(), "ballots/s")
}

// BenchmarkAdd is the incremental cost of one ballot in a poll that
// already holds a ballot from every one of 11,000 members, each new ballot
// superseding its member's latest one (a vote change). In "short" every
// member has at most 4 ballots (the poll is rebuilt, untimed, after that);
// in "long" the chains grow without bound (about N/11,000 ballots each),
// which exercises the per-member index. The cost of a member's first
// ballot is BenchmarkFold's time divided by its ballots.
func BenchmarkAdd(b *testing.B) {
	el := electorate(b, rosterSize)
	rule := benchRule(b, 0)
	var seq uint64
	var p *rules.Poll
	tips := make([]dag.ID, rosterSize)
	fill := func() {
		p = rules.NewPoll(rule, el, mrID)
		for m := range rosterSize {
			seq++
			x := rules.Ballot{Tx: seqID(1, seq), Author: member(m)}
			x.MR, x.Choice = mrID, rules.Reject
			_ = p.Add(x)
			tips[m] = x.Tx
		}
	}
	next := func(i int) rules.Ballot {
		m := i % rosterSize
		seq++
		x := rules.Ballot{Tx: seqID(1, seq), Author: member(m)}
		x.MR, x.Choice, x.Supersedes = mrID, rules.Choice(1+i%3), tips[m]
		tips[m] = x.Tx
		return x
	}
	for _, tc := range []struct {
		name  string
		reset int // rebuild the poll after this many ballots; 0 = never
	}{{"short", 3 * rosterSize}, {"long", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			fill()
			batch := make([]rules.Ballot, b.N)
			for i := range batch {
				batch[i] = next(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if tc.reset > 0 && i > 0 && i%tc.reset == 0 {
					b.StopTimer()
					fill()
					for j := i; j < b.N; j++ { // re-point the rest at the new tips
						batch[j].Supersedes = tips[j%rosterSize]
						tips[j%rosterSize] = batch[j].Tx
					}
					b.StartTimer()
				}
				_ = p.Add(batch[i])
			}
		})
	}
}

// BenchmarkTally is the query of a live tally (counts and the D50 shares)
// on a poll of 11,000 members.
func BenchmarkTally(b *testing.B) {
	el := electorate(b, rosterSize)
	var seq uint64
	p := rules.NewPoll(benchRule(b, 1), el, mrID)
	for _, x := range sessionBallots(mrID, rosterSize, &seq) {
		_ = p.Add(x)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = p.Tally(rules.Facts{})
	}
}

// BenchmarkResult is a full evaluation of that poll: outcome, reasons,
// timing and the sorted list of its 22 void members.
func BenchmarkResult(b *testing.B) {
	el := electorate(b, rosterSize)
	var seq uint64
	p := rules.NewPoll(benchRule(b, 0), el, mrID)
	for _, x := range sessionBallots(mrID, rosterSize, &seq) {
		_ = p.Add(x)
	}
	ctx := rules.Context{At: deadline, NoticeStart: t0}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = p.Result(ctx)
	}
}

// BenchmarkSession folds an S11-sized session from scratch: 300 MRs with
// mixed rules over an 11,000-member roster, each with ballots from 3,300
// members (about a million ballots), and evaluates every MR.
func BenchmarkSession(b *testing.B) {
	const mrs, voters = 300, 3300
	el := electorate(b, rosterSize)
	var seq uint64
	template := sessionBallots(mrID, voters, &seq)
	ruleset := make([]*rules.Rule, 4)
	for i := range ruleset {
		ruleset[i] = benchRule(b, i)
	}
	ids := make([]dag.ID, mrs)
	for i := range ids {
		ids[i] = seqID(2, uint64(i))
	}
	ctx := rules.Context{At: deadline, NoticeStart: t0}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		approved := 0
		for i, mr := range ids {
			p := rules.NewPoll(ruleset[i%4], el, mr)
			for _, x := range template {
				x.MR = mr
				_ = p.Add(x)
			}
			if p.Result(ctx).Outcome == rules.Approved {
				approved++
			}
		}
		_ = approved
	}
	total := float64(mrs * len(template))
	b.ReportMetric(total, "ballots/op")
	b.ReportMetric(total*float64(b.N)/b.Elapsed().Seconds(), "ballots/s")
}

func Test_benchHelpersAreSane(t *testing.T) {
	var seq uint64
	bs := sessionBallots(mrID, 1000, &seq)
	res, err := rules.Evaluate(ref(t, rules.KindThresholdVote, majorityOnThreshold, -1), members(1000), mrID, bs, rules.Context{})
	if err != nil {
		t.Fatal(err)
	}
	// 1000 voters, 2 equivocators (m%500 == 7), no invalid ballots.
	if ty := res.Tally; ty.Void != 2 || ty.Cast != 998 || len(res.Invalid) != 0 {
		t.Fatalf("tally %+v, invalid %d", ty, len(res.Invalid))
	}
	if fmt.Sprint(res.Voided) != fmt.Sprint([]dag.Key{member(7), member(507)}) && fmt.Sprint(res.Voided) != fmt.Sprint([]dag.Key{member(507), member(7)}) {
		t.Fatalf("voided %v", res.Voided)
	}
}
