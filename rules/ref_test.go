package rules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

func TestParseRef(t *testing.T) {
	tr := textRef.String()
	wrap := func(kind, params string) string {
		return fmt.Sprintf(`{"kind":%q,"version":1,"params":%s,"min_notice":null,"text_ref":%q}`, kind, params, tr)
	}
	cases := []struct {
		name string
		in   string
		code dag.Code // "" = valid
	}{
		{"minimal", wrap("always_allow", `{}`), ""},
		{"html characters stay canonical", wrap("a&<b>", `{"x":"<&>"}`), ""},
		{"min_notice absent", fmt.Sprintf(`{"kind":"always_allow","version":1,"params":{},"text_ref":%q}`, tr), ""},
		{"min_notice set", fmt.Sprintf(`{"kind":"always_allow","version":1,"params":{},"min_notice":259200,"text_ref":%q}`, tr), ""},
		{"not canonical order is fine", fmt.Sprintf(`{"version":1, "kind":"always_allow","text_ref":%q,"params":{}}`, tr), ""},
		{"unknown kind parses", wrap("ranked_choice", `{}`), ""},
		{"not an object", `[]`, dag.CodeSchema},
		{"duplicate key", fmt.Sprintf(`{"kind":"always_allow","kind":"x","version":1,"params":{},"text_ref":%q}`, tr), dag.CodeSchema},
		{"unknown member", fmt.Sprintf(`{"kind":"always_allow","version":1,"params":{},"text_ref":%q,"extra":1}`, tr), dag.CodeSchema},
		{"kind missing", fmt.Sprintf(`{"version":1,"params":{},"text_ref":%q}`, tr), dag.CodeSchema},
		{"kind empty", wrap("", `{}`), dag.CodeSchema},
		{"kind not a string", fmt.Sprintf(`{"kind":1,"version":1,"params":{},"text_ref":%q}`, tr), dag.CodeSchema},
		{"version zero", fmt.Sprintf(`{"kind":"always_allow","version":0,"params":{},"text_ref":%q}`, tr), dag.CodeSchema},
		{"version float", fmt.Sprintf(`{"kind":"always_allow","version":1.5,"params":{},"text_ref":%q}`, tr), dag.CodeSchema},
		{"version too big", fmt.Sprintf(`{"kind":"always_allow","version":9007199254740992,"params":{},"text_ref":%q}`, tr), dag.CodeSchema},
		{"params missing", fmt.Sprintf(`{"kind":"always_allow","version":1,"text_ref":%q}`, tr), dag.CodeSchema},
		{"params array", wrap("always_allow", `[]`), dag.CodeSchema},
		{"params null", wrap("always_allow", `null`), dag.CodeSchema},
		{"negative notice", fmt.Sprintf(`{"kind":"always_allow","version":1,"params":{},"min_notice":-1,"text_ref":%q}`, tr), dag.CodeSchema},
		{"text_ref missing", `{"kind":"always_allow","version":1,"params":{}}`, dag.CodeSchema},
		{"text_ref upper case", wrap("always_allow", `{}`)[:0] + strings.Replace(wrap("always_allow", `{}`), tr, strings.ToUpper(tr[:10])+tr[10:], 1), dag.CodeSchema},
		{"trailing data", wrap("always_allow", `{}`) + `{}`, dag.CodeSchema},
		{"invalid utf-8", "{\"kind\":\"\xff\",\"version\":1,\"params\":{},\"text_ref\":\"" + tr + "\"}", dag.CodeSchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rules.ParseRef([]byte(tc.in))
			if got := dag.CodeOf(err); got != tc.code {
				t.Fatalf("code %q, want %q (err %v)", got, tc.code, err)
			}
			if err != nil {
				if !errors.Is(err, rules.ErrSchema) {
					t.Errorf("error %v does not wrap ErrSchema", err)
				}
				return
			}
			// Round trip: canonical out, same value back.
			b, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !dag.IsCanonical(b) {
				t.Errorf("MarshalJSON is not canonical: %s", b)
			}
			r2, err := rules.ParseRef(b)
			if err != nil {
				t.Fatalf("re-parse %s: %v", b, err)
			}
			b2, _ := r2.MarshalJSON()
			if !bytes.Equal(b, b2) {
				t.Errorf("round trip changed %s to %s", b, b2)
			}
		})
	}
}

func TestCompile(t *testing.T) {
	tv := func(params string) string { return params }
	cases := []struct {
		name   string
		kind   string
		params string
		code   dag.Code
	}{
		{"always_allow", rules.KindAlwaysAllow, `{}`, ""},
		{"always_allow takes no params", rules.KindAlwaysAllow, `{"x":1}`, dag.CodeSchema},
		{"unknown kind", "ranked_choice", `{}`, dag.CodeRuleUnknown},
		{"capital_vote unsupported", rules.KindCapitalVote, `{"budget":100,"cost":"quadratic","num":1,"den":2,"cmp":"gt","closing":"on_deadline"}`, dag.CodeRuleNotSupported},
		{"designated", rules.KindDesignatedApprovers, twoApprovers, ""},
		{"designated required 0", rules.KindDesignatedApprovers, `{"approvers":"group:c","required":0}`, dag.CodeSchema},
		{"designated not a group", rules.KindDesignatedApprovers, `{"approvers":"c","required":1}`, dag.CodeSchema},
		{"designated empty group", rules.KindDesignatedApprovers, `{"approvers":"group:","required":1}`, dag.CodeSchema},
		{"designated missing required", rules.KindDesignatedApprovers, `{"approvers":"group:c"}`, dag.CodeSchema},
		{"threshold on_threshold", rules.KindThresholdVote, majorityOnThreshold, ""},
		{"threshold on_deadline", rules.KindThresholdVote, castOnDeadline, ""},
		{"threshold reversion", rules.KindThresholdVote, reversionRule, ""},
		{"threshold reversion null", rules.KindThresholdVote, strings.Replace(majorityOnThreshold, `}`, `,"reversion":null}`, 1), ""},
		{"threshold unanimity", rules.KindThresholdVote, tv(`{"num":1,"den":1,"cmp":"gte","basis":"electorate","quorum_num":1,"quorum_den":1,"closing":"on_threshold"}`), ""},
		{"threshold num 0", rules.KindThresholdVote, `{"num":0,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, dag.CodeSchema},
		{"threshold num > den", rules.KindThresholdVote, `{"num":3,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, dag.CodeSchema},
		{"threshold bad cmp", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"ge","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, dag.CodeSchema},
		{"threshold bad basis", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"members","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, dag.CodeSchema},
		{"threshold quorum den 0", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":0,"closing":"on_threshold"}`, dag.CodeSchema},
		{"threshold quorum > 1", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":3,"quorum_den":2,"closing":"on_threshold"}`, dag.CodeSchema},
		{"threshold quorum missing", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","closing":"on_threshold"}`, dag.CodeSchema},
		{"on_threshold needs electorate basis", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, dag.CodeSchema},
		{"on_threshold takes no deadline", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold","deadline":"2026-09-24T12:00:00Z"}`, dag.CodeSchema},
		{"on_deadline needs deadline", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_deadline"}`, dag.CodeSchema},
		{"deadline not UTC", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":"2026-09-24T12:00:00+02:00"}`, dag.CodeSchema},
		{"deadline not a time", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":"soon"}`, dag.CodeSchema},
		{"deadline a number", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":259200}`, dag.CodeSchema},
		{"bad closing", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"never"}`, dag.CodeSchema},
		{"reversion bad", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold","reversion":{"num":2,"den":1}}`, dag.CodeSchema},
		{"reversion extra", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold","reversion":{"num":1,"den":1,"x":0}}`, dag.CodeSchema},
		{"threshold unknown param", rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold","weight":1}`, dag.CodeSchema},
		{"threshold float", rules.KindThresholdVote, `{"num":0.5,"den":1,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_threshold"}`, dag.CodeSchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rules.Ref{Kind: tc.kind, Version: 1, Params: json.RawMessage(tc.params), TextRef: textRef}
			rule, err := rules.Compile(r)
			if got := dag.CodeOf(err); got != tc.code {
				t.Fatalf("code %q, want %q (err %v)", got, tc.code, err)
			}
			if err == nil && rule.Kind() != tc.kind {
				t.Errorf("kind %q", rule.Kind())
			}
		})
	}
	t.Run("unknown version", func(t *testing.T) {
		_, err := rules.Compile(rules.Ref{Kind: rules.KindAlwaysAllow, Version: 2, Params: json.RawMessage(`{}`), TextRef: textRef})
		if dag.CodeOf(err) != dag.CodeRuleUnknown {
			t.Fatalf("err %v, want rule_unknown", err)
		}
	})
	t.Run("zero text_ref", func(t *testing.T) {
		_, err := rules.Compile(rules.Ref{Kind: rules.KindAlwaysAllow, Version: 1})
		if dag.CodeOf(err) != dag.CodeSchema {
			t.Fatalf("err %v, want schema", err)
		}
	})
}

func TestRuleAccessors(t *testing.T) {
	rule := compile(t, ref(t, rules.KindThresholdVote, castOnDeadline, 600))
	th, ok := rule.Threshold()
	if !ok || th.Num != 1 || th.Den != 2 || th.Cmp != rules.CmpGT || th.Basis != rules.BasisVotesCast ||
		th.QuorumNum != 1 || th.QuorumDen != 2 || th.Closing != rules.OnDeadline || !th.Deadline.Equal(deadline) || th.Reversion != nil {
		t.Errorf("threshold %+v, %v", th, ok)
	}
	if _, ok := rule.Approvers(); ok {
		t.Error("a threshold rule has approvers")
	}
	if n, ok := rule.MinNotice(); !ok || n != 600 {
		t.Errorf("min notice %d, %v", n, ok)
	}
	da := compile(t, ref(t, rules.KindDesignatedApprovers, twoApprovers, -1))
	if a, ok := da.Approvers(); !ok || a.Group != "group:committee" || a.Required != 2 {
		t.Errorf("approvers %+v, %v", a, ok)
	}
	if _, ok := da.MinNotice(); ok {
		t.Error("min notice set")
	}
	// Params come back canonical.
	r := rules.Ref{Kind: rules.KindDesignatedApprovers, Version: 1, Params: json.RawMessage(`{ "required": 2, "approvers": "group:committee" }`), TextRef: textRef}
	if got := string(compile(t, r).Ref().Params); got != twoApprovers {
		t.Errorf("params %s, want %s", got, twoApprovers)
	}
}

func TestRegistry(t *testing.T) {
	ks := rules.Kinds()
	var names []string
	for _, k := range ks {
		names = append(names, k.Kind)
		if k.Version != 1 || k.Description == "" || len(k.Closing) == 0 {
			t.Errorf("%s: incomplete entry %+v", k.Kind, k)
		}
		var schema map[string]any
		if err := json.Unmarshal(k.Params, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: params schema %s: %v", k.Kind, k.Params, err)
		}
		if !dag.IsCanonical(k.Params) {
			t.Errorf("%s: params schema is not canonical JSON", k.Kind)
		}
		got, ok := rules.Lookup(k.Kind)
		if !ok || got.Kind != k.Kind {
			t.Errorf("Lookup(%s) = %+v, %v", k.Kind, got, ok)
		}
	}
	if want := "always_allow capital_vote designated_approvers threshold_vote"; strings.Join(names, " ") != want {
		t.Errorf("kinds %v, want %s", names, want)
	}
	if got := strings.Join(rules.SupportedKinds(), " "); got != "always_allow designated_approvers threshold_vote" {
		t.Errorf("supported %s", got)
	}
	if _, ok := rules.Lookup("ranked_choice"); ok {
		t.Error("ranked_choice is reserved, not known")
	}
	// Copies: changing one does not change the registry.
	ks[0].Params[0] = 'X'
	ks[0].Closing[0] = "x"
	if k, _ := rules.Lookup(ks[0].Kind); k.Params[0] != '{' || k.Closing[0] == "x" {
		t.Error("Kinds shares memory with the registry")
	}
}

func TestDecodeBallotBody(t *testing.T) {
	mr := mrID.String()
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"minimal", fmt.Sprintf(`{"mr":%q,"choice":"approve"}`, mr), true},
		{"full", fmt.Sprintf(`{"mr":%q,"choice":"reject","weight":3,"emergency":"yes","supersedes":%q}`, mr, id("x")), true},
		{"nulls", fmt.Sprintf(`{"mr":%q,"choice":"abstain","weight":null,"emergency":null,"supersedes":null}`, mr), true},
		{"no mr", `{"choice":"approve"}`, false},
		{"bad choice", fmt.Sprintf(`{"mr":%q,"choice":"yes"}`, mr), false},
		{"bad emergency", fmt.Sprintf(`{"mr":%q,"choice":"approve","emergency":"maybe"}`, mr), false},
		{"empty emergency", fmt.Sprintf(`{"mr":%q,"choice":"approve","emergency":""}`, mr), false},
		{"negative weight", fmt.Sprintf(`{"mr":%q,"choice":"approve","weight":-1}`, mr), false},
		{"bad supersedes", fmt.Sprintf(`{"mr":%q,"choice":"approve","supersedes":"x"}`, mr), false},
		{"extra", fmt.Sprintf(`{"mr":%q,"choice":"approve","note":"hi"}`, mr), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := rules.DecodeBallotBody([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				if dag.CodeOf(err) != dag.CodeSchema {
					t.Errorf("code %s", dag.CodeOf(err))
				}
				return
			}
			out, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			b2, err := rules.DecodeBallotBody(out)
			if err != nil || b2 != b {
				t.Errorf("round trip %s: %+v, %v", out, b2, err)
			}
		})
	}
}

func TestElectorate(t *testing.T) {
	ms := members(5)
	rev := []dag.Key{ms[4], ms[2], ms[0], ms[3], ms[1]}
	e1, err := rules.NewElectorate(ms)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := rules.NewElectorate(rev)
	if err != nil {
		t.Fatal(err)
	}
	if e1.Snapshot() != e2.Snapshot() || e1.Len() != 5 {
		t.Error("snapshot depends on input order")
	}
	got := e1.Members()
	for i := 1; i < len(got); i++ {
		if got[i-1].String() >= got[i].String() {
			t.Fatalf("members not sorted by id: %v", got)
		}
	}
	// The snapshot is sha256 of the canonical JSON array of sorted ids.
	var ids []string
	for _, k := range got {
		ids = append(ids, k.String())
	}
	want, _, err := dag.HashJSON(ids)
	if err != nil || want != e1.Snapshot() {
		t.Errorf("snapshot %s, want %s (%v)", e1.Snapshot(), want, err)
	}
	if _, err := rules.NewElectorate([]dag.Key{ms[0], ms[1], ms[0]}); dag.CodeOf(err) != dag.CodeSchema {
		t.Errorf("duplicate member: %v", err)
	}
	if _, err := rules.NewElectorate([]dag.Key{{}}); dag.CodeOf(err) != dag.CodeSchema {
		t.Errorf("zero key: %v", err)
	}
	if !e1.Has(ms[3]) || e1.Has(member(7)) {
		t.Error("Has")
	}
}
