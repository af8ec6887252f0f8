package rules_test

import (
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

var t0 = time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)

const (
	majorityOnThreshold = `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`
	twoThirdsQuorumHalf = `{"num":2,"den":3,"cmp":"gte","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"}`
	reversionRule       = `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold","reversion":{"num":4,"den":5}}`
	quarterQuorum3of4   = `{"num":1,"den":4,"cmp":"gte","basis":"electorate","quorum_num":3,"quorum_den":4,"closing":"on_threshold"}`
	halfGTEOnThreshold  = `{"num":1,"den":2,"cmp":"gte","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`
	castOnDeadline      = `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":1,"quorum_den":2,"closing":"on_deadline","deadline":"2026-09-24T12:00:00Z"}`
	twoApprovers        = `{"approvers":"group:committee","required":2}`
)

var deadline = time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)

type evalCase struct {
	name      string
	kind      string
	params    string
	minNotice int64 // -1: none
	n         int
	votes     []vote
	ctx       rules.Context

	outcome, ifClosed rules.Outcome
	arbv              [4]uint64 // A, R, B, V
	reasons           []rules.Reason
	voided            []int // member indexes
	invalid           int
	designated        bool
}

func evalCases() []evalCase {
	withNotice := rules.Context{NoticeStart: t0, At: t0.Add(100 * time.Second)}
	return []evalCase{
		// always_allow
		{name: "always_allow/no ballots", kind: rules.KindAlwaysAllow, params: `{}`, minNotice: -1, n: 3,
			outcome: rules.Approved, ifClosed: rules.Approved, reasons: []rules.Reason{rules.ReasonAllowed}},
		{name: "always_allow/ballots do not matter", kind: rules.KindAlwaysAllow, params: `{}`, minNotice: -1, n: 3,
			votes: many(R, 0, 3), outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{0, 3, 0, 0},
			reasons: []rules.Reason{rules.ReasonAllowed}},
		{name: "always_allow/structure blocks", kind: rules.KindAlwaysAllow, params: `{}`, minNotice: -1, n: 3,
			ctx: rules.Context{Facts: rules.Facts{StructureFailed: true}}, outcome: rules.Pending, ifClosed: rules.Pending,
			reasons: []rules.Reason{rules.ReasonAllowed, rules.ReasonStructureFailed}},
		{name: "always_allow/notice unknown time", kind: rules.KindAlwaysAllow, params: `{}`, minNotice: 100, n: 1,
			outcome: rules.Pending, ifClosed: rules.Approved,
			reasons: []rules.Reason{rules.ReasonAllowed, rules.ReasonNoticeNotElapsed}},
		{name: "always_allow/notice one second short", kind: rules.KindAlwaysAllow, params: `{}`, minNotice: 101, n: 1,
			ctx: withNotice, outcome: rules.Pending, ifClosed: rules.Approved,
			reasons: []rules.Reason{rules.ReasonAllowed, rules.ReasonNoticeNotElapsed}},
		{name: "always_allow/notice elapsed", kind: rules.KindAlwaysAllow, params: `{}`, minNotice: 100, n: 1,
			ctx: withNotice, outcome: rules.Approved, ifClosed: rules.Approved, reasons: []rules.Reason{rules.ReasonAllowed}},

		// designated_approvers, n = 3, required = 2
		{name: "designated/two approve", kind: rules.KindDesignatedApprovers, params: twoApprovers, minNotice: -1, n: 3,
			votes: many(A, 0, 2), outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonApprovalsReached}},
		{name: "designated/one approves", kind: rules.KindDesignatedApprovers, params: twoApprovers, minNotice: -1, n: 3,
			votes: many(A, 0, 1), outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{1, 0, 0, 0}},
		{name: "designated/two reject", kind: rules.KindDesignatedApprovers, params: twoApprovers, minNotice: -1, n: 3,
			votes: many(R, 0, 2), outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{0, 2, 0, 0},
			reasons: []rules.Reason{rules.ReasonApprovalsUnreachable}},
		{name: "designated/abstentions can still approve", kind: rules.KindDesignatedApprovers, params: twoApprovers, minNotice: -1, n: 3,
			votes: many(B, 0, 3), outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{0, 0, 3, 0}},
		{name: "designated/void approver counts against", kind: rules.KindDesignatedApprovers, params: twoApprovers, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "x", c: A}, {m: 0, tx: "y", c: A}, {m: 1, tx: "z", c: R}},
			outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{0, 1, 0, 1}, voided: []int{0},
			reasons: []rules.Reason{rules.ReasonApprovalsUnreachable}},
		{name: "designated/non-member is invalid", kind: rules.KindDesignatedApprovers, params: twoApprovers, minNotice: -1, n: 3,
			votes: concat(many(A, 0, 1), many(A, 5, 6)), outcome: rules.Pending, ifClosed: rules.Pending,
			arbv: [4]uint64{1, 0, 0, 0}, invalid: 1},

		// threshold_vote, on_threshold
		{name: "threshold/majority passes", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 5,
			votes: many(A, 0, 3), outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{3, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/half is not more than half", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 4,
			votes: many(A, 0, 2), outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{2, 0, 0, 0}},
		{name: "threshold/half is at least half", kind: rules.KindThresholdVote, params: halfGTEOnThreshold, minNotice: -1, n: 4,
			votes: many(A, 0, 2), outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/rejected once unreachable", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 5,
			votes: concat(many(R, 0, 3), many(A, 3, 5)), outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{2, 3, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdUnreachable}},
		{name: "threshold/two thirds exactly", kind: rules.KindThresholdVote, params: twoThirdsQuorumHalf, minNotice: -1, n: 6,
			votes: concat(many(A, 0, 4), many(R, 4, 6)), outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{4, 2, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/quorum unreachable through void ballots (S14)", kind: rules.KindThresholdVote, params: quarterQuorum3of4, minNotice: -1, n: 4,
			votes:   []vote{{m: 0, tx: "a", c: A}, {m: 0, tx: "b", c: R}, {m: 1, tx: "c", c: A}, {m: 1, tx: "d", c: A, sup: "zz"}},
			outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{0, 0, 0, 2}, voided: []int{0, 1},
			reasons: []rules.Reason{rules.ReasonQuorumUnreachable}},
		{name: "threshold/quorum still reachable", kind: rules.KindThresholdVote, params: quarterQuorum3of4, minNotice: -1, n: 4,
			votes:   []vote{{m: 0, tx: "a", c: A}, {m: 0, tx: "b", c: R}},
			outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{0, 0, 0, 1}, voided: []int{0}},
		{name: "threshold/empty electorate is rejected", kind: rules.KindThresholdVote, params: halfGTEOnThreshold, minNotice: -1, n: 0,
			outcome: rules.Rejected, ifClosed: rules.Rejected, reasons: []rules.Reason{rules.ReasonEmptyElectorate}},
		{name: "threshold/reversion raises the bar", kind: rules.KindThresholdVote, params: reversionRule, minNotice: -1, n: 4,
			votes: many(A, 0, 3), ctx: rules.Context{Facts: rules.Facts{Reverts: true}},
			outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{3, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonReversion}},
		{name: "threshold/reversion unused without reverts", kind: rules.KindThresholdVote, params: reversionRule, minNotice: -1, n: 4,
			votes: many(A, 0, 3), outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{3, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/superseding ballot counts", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: A}, {m: 0, tx: "a1", c: R, sup: "a0"}, {m: 0, tx: "a2", c: B, sup: "a1"}, {m: 1, tx: "b0", c: R}},
			outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{0, 1, 1, 0}},
		{name: "threshold/fork voids", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: A}, {m: 0, tx: "a1", c: A, sup: "a0"}, {m: 0, tx: "a2", c: A, sup: "a0"}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{1, 0, 0, 1}, voided: []int{0}},
		{name: "threshold/chain with a gap voids", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: A}, {m: 0, tx: "a2", c: A, sup: "a1"}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{1, 0, 0, 1}, voided: []int{0}},
		{name: "threshold/gap filled", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: R}, {m: 0, tx: "a2", c: A, sup: "a1"}, {m: 0, tx: "a1", c: R, sup: "a0"}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/superseding another member's ballot voids", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: A}, {m: 0, tx: "a1", c: A, sup: "b0"}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Pending, ifClosed: rules.Pending, arbv: [4]uint64{1, 0, 0, 1}, voided: []int{0}},
		{name: "threshold/lone ballot superseding an unlisted one counts", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a1", c: A, sup: "a0"}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/repeats are one ballot", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: A}, {m: 0, tx: "a0", c: A}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/ballot on another MR is invalid", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: -1, n: 3,
			votes:   []vote{{m: 0, tx: "a0", c: A, mr: otherMR}, {m: 0, tx: "a1", c: A}, {m: 1, tx: "b0", c: A}},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 0, 0, 0}, invalid: 1,
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/emergency designated shortens notice", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: 259200, n: 3,
			votes:   []vote{{m: 0, tx: "a", c: A, em: rules.EmergencyYes}, {m: 1, tx: "b", c: A, em: rules.EmergencyYes}, {m: 2, tx: "c", c: R, em: rules.EmergencyNo}},
			ctx:     rules.Context{Facts: rules.Facts{Emergency: true}, NoticeStart: t0, At: t0.Add(86400 * time.Second)},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 1, 0, 0}, designated: true,
			reasons: []rules.Reason{rules.ReasonThresholdMet, rules.ReasonEmergencyDesignated}},
		{name: "threshold/emergency not designated keeps notice", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: 259200, n: 4,
			votes:   []vote{{m: 0, tx: "a", c: A, em: rules.EmergencyYes}, {m: 1, tx: "b", c: A, em: rules.EmergencyYes}, {m: 2, tx: "c", c: A, em: rules.EmergencyNo}},
			ctx:     rules.Context{Facts: rules.Facts{Emergency: true}, NoticeStart: t0, At: t0.Add(86400 * time.Second)},
			outcome: rules.Pending, ifClosed: rules.Approved, arbv: [4]uint64{3, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet, rules.ReasonNoticeNotElapsed}},
		{name: "threshold/amendment notice", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: 259200, n: 1,
			votes:   many(A, 0, 1),
			ctx:     rules.Context{Facts: rules.Facts{ShortNotice: true}, NoticeStart: t0, At: t0.Add(86400 * time.Second)},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{1, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "threshold/rejection needs no notice", kind: rules.KindThresholdVote, params: majorityOnThreshold, minNotice: 259200, n: 2,
			votes: many(R, 0, 1), outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{0, 1, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdUnreachable}},

		// threshold_vote, on_deadline: votes_cast, > 1/2, quorum 1/2
		{name: "deadline/before the deadline", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes: concat(many(A, 0, 3), many(R, 3, 4)), ctx: rules.Context{At: deadline.Add(-time.Nanosecond)},
			outcome: rules.Pending, ifClosed: rules.Approved, arbv: [4]uint64{3, 1, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet, rules.ReasonDeadlineNotReached}},
		{name: "deadline/at the deadline", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes: concat(many(A, 0, 3), many(R, 3, 4)), ctx: rules.Context{At: deadline},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{3, 1, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
		{name: "deadline/time unknown", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes:   concat(many(A, 0, 3), many(R, 3, 4)),
			outcome: rules.Pending, ifClosed: rules.Approved, arbv: [4]uint64{3, 1, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet, rules.ReasonDeadlineNotReached}},
		{name: "deadline/quorum unmet expires", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes: many(A, 0, 2), ctx: rules.Context{At: deadline},
			outcome: rules.Expired, ifClosed: rules.Expired, arbv: [4]uint64{2, 0, 0, 0},
			reasons: []rules.Reason{rules.ReasonQuorumUnmet}},
		{name: "deadline/tie rejects", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes: concat(many(A, 0, 2), many(R, 2, 4)), ctx: rules.Context{At: deadline},
			outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{2, 2, 0, 0},
			reasons: []rules.Reason{rules.ReasonThresholdNotMet}},
		{name: "deadline/abstentions only reject (D = 0)", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes: many(B, 0, 3), ctx: rules.Context{At: deadline},
			outcome: rules.Rejected, ifClosed: rules.Rejected, arbv: [4]uint64{0, 0, 3, 0},
			reasons: []rules.Reason{rules.ReasonThresholdNotMet}},
		{name: "deadline/abstentions count for quorum", kind: rules.KindThresholdVote, params: castOnDeadline, minNotice: -1, n: 6,
			votes: concat(many(A, 0, 2), many(R, 2, 3), many(B, 3, 4)), ctx: rules.Context{At: deadline.Add(time.Hour)},
			outcome: rules.Approved, ifClosed: rules.Approved, arbv: [4]uint64{2, 1, 1, 0},
			reasons: []rules.Reason{rules.ReasonThresholdMet}},
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range evalCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rules.Evaluate(ref(t, tc.kind, tc.params, tc.minNotice), members(tc.n), mrID, ballots(tc.votes), tc.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got.Outcome != tc.outcome || got.IfClosed != tc.ifClosed {
				t.Errorf("outcome %s, if closed %s; want %s, %s (reasons %v)", got.Outcome, got.IfClosed, tc.outcome, tc.ifClosed, got.Reasons)
			}
			ty := got.Tally
			if g := [4]uint64{ty.Approve, ty.Reject, ty.Abstain, ty.Void}; g != tc.arbv {
				t.Errorf("A,R,B,V = %v, want %v", g, tc.arbv)
			}
			if ty.Electorate != uint64(tc.n) || ty.Cast != ty.Approve+ty.Reject+ty.Abstain {
				t.Errorf("N = %d, cast = %d", ty.Electorate, ty.Cast)
			}
			want := tc.reasons
			if want == nil {
				want = []rules.Reason{}
			}
			if !slices.Equal(got.Reasons, want) {
				t.Errorf("reasons %v, want %v", got.Reasons, want)
			}
			var voided []dag.Key
			for _, m := range tc.voided {
				voided = append(voided, member(m))
			}
			slices.SortFunc(voided, func(a, b dag.Key) int { return compareStrings(a.String(), b.String()) })
			if !slices.Equal(got.Voided, voided) && !(len(got.Voided) == 0 && len(voided) == 0) {
				t.Errorf("voided %v, want %v", got.Voided, voided)
			}
			if len(got.Invalid) != tc.invalid {
				t.Errorf("invalid %v, want %d", got.Invalid, tc.invalid)
			}
			for _, inv := range got.Invalid {
				if inv.Code != dag.CodeBallotInvalid {
					t.Errorf("invalid ballot code %s, want ballot_invalid", inv.Code)
				}
			}
			if got.EmergencyDesignated != tc.designated {
				t.Errorf("emergency designated %v, want %v", got.EmergencyDesignated, tc.designated)
			}
		})
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestTallyShares(t *testing.T) {
	// N = 10, A = 3, R = 2, B = 1: approve_of_cast 3/5, approve_of_electorate 3/10.
	votes := concat(many(A, 0, 3), many(R, 3, 5), many(B, 5, 6))
	cases := []struct {
		kind, params string
		share        *rules.RuleShare
	}{
		{rules.KindAlwaysAllow, `{}`, nil},
		{rules.KindThresholdVote, majorityOnThreshold, &rules.RuleShare{Name: "approve_of_electorate", Basis: "electorate", Share: rules.Ratio{Num: 3, Den: 10}, Cmp: rules.CmpGT, Threshold: rules.Ratio{Num: 1, Den: 2}}},
		{rules.KindThresholdVote, castOnDeadline, &rules.RuleShare{Name: "approve_of_cast", Basis: "votes_cast", Share: rules.Ratio{Num: 3, Den: 5}, Cmp: rules.CmpGT, Threshold: rules.Ratio{Num: 1, Den: 2}}},
		{rules.KindDesignatedApprovers, twoApprovers, &rules.RuleShare{Name: "approvals_of_required", Basis: "approvers", Share: rules.Ratio{Num: 3, Den: 2}, Cmp: rules.CmpGTE, Threshold: rules.Ratio{Num: 1, Den: 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			res, err := rules.Evaluate(ref(t, tc.kind, tc.params, -1), members(10), mrID, ballots(votes), rules.Context{})
			if err != nil {
				t.Fatal(err)
			}
			ty := res.Tally
			if ty.ApproveOfCast != (rules.Ratio{Num: 3, Den: 5}) || ty.ApproveOfElectorate != (rules.Ratio{Num: 3, Den: 10}) {
				t.Errorf("shares %+v %+v", ty.ApproveOfCast, ty.ApproveOfElectorate)
			}
			if (ty.RuleShare == nil) != (tc.share == nil) || (tc.share != nil && *ty.RuleShare != *tc.share) {
				t.Errorf("rule share %+v, want %+v", ty.RuleShare, tc.share)
			}
		})
	}
}

func TestNoticeTiming(t *testing.T) {
	r := ref(t, rules.KindAlwaysAllow, `{}`, 3600)
	start := t0.Add(500 * time.Millisecond)
	for _, tc := range []struct {
		at      time.Time
		elapsed int64
		met     bool
	}{
		{start.Add(3599*time.Second + 999*time.Millisecond), 3599, false},
		{start.Add(3600 * time.Second), 3600, true},
		{start.Add(-time.Second), -1, false},
	} {
		res, err := rules.Evaluate(r, members(1), mrID, nil, rules.Context{NoticeStart: start, At: tc.at})
		if err != nil {
			t.Fatal(err)
		}
		tm := res.Timing
		if tm.NoticeRequired == nil || *tm.NoticeRequired != 3600 || tm.NoticeElapsed == nil || *tm.NoticeElapsed != tc.elapsed || tm.NoticeMet != tc.met {
			t.Errorf("at %s: timing %+v (elapsed %v), want elapsed %d met %v", tc.at, tm, deref(tm.NoticeElapsed), tc.elapsed, tc.met)
		}
		if want := map[bool]rules.Outcome{true: rules.Approved, false: rules.Pending}[tc.met]; res.Outcome != want {
			t.Errorf("at %s: outcome %s, want %s", tc.at, res.Outcome, want)
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
