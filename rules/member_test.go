package rules_test

import (
	"testing"

	"github.com/witan-dev/witan/rules"
)

// TestPollMember: a member's standing is its effective ballot's choice,
// void for an equivocation, nothing without a ballot (D22's ballot_choice).
func TestPollMember(t *testing.T) {
	p := rules.NewPoll(compile(t, ref(t, rules.KindAlwaysAllow, `{}`, -1)), electorate(t, 5), mrID)
	for _, v := range []vote{
		{m: 0, tx: "a", c: A},
		{m: 1, tx: "b", c: A}, {m: 1, tx: "c", c: R, sup: "b"}, // changed to reject
		{m: 2, tx: "d", c: A}, {m: 2, tx: "e", c: R}, // equivocation
	} {
		if err := p.Add(v.ballot()); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		m        int
		choice   rules.Choice
		void, ok bool
	}{{0, rules.Approve, false, true}, {1, rules.Reject, false, true}, {2, 0, true, true}, {3, 0, false, false}, {9, 0, false, false}} {
		ch, void, ok := p.Member(member(c.m))
		if ch != c.choice || void != c.void || ok != c.ok {
			t.Errorf("member %d: %v %v %v, want %v %v %v", c.m, ch, void, ok, c.choice, c.void, c.ok)
		}
	}
}
