package rules_test

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

var (
	keysMu sync.Mutex
	keys   []dag.Key
)

// member returns the i-th synthetic member key, derived from a fixed seed.
func member(i int) dag.Key {
	keysMu.Lock()
	defer keysMu.Unlock()
	for len(keys) <= i {
		seed := sha256.Sum256([]byte(fmt.Sprintf("witan rules test member %d", len(keys))))
		s, err := dag.SignerFromSeed(seed[:])
		if err != nil {
			panic(err)
		}
		keys = append(keys, s.Key())
	}
	return keys[i]
}

func members(n int) []dag.Key {
	out := make([]dag.Key, n)
	for i := range out {
		out[i] = member(i)
	}
	return out
}

// id names a synthetic object by label.
func id(label string) dag.ID { return dag.Sum([]byte(label)) }

var (
	mrID    = id("mr")
	otherMR = id("another mr")
	textRef = id("rule text")
)

// ref parses a rule reference of kind with the given params JSON and
// optional min_notice (negative for null).
func ref(t tb, kind, params string, minNotice int64) rules.Ref {
	t.Helper()
	mn := "null"
	if minNotice >= 0 {
		mn = fmt.Sprint(minNotice)
	}
	r, err := rules.ParseRef([]byte(fmt.Sprintf(`{"kind":%q,"version":1,"params":%s,"min_notice":%s,"text_ref":%q}`, kind, params, mn, textRef)))
	if err != nil {
		t.Fatalf("ParseRef: %v", err)
	}
	return r
}

func compile(t tb, r rules.Ref) *rules.Rule {
	t.Helper()
	rule, err := rules.Compile(r)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return rule
}

func electorate(t tb, n int) *rules.Electorate {
	t.Helper()
	el, err := rules.NewElectorate(members(n))
	if err != nil {
		t.Fatalf("%v", err)
	}
	return el
}

// vote is a compact ballot for tables: member m casts choice c as tx
// "tx", superseding tx "sup" (empty for none).
type vote struct {
	m   int
	tx  string
	c   rules.Choice
	sup string
	em  rules.Emergency
	mr  dag.ID // zero: mrID
}

func (v vote) ballot() rules.Ballot {
	b := rules.Ballot{Tx: id(v.tx), Author: member(v.m)}
	b.MR = mrID
	if v.mr.Valid() {
		b.MR = v.mr
	}
	b.Choice = v.c
	b.Emergency = v.em
	if v.sup != "" {
		b.Supersedes = id(v.sup)
	}
	return b
}

func ballots(vs []vote) []rules.Ballot {
	out := make([]rules.Ballot, len(vs))
	for i, v := range vs {
		out[i] = v.ballot()
	}
	return out
}

// approvals returns one fresh approve ballot from each of members
// from..to-1, and similarly for the other helpers.
func many(c rules.Choice, from, to int) []vote {
	var out []vote
	for m := from; m < to; m++ {
		out = append(out, vote{m: m, tx: fmt.Sprintf("%v-%d", c, m), c: c})
	}
	return out
}

func concat(vs ...[]vote) []vote {
	var out []vote
	for _, v := range vs {
		out = append(out, v...)
	}
	return out
}

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

const (
	A = rules.Approve
	R = rules.Reject
	B = rules.Abstain
)
