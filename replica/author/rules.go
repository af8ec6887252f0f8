package author

// This file builds the rule references the bodies of the other families
// name (session.create's root rules, a branch's rules, an MR's rule).

import (
	"fmt"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// RuleRef returns the reference to version 1 of rule kind with params (a
// JSON object), a minimum notice in seconds (negative: null) and text, the
// id of the rule's plain-language statute text. It checks the shape
// (rules.ParseRef), not the kind's parameters (rules.Compile does).
func RuleRef(kind, params string, minNotice int64, text dag.ID) (rules.Ref, error) {
	mn := "null"
	if minNotice >= 0 {
		mn = strconv.FormatInt(minNotice, 10)
	}
	return rules.ParseRef([]byte(fmt.Sprintf(`{"kind":%q,"version":1,"params":%s,"min_notice":%s,"text_ref":%q}`, kind, params, mn, text)))
}

// Majority is a threshold_vote passing with more than half of the
// electorate's votes, quorum half the electorate, closing as soon as the
// threshold is met, after minNotice seconds of notice.
func Majority(minNotice int64, text dag.ID) (rules.Ref, error) {
	return RuleRef(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"}`, minNotice, text)
}

// TwoThirds is a threshold_vote passing with at least two thirds of the
// electorate, quorum half: the entrenched root governance rule of D38.
func TwoThirds(text dag.ID) (rules.Ref, error) {
	return RuleRef(rules.KindThresholdVote, `{"num":2,"den":3,"cmp":"gte","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"}`, -1, text)
}

// AlwaysAllow is the always_allow rule.
func AlwaysAllow(text dag.ID) (rules.Ref, error) {
	return RuleRef(rules.KindAlwaysAllow, `{}`, -1, text)
}
