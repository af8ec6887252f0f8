package fuzz

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

var rulesSeedRefs = []string{
	`{"kind":"always_allow","version":1,"params":{},"min_notice":null,"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`,
	`{"kind":"designated_approvers","version":1,"params":{"approvers":"group:committee","required":2},"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`,
	`{"kind":"threshold_vote","version":1,"params":{"num":2,"den":3,"cmp":"gte","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold","reversion":{"num":3,"den":4}},"min_notice":259200,"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`,
	`{"kind":"threshold_vote","version":1,"params":{"num":1,"den":2,"cmp":"gt","basis":"votes_cast","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":"2026-09-24T12:00:00Z"},"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`,
	`{"kind":"capital_vote","version":1,"params":{"budget":100,"cost":"quadratic","num":1,"den":2,"cmp":"gt","closing":"on_deadline"},"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`,
	`{"kind":"ranked_choice","version":1,"params":{},"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`,
}

// FuzzRulesRef: any bytes either fail ParseRef with code schema, or give a
// Ref whose canonical form parses back to itself and which Compile either
// accepts (and the compiled rule evaluates without panicking) or refuses
// with schema, rule_unknown or rule_not_supported.
func FuzzRulesRef(f *testing.F) {
	for _, s := range rulesSeedRefs {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"kind":"threshold_vote","version":1,"params":{"num":9007199254740991,"den":9007199254740991,"cmp":"gt","basis":"electorate","quorum_num":9007199254740991,"quorum_den":9007199254740991,"closing":"on_threshold"},"text_ref":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`))
	members := fuzzMembers()
	el, err := rules.NewElectorate(members)
	if err != nil {
		f.Fatal(err)
	}
	mr := dag.Sum([]byte("mr"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ref, err := rules.ParseRef(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("ParseRef error without code schema: %v", err)
			}
			return
		}
		out, err := ref.MarshalJSON() // json.Marshal would HTML-escape it
		if err != nil {
			t.Fatalf("Marshal of a parsed ref: %v", err)
		}
		if !dag.IsCanonical(out) {
			t.Fatalf("MarshalJSON is not canonical: %s", out)
		}
		again, err := rules.ParseRef(out)
		if err != nil {
			t.Fatalf("re-parse %s: %v", out, err)
		}
		if out2, _ := again.MarshalJSON(); !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed %s to %s", out, out2)
		}
		rule, err := rules.Compile(ref)
		if err != nil {
			switch dag.CodeOf(err) {
			case dag.CodeSchema, dag.CodeRuleUnknown, dag.CodeRuleNotSupported:
				return
			}
			t.Fatalf("Compile error with unexpected code: %v", err)
		}
		p := rules.NewPoll(rule, el, mr)
		for i, m := range members {
			b := rules.Ballot{Tx: dag.Sum([]byte{byte(i)}), Author: m}
			b.MR, b.Choice = mr, rules.Choice(1+i%3)
			if err := p.Add(b); err != nil {
				t.Fatal(err)
			}
		}
		res := p.Result(rules.Context{})
		switch res.Outcome {
		case rules.Approved, rules.Rejected, rules.Expired, rules.Pending:
		default:
			t.Fatalf("outcome %q", res.Outcome)
		}
		if res.Tally.Cast != uint64(len(members)) {
			t.Fatalf("tally %+v", res.Tally)
		}
	})
}

// FuzzRulesBallotBody: any bytes either fail DecodeBallotBody with code
// schema or give a body whose canonical form decodes to the same body.
func FuzzRulesBallotBody(f *testing.F) {
	f.Add([]byte(`{"mr":"sha256:79032b8a85663acddd601fd25371b7cb91f3ee6fbe68215f3cf6d4736bcbeea9","choice":"approve","supersedes":null}`))
	f.Add([]byte(`{"mr":"sha256:79032b8a85663acddd601fd25371b7cb91f3ee6fbe68215f3cf6d4736bcbeea9","choice":"reject","weight":3,"emergency":"yes","supersedes":"sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"}`))
	f.Add([]byte(`{"choice":"abstain"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := rules.DecodeBallotBody(in)
		if err != nil {
			if dag.CodeOf(err) != dag.CodeSchema {
				t.Fatalf("error without code schema: %v", err)
			}
			return
		}
		out, err := b.MarshalJSON()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if !dag.IsCanonical(out) {
			t.Fatalf("MarshalJSON is not canonical: %s", out)
		}
		b2, err := rules.DecodeBallotBody(out)
		if err != nil || b2 != b {
			t.Fatalf("round trip %s: %+v, %v", out, b2, err)
		}
	})
}

func fuzzMembers() []dag.Key {
	var out []dag.Key
	for i := range 5 {
		s, err := dag.SignerFromSeed(bytes.Repeat([]byte{byte(i + 1)}, 32))
		if err != nil {
			panic(err)
		}
		out = append(out, s.Key())
	}
	return out
}
