package house_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/rules"
	"pgregory.net/rapid"
)

// opinionSession is a session with a roster of members 0..4 (admins 0),
// observers {9}, a party group (admin 2, member 3), an MR on the root
// opened by member 1, and keys 10 and 11 registered.
type opinionSession struct {
	b                  *ht.Builder
	h                  *house.House
	txs                []ht.Tx
	mr                 dag.ID
	open, reg10, reg11 ht.Tx
}

func newOpinionSession(t *testing.T) *opinionSession {
	t.Helper()
	b := ht.New(ht.Options{Observers: true})
	s := &opinionSession{b: b, h: house.New(b.Session, b.Objects)}
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	obs := b.GroupCreate(ht.Member(0), "observers", ht.Members(9, 10), ht.Members(0, 1), roster.ID)
	party := b.GroupCreate(ht.Member(2), "party", ht.Members(2, 4), ht.Members(2, 3), obs.ID)
	var mr dag.ID
	s.open, mr = b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, party.ID)
	s.mr = mr
	s.reg10 = b.KeyRegister(ht.Member(10), s.open.ID)
	s.reg11 = b.KeyRegister(ht.Member(11), s.reg10.ID)
	for _, tx := range []ht.Tx{b.Create, roster, obs, party, s.open, s.reg10, s.reg11} {
		s.admit(t, tx, "")
	}
	return s
}

func (s *opinionSession) admit(t *testing.T, tx ht.Tx, want dag.Code) {
	t.Helper()
	err := s.h.Admit(tx.ID, tx.Env)
	if got := dag.CodeOf(err); got != want || (want == "" && err != nil) {
		t.Fatalf("%s: code %q (%v), want %q", tx.Env.Type, got, err, want)
	}
	if err == nil {
		s.txs = append(s.txs, tx)
	}
}

// age makes a member's entry a day after everything so far: the
// witnessed time every later entry sees.
func (s *opinionSession) age(t *testing.T, parents ...dag.ID) ht.Tx {
	t.Helper()
	s.b.Advance(24 * time.Hour)
	tx := s.b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k", nil), parents...)
	s.admit(t, tx, "")
	return tx
}

// TestKeyAging: a non-member key publishes once the witnessed time (the
// largest ts among member-signed entries in the opinion's causal past) is
// key_aging past its key.register's; its own ts never counts (open point
// 12, docs/deviations.md).
func TestKeyAging(t *testing.T) {
	s := newOpinionSession(t)
	b := s.b
	adv := ht.OpinionBody("advisor", "mr", s.mr.String(), nil)
	s.admit(t, b.Opinion(ht.Member(10), adv, s.reg11.ID), dag.CodeKeyTooNew)
	// The advisor's own clock a year ahead moves nothing.
	b.Advance(365 * 24 * time.Hour)
	s.admit(t, b.Opinion(ht.Member(10), adv, s.reg11.ID), dag.CodeKeyTooNew)
	// Unregistered key 12.
	s.admit(t, b.Opinion(ht.Member(12), adv, s.reg11.ID), dag.CodeKeyTooNew)
	// A member's entry a day after the registration (its ts is a year and
	// a day after, witnessed): key 10 is old enough in its future only.
	aged := s.age(t, s.reg11.ID)
	s.admit(t, b.Opinion(ht.Member(10), adv, aged.ID), "")
	s.admit(t, b.Opinion(ht.Member(10), adv, s.reg11.ID), dag.CodeKeyTooNew)
	// A key registered after the member's entry is young again.
	reg12 := b.KeyRegister(ht.Member(12), aged.ID)
	s.admit(t, reg12, "")
	s.admit(t, b.Opinion(ht.Member(12), adv, reg12.ID), dag.CodeKeyTooNew)
}

// TestOpinionAdmission: the author kinds at their causal point, over a
// real session (the pure rules have their vectors in replica/opinion).
func TestOpinionAdmission(t *testing.T) {
	s := newOpinionSession(t)
	b := s.b
	aged := s.age(t, s.reg11.ID).ID
	spec := func(kind string, extra map[string]any) map[string]any {
		return ht.OpinionBody(kind, "spec", "30k-v0.13", extra)
	}
	onMR := func(kind string, extra map[string]any) map[string]any {
		return ht.OpinionBody(kind, "mr", s.mr.String(), extra)
	}
	noFunding := ht.Full()
	delete(noFunding, "funding")
	cases := []struct {
		name   string
		signer int
		body   map[string]any
		want   dag.Code
	}{
		{"member on the MR", 1, onMR("member", nil), ""},
		{"non-member as member", 10, onMR("member", map[string]any{"disclosure": ht.Full()}), dag.CodeNotAuthorized},
		{"advisor without funding", 10, onMR("advisor", map[string]any{"disclosure": noFunding}), dag.CodeDisclosureMissing},
		{"advisor fully disclosed", 10, onMR("advisor", nil), ""},
		{"group position by its admin", 2, onMR("group", map[string]any{"on_behalf_of": "group:party", "disclosure": ht.Full()}), ""},
		{"group position by a plain member of the group", 3, onMR("group", map[string]any{"on_behalf_of": "group:party", "disclosure": ht.Full()}), dag.CodeGroupNotAuthorized},
		{"group position by an outsider", 10, onMR("group", map[string]any{"on_behalf_of": "group:party"}), dag.CodeGroupNotAuthorized},
		{"observer plain opinion on spec", 9, spec("advisor", nil), dag.CodeKeyTooNew}, // observer 9 never registered
		{"observer opinion on the MR", 9, onMR("advisor", nil), dag.CodeObserverNotAllowed},
		{"implementation on spec", 11, spec("implementation", nil), ""},
		{"implementation on the MR", 11, onMR("implementation", nil), dag.CodeSchema},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.admit(t, b.Opinion(ht.Member(c.signer), c.body, aged), c.want)
		})
	}
	// The observer registers its key and, aged, publishes on the spec.
	reg9 := b.KeyRegister(ht.Member(9), aged)
	s.admit(t, reg9, "")
	aged2 := s.age(t, reg9.ID).ID
	s.admit(t, b.Opinion(ht.Member(9), spec("advisor", nil), aged2), "")
	s.admit(t, b.Opinion(ht.Member(9), spec("advisor", map[string]any{"estimate": map[string]any{"mr": s.mr}}), aged2), dag.CodeObserverNotAllowed)
	// An observer still casts no ballot.
	s.admit(t, b.Ballot(ht.Member(9), s.mr, "approve", dag.ID{}, aged2), dag.CodeObserverNotAllowed)
}

// TestQuotesAndCorrections: a verified quote of the seed, a misquote, a
// quote of a snapshot not in the causal past, corrections by the same
// and by another author, and the views' corrected_by.
func TestQuotesAndCorrections(t *testing.T) {
	s := newOpinionSession(t)
	b := s.b
	aged := s.age(t, s.reg11.ID).ID
	seed := b.Seed.Hash().String()
	quote := func(text string) map[string]any {
		return map[string]any{"quotes": []any{map[string]any{"as_of": seed, "nid": "/us/t1/s1", "text": text}}}
	}
	first := b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), quote("period is 30 days")), aged)
	s.admit(t, first, "")
	s.admit(t, b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), quote("period is 35 days")), aged), dag.CodeQuoteMismatch)
	other := dag.Sum([]byte("a snapshot nobody has")).String()
	s.admit(t, b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), map[string]any{
		"quotes": []any{map[string]any{"as_of": other, "nid": "/us/t1/s1", "text": "period"}}}), aged), dag.CodeQuoteMismatch)
	s.admit(t, b.Opinion(ht.Member(11), ht.OpinionBody("advisor", "mr", s.mr.String(), map[string]any{"corrects": first.ID}), first.ID), dag.CodeCorrectionInvalid)
	// A correction that has not seen the original is refused too.
	s.admit(t, b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), map[string]any{"corrects": first.ID}), aged), dag.CodeCorrectionInvalid)
	fix := b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), map[string]any{"corrects": first.ID}), first.ID)
	s.admit(t, fix, "")
	v, ok := s.h.Opinion(first.ID)
	if !ok || !slices.Equal(v.CorrectedBy, []dag.ID{fix.ID}) {
		t.Fatalf("corrected_by %v, want [%s]", v.CorrectedBy, fix.ID)
	}
}

// TestOpinionsNeverChangeATally: the live tally and the state hash's
// MRs are the same with and without a flood of opinions about the MR.
func TestOpinionsNeverChangeATally(t *testing.T) {
	s := newOpinionSession(t)
	b := s.b
	b1 := b.Ballot(ht.Member(1), s.mr, "approve", dag.ID{}, s.reg11.ID)
	s.admit(t, b1, "")
	before, _ := s.h.Tally(s.mr, rules.Context{})
	last := b1.ID
	for i := 0; i < 5; i++ {
		for _, stance := range []string{"support", "oppose"} {
			tx := b.Opinion(ht.Member(i), ht.OpinionBody("member", "mr", s.mr.String(), map[string]any{"stance": stance}), last)
			s.admit(t, tx, "")
			last = tx.ID
		}
	}
	after, _ := s.h.Tally(s.mr, rules.Context{})
	bj, _ := json.Marshal(before)
	aj, _ := json.Marshal(after)
	if string(bj) != string(aj) {
		t.Fatalf("opinions changed the tally:\n%s\n%s", bj, aj)
	}
	if s.h.OpinionCount() != 10 {
		t.Fatalf("%d opinions", s.h.OpinionCount())
	}
}

// TestOpinionConvergence (rapid): the opinions' views and evaluations are
// a function of the set of entries: any causal delivery order, with
// repeats, gives the same answers byte for byte, and the same tally.
func TestOpinionConvergence(t *testing.T) {
	s := newOpinionSession(t)
	b := s.b
	aged := s.age(t, s.reg11.ID)
	ballot := b.Ballot(ht.Member(2), s.mr, "approve", dag.ID{}, aged.ID)
	s.admit(t, ballot, "")
	claim := map[string]any{"findings": []any{map[string]any{
		"target": map[string]any{"type": "ballot", "id": ballot.ID}, "claim": map[string]any{"text": "member 2 voted reject"},
		"verdict": "false", "rationale": "the ballot says approve", "evidence": []any{}, "related_quotes": []any{},
		"assertion": map[string]any{"kind": "ballot_choice", "member": ht.Member(2).Key(), "mr": s.mr, "choice": "reject"}}}}
	check := b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), claim), ballot.ID)
	s.admit(t, check, "")
	reply := b.Opinion(ht.Member(2), ht.OpinionBody("member", "opinion", check.ID.String(), map[string]any{"replies_to": check.ID}), check.ID)
	s.admit(t, reply, "")
	fix := b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "mr", s.mr.String(), map[string]any{"corrects": check.ID, "stance": "question"}), reply.ID)
	s.admit(t, fix, "")
	side := b.Opinion(ht.Member(11), ht.OpinionBody("advisor", "spec", "30k", nil), aged.ID)
	s.admit(t, side, "")
	v, _ := s.h.Opinion(check.ID)
	if !slices.Equal(v.RepliesFromSubject, []dag.ID{reply.ID}) || !slices.Equal(v.CorrectedBy, []dag.ID{fix.ID}) {
		t.Fatalf("check: replies_from_subject %v corrected_by %v", v.RepliesFromSubject, v.CorrectedBy)
	}
	answer := func(h *house.House) string {
		list, _ := h.Opinions(house.OpinionFilter{}, dag.ID{}, 100)
		var ev [][]byte
		for _, o := range list {
			r, _ := h.EvaluateOpinion(o.ID)
			j, _ := json.Marshal(r)
			ev = append(ev, j)
		}
		tally, _ := h.Tally(s.mr, rules.Context{})
		j, _ := json.Marshal(map[string]any{"opinions": list, "evaluations": ev, "tally": tally})
		return string(j)
	}
	want := answer(s.h)
	if r, _ := s.h.EvaluateOpinion(check.ID); len(r) != 1 || r[0].Result != "fails" || !r[0].Open {
		t.Fatalf("ballot_choice reject of an approve, MR open: %+v", r)
	}
	rapid.Check(t, func(rt *rapid.T) {
		order := causalShuffle(rt, s.txs)
		h := house.New(b.Session, b.Objects)
		for _, tx := range order {
			if err := h.Admit(tx.ID, tx.Env); err != nil {
				rt.Fatalf("%s: %v", tx.Env.Type, err)
			}
		}
		if got := answer(h); got != want {
			rt.Fatalf("answers differ:\n%s\n%s", got, want)
		}
		d, refused, _, err := house.Derive(b.Session, ht.Input(order...), b.Objects)
		if err != nil || len(refused) > 0 {
			rt.Fatalf("derive: %v %v", err, refused)
		}
		if got := answer(d); got != want {
			rt.Fatalf("derived answers differ:\n%s\n%s", got, want)
		}
	})
}

// causalShuffle returns txs in a random causal order, with random repeats.
func causalShuffle(t *rapid.T, txs []ht.Tx) []ht.Tx {
	done := map[dag.ID]bool{}
	var out []ht.Tx
	left := slices.Clone(txs)
	for len(left) > 0 {
		var ready []int
		for i, tx := range left {
			ok := true
			for _, p := range tx.Parents {
				ok = ok && done[p]
			}
			if ok {
				ready = append(ready, i)
			}
		}
		i := ready[rapid.IntRange(0, len(ready)-1).Draw(t, "pick")]
		tx := left[i]
		out = append(out, tx)
		if rapid.IntRange(0, 9).Draw(t, "repeat") == 0 {
			out = append(out, tx)
		}
		done[tx.ID] = true
		left = slices.Delete(left, i, i+1)
	}
	return out
}

// TestOpinionKeepsItsOwnBody: the House keeps an admitted opinion's body
// for its views, and the envelope it is given may be a slice of a larger
// buffer (a peer's sync frame, up to 4 MiB): the House keeps a copy, so
// that neither a later change to the buffer shows in its views nor the
// buffer stays alive for the opinion's few hundred bytes.
func TestOpinionKeepsItsOwnBody(t *testing.T) {
	s := newOpinionSession(t)
	aged := s.age(t, s.reg11.ID).ID
	tx := s.b.Opinion(ht.Member(1), ht.OpinionBody("member", "mr", s.mr.String(), nil), aged)
	want := slices.Clone([]byte(tx.Env.Body))
	frame := make([]byte, 1<<16)
	copy(frame[100:], tx.Env.Body)
	env := *tx.Env
	env.Body = frame[100 : 100+len(want)]
	s.admit(t, ht.Tx{ID: tx.ID, Env: &env, Bytes: tx.Bytes}, "")
	for i := range frame {
		frame[i] = 'x'
	}
	v, ok := s.h.Opinion(tx.ID)
	if !ok || string(v.Body) != string(want) {
		t.Fatalf("opinion body after its buffer changed: %q (found %v), want %q", v.Body, ok, want)
	}
}
