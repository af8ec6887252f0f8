package rules_test

import (
	"testing"

	"github.com/witan-dev/witan/rules"
)

// TestPollLen: Len counts the distinct ballots a poll folded, void ones
// included, and neither repeats nor refused ballots; it equals
// Tally.Ballots.
func TestPollLen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		votes []vote
		want  int
	}{
		{"empty", nil, 0},
		{"three members", many(A, 0, 3), 3},
		{"a repeat", []vote{{m: 0, tx: "a", c: A}, {m: 0, tx: "a", c: A}}, 1},
		{"a vote changed", []vote{{m: 0, tx: "a", c: A}, {m: 0, tx: "b", c: R, sup: "a"}}, 2},
		{"an equivocation", []vote{{m: 0, tx: "a", c: A}, {m: 0, tx: "b", c: R}}, 2},
		{"a non-member refused", []vote{{m: 0, tx: "a", c: A}, {m: 9, tx: "b", c: A}}, 1},
		{"another MR refused", []vote{{m: 0, tx: "a", c: A}, {m: 1, tx: "b", c: A, mr: id("other mr")}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := rules.NewPoll(compile(t, ref(t, rules.KindAlwaysAllow, `{}`, -1)), electorate(t, 5), mrID)
			for _, v := range tc.votes {
				_ = p.Add(v.ballot())
			}
			if p.Len() != tc.want || uint64(p.Len()) != p.Tally(rules.Facts{}).Ballots {
				t.Fatalf("Len %d, Tally.Ballots %d; want %d", p.Len(), p.Tally(rules.Facts{}).Ballots, tc.want)
			}
		})
	}
}
