package rules_test

import (
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

func TestEntrenched(t *testing.T) {
	cases := []struct {
		kind, params string
		want         bool
	}{
		{rules.KindThresholdVote, `{"num":2,"den":3,"cmp":"gte","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, true},
		{rules.KindThresholdVote, `{"num":3,"den":4,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, true},
		{rules.KindThresholdVote, `{"num":666,"den":1000,"cmp":"gte","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, false},
		{rules.KindThresholdVote, `{"num":2,"den":3,"cmp":"gte","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":"2026-09-24T12:00:00Z"}`, false},
		{rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold","reversion":{"num":9,"den":10}}`, false},
		{rules.KindDesignatedApprovers, twoApprovers, false},
		{rules.KindAlwaysAllow, `{}`, false},
	}
	for _, tc := range cases {
		if got := compile(t, ref(t, tc.kind, tc.params, -1)).Entrenched(); got != tc.want {
			t.Errorf("%s %s: entrenched %v, want %v", tc.kind, tc.params, got, tc.want)
		}
	}
}

func TestMeetsRootNotice(t *testing.T) {
	for _, tc := range []struct {
		notice int64
		want   bool
	}{{-1, false}, {0, false}, {259199, false}, {259200, true}, {604800, true}} {
		if got := compile(t, ref(t, rules.KindAlwaysAllow, `{}`, tc.notice)).MeetsRootNotice(); got != tc.want {
			t.Errorf("min_notice %d: %v, want %v", tc.notice, got, tc.want)
		}
	}
}

func TestCheckWindow(t *testing.T) {
	r := compile(t, ref(t, rules.KindThresholdVote, castOnDeadline, -1)) // deadline 2026-09-24T12:00:00Z
	for _, tc := range []struct {
		open time.Time
		ok   bool
	}{
		{deadline.Add(-72 * time.Hour), true},
		{deadline.Add(-72*time.Hour + time.Nanosecond), false},
		{deadline.Add(-100 * time.Hour), true},
		{deadline, false},
	} {
		err := r.CheckWindow(tc.open)
		if (err == nil) != tc.ok || (err != nil && dag.CodeOf(err) != dag.CodeDeadlineTooShort) {
			t.Errorf("open %s: %v, want ok %v", tc.open, err, tc.ok)
		}
	}
	if err := compile(t, ref(t, rules.KindThresholdVote, majorityOnThreshold, -1)).CheckWindow(deadline); err != nil {
		t.Errorf("on_threshold has no window: %v", err)
	}
}
