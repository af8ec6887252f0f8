package rules_test

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// A majority of the electorate, closing on threshold: the replica keeps one
// Poll per MR and adds each ballot as it is accepted.
func Example() {
	ref, err := rules.ParseRef([]byte(`{"kind":"threshold_vote","version":1,
		"params":{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"},
		"min_notice":259200,"text_ref":"sha256:` + fmt.Sprintf("%x", sha256.Sum256([]byte("rule text"))) + `"}`))
	if err != nil {
		panic(err)
	}
	rule, err := rules.Compile(ref)
	if err != nil {
		panic(err)
	}

	// Five members, frozen when the MR opened.
	var keys []dag.Key
	for i := range 5 {
		seed := sha256.Sum256([]byte{byte(i)})
		s, _ := dag.SignerFromSeed(seed[:])
		keys = append(keys, s.Key())
	}
	el, _ := rules.NewElectorate(keys)
	mr := dag.Sum([]byte("mr"))
	poll := rules.NewPoll(rule, el, mr)

	cast := func(member int, tx string, c rules.Choice, supersedes dag.ID) {
		b := rules.Ballot{Tx: dag.Sum([]byte(tx)), Author: keys[member]}
		b.MR, b.Choice, b.Supersedes = mr, c, supersedes
		if err := poll.Add(b); err != nil {
			fmt.Println("refused:", dag.CodeOf(err))
		}
	}
	cast(0, "t1", rules.Approve, dag.ID{})
	cast(1, "t2", rules.Reject, dag.ID{})
	cast(1, "t3", rules.Approve, dag.Sum([]byte("t2"))) // member 1 changes their mind
	cast(2, "t4", rules.Approve, dag.ID{})
	cast(3, "t5", rules.Approve, dag.ID{})
	cast(3, "t6", rules.Reject, dag.ID{}) // unlinked second ballot: member 3 is void

	opened := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{opened.Add(time.Hour), opened.Add(72 * time.Hour)} {
		res := poll.Result(rules.Context{NoticeStart: opened, At: at})
		ty := res.Tally
		fmt.Printf("at +%s: %s (if closed: %s) A=%d R=%d B=%d V=%d of N=%d\n",
			at.Sub(opened), res.Outcome, res.IfClosed, ty.Approve, ty.Reject, ty.Abstain, ty.Void, ty.Electorate)
		fmt.Printf("  approve_of_cast %d/%d, approve_of_electorate %d/%d, rule share %s %d/%d %s %d/%d\n",
			ty.ApproveOfCast.Num, ty.ApproveOfCast.Den, ty.ApproveOfElectorate.Num, ty.ApproveOfElectorate.Den,
			ty.RuleShare.Name, ty.RuleShare.Share.Num, ty.RuleShare.Share.Den, ty.RuleShare.Cmp,
			ty.RuleShare.Threshold.Num, ty.RuleShare.Threshold.Den)
		fmt.Printf("  reasons %v, notice elapsed %ds of %ds\n", res.Reasons, *res.Timing.NoticeElapsed, *res.Timing.NoticeRequired)
	}
	// Output:
	// at +1h0m0s: pending (if closed: approved) A=3 R=0 B=0 V=1 of N=5
	//   approve_of_cast 3/3, approve_of_electorate 3/5, rule share approve_of_electorate 3/5 gt 1/2
	//   reasons [threshold_met notice_not_elapsed], notice elapsed 3600s of 259200s
	// at +72h0m0s: approved (if closed: approved) A=3 R=0 B=0 V=1 of N=5
	//   approve_of_cast 3/3, approve_of_electorate 3/5, rule share approve_of_electorate 3/5 gt 1/2
	//   reasons [threshold_met], notice elapsed 259200s of 259200s
}

// Compile answers the wire codes of §5 for rules an eventual node cannot
// evaluate.
func ExampleCompile() {
	for _, kind := range []string{"capital_vote", "ranked_choice"} {
		_, err := rules.Compile(rules.Ref{Kind: kind, Version: 1, TextRef: dag.Sum([]byte("text"))})
		fmt.Println(kind, dag.CodeOf(err))
	}
	// Output:
	// capital_vote rule_not_supported
	// ranked_choice rule_unknown
}

// Verifying a determination on an eventual node: re-evaluate exactly the
// ballots it lists and compare its claimed outcome with IfClosed; the
// deadline is advisory and is recorded, not enforced.
func ExampleEvaluate() {
	ref := rules.Ref{
		Kind: rules.KindThresholdVote, Version: 1, TextRef: dag.Sum([]byte("rule text")),
		Params: []byte(`{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":1,"quorum_den":2,"closing":"on_deadline","deadline":"2026-09-24T12:00:00Z"}`),
	}
	var keys []dag.Key
	for i := range 4 {
		seed := sha256.Sum256([]byte{byte(i)})
		s, _ := dag.SignerFromSeed(seed[:])
		keys = append(keys, s.Key())
	}
	mr := dag.Sum([]byte("mr"))
	var listed []rules.Ballot
	for i, c := range []rules.Choice{rules.Approve, rules.Approve, rules.Reject} {
		b := rules.Ballot{Tx: dag.Sum([]byte{'t', byte(i)}), Author: keys[i]}
		b.MR, b.Choice = mr, c
		listed = append(listed, b)
	}
	claimed := rules.Approved
	checkpoint := time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC) // a day early

	res, err := rules.Evaluate(ref, keys, mr, listed, rules.Context{At: checkpoint})
	if err != nil {
		panic(err)
	}
	fmt.Println("claim holds:", claimed == res.IfClosed)
	fmt.Println("deadline reached:", res.Timing.DeadlineReached, "- live outcome:", res.Outcome)
	// Output:
	// claim holds: true
	// deadline reached: false - live outcome: pending
}
