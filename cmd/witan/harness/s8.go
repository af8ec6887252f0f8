package harness

import (
	"fmt"
	"net/http"
)

// fullDisclosure is the disclosure every non-member kind owes (30k §8),
// declaring no funding, affiliation, AI assistance, stakes or foreign
// principal.
func fullDisclosure() map[string]any {
	return map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{},
		"ai_assistance": "none", "stakes": []any{}, "foreign_principal": nil}
}

// opinionBody is a plain opinion on the spec by an author of kind.
func opinionBody(kind, summary string, disclosure map[string]any) map[string]any {
	b := map[string]any{"subject": map[string]any{"type": "spec", "id": "30k-v0.13"}, "author_kind": kind,
		"on_behalf_of": nil, "stance": "neutral", "summary": summary, "body": "A synthetic opinion of the harness (simulated).",
		"proposes": []any{}, "replies_to": nil, "evidence": []any{}}
	if disclosure != nil {
		b["disclosure"] = disclosure
	}
	return b
}

// sameBudget is S8's check that S18 reads.
const sameBudget = "every key gets the same budget, though all declare the same affiliation (no grouping of keys)"

// s8: an opinion flood from many keys against the node's per-key rate
// limit, and disclosure enforcement.
//
// Flood: every roster member publishes S8PerKey member opinions on the
// spec, one after another. A node with a per-key limit of L per window
// accepts min(L, S8PerKey) from each key and refuses the rest
// rate_limited (429), each with a signed rejection receipt; every key gets
// the same budget (keys are never grouped, D51), though every key
// declares the same affiliation (S18: a node that rate-limits keys by
// shared affiliation fails). The share refused is the
// §10 metric. A rate_limited refusal without a signed receipt is noted,
// not failed: whether one is owed is an open point. A node with no limit accepts them all (share 0, noted).
//
// Disclosure (§3 "Equal disclosure", §8): a non-member key, registered
// with key.register, publishes advisor opinions lacking funding, lacking
// affiliations, lacking ai_assistance, and declaring ai_assistance
// "assisted" with no tool: each is refused disclosure_missing. With the
// full disclosure it is refused key_too_new (registered less than
// key_aging ago, D61), which the harness reports as the aging rule, not as
// a disclosure failure.
func s8(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S8", KeySpace: "S8"})
	r.keep(ss)
	const perKey = 12
	// Every key declares the same affiliation: a node that grouped keys
	// by shared affiliation would give them one budget (S18, D51).
	shared := fullDisclosure()
	shared["affiliations"] = []any{"Farm Bureau"}
	accepted := make([]int, len(ss.Members))
	refused, other, total, noReceipt := 0, 0, 0, 0
	var lastBad *Answer
	for k := range ss.Members {
		for j := 0; j < perKey; j++ {
			tx := ss.Tx(k, "opinion.publish", opinionBody("member", fmt.Sprintf("Opinion %d of member %d (simulated)", j, k), shared))
			a := ss.c.Submit(r.ctx, tx)
			total++
			rc, _ := Field(a.JSON, "receipt").(map[string]any)
			switch {
			case a.Status == http.StatusOK && Str(rc, "status") == "accepted" && Str(rc, "tx") == tx.ID && VerifySigned(rc, ReceiptDomain, "node"):
				accepted[k]++
				ss.Last = []string{tx.ID}
			case a.Status == http.StatusTooManyRequests && Str(a.JSON, "code") == "rate_limited":
				refused++
				if rc == nil || Str(rc, "status") != "rejected" || !VerifySigned(rc, ReceiptDomain, "node") {
					noReceipt++
				}
			default:
				other++
				lastBad = a
			}
		}
	}
	s.check("every opinion of the flood is accepted or refused rate_limited (429)", other == 0, lastBad, "%d other answers", other)
	if noReceipt > 0 {
		// §5 says POST /transactions returns a receipt, and D40 lets the
		// refusal log summarize rate_limited refusals; whether a
		// rate-limited submission is owed a signed receipt is open
		// (docs/opinions.md).
		r.note("S8: %d rate_limited refusals carried no signed receipt", noReceipt)
	}
	same := true
	for _, n := range accepted {
		same = same && n == accepted[0]
	}
	s.check(sameBudget, same, nil, "accepted per key %v", accepted)
	share := float64(refused) / float64(total)
	r.rep.Metrics.S8RateLimitedShare = &share
	r.note("S8: %d opinions from %d keys (%d each), %d accepted per key, %d refused rate_limited", total, len(ss.Members), perKey, accepted[0], refused)
	if refused == 0 {
		r.note("S8: the node refused no opinion of the flood rate_limited; its capability says: %s", Str(r.caps[0], "opinion_rate_limit"))
	}
	// Disclosure.
	adv := NewSigner(fmt.Sprintf("witan harness %s run %s advisor", r.cfg.Seed, r.cfg.RunID))
	ss.Accept(ss.TxBy(adv, "key.register", map[string]any{"key": adv.Key}))
	for _, c := range []struct {
		what string
		edit func(d map[string]any)
	}{
		{"an advisor opinion without funding", func(d map[string]any) { delete(d, "funding") }},
		{"an advisor opinion without affiliations", func(d map[string]any) { delete(d, "affiliations") }},
		{"an advisor opinion without ai_assistance", func(d map[string]any) { delete(d, "ai_assistance") }},
		{"an advisor opinion with ai_assistance assisted and no tool", func(d map[string]any) { d["ai_assistance"] = "assisted" }},
	} {
		d := fullDisclosure()
		c.edit(d)
		ss.Refuse(ss.TxBy(adv, "opinion.publish", opinionBody("advisor", "An advisor's view (simulated)", d)), "disclosure_missing", c.what)
	}
	ss.Refuse(ss.TxBy(adv, "opinion.publish", opinionBody("advisor", "An advisor's view (simulated)", fullDisclosure())), "key_too_new", "a fully disclosed opinion by a key registered just now")
	s.converge(ss)
}
