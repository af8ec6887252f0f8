package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/sync"
)

// opSession is an S13-like session on a node: a roster of ten (member 0
// admin), observers {9}, a party (admin 2, member 3), the draft branch
// changing section 1's "30 days" to "45 days", an MR whose summary says
// 35, keys 9, 10 and 11 registered, and a member's entry a day later so
// that those keys are aged (D61, open point 12).
type opSession struct {
	*session
	txs []ht.Tx // every accepted envelope, in order
}

func (n *apiNode) opAccept(t *testing.T, s *opSession, tx ht.Tx) {
	t.Helper()
	n.submit(t, s.session, tx)
	s.txs = append(s.txs, tx)
}

// refuse submits tx and checks the problem's status and code; nothing of
// it is stored.
func (n *apiNode) opRefuse(t *testing.T, tx ht.Tx, status int, code dag.Code) {
	t.Helper()
	atts := make([]json.RawMessage, 0, len(tx.Attach))
	for _, a := range tx.Attach {
		atts = append(atts, a)
	}
	body, err := json.Marshal(httpapi.Transaction{Envelope: tx.Bytes, Attachments: atts})
	if err != nil {
		t.Fatal(err)
	}
	n.problem(t, "POST", httpapi.Base+"/transactions", "application/json", bytes.NewReader(body), status, code)
	if _, err := n.node.Get(context.Background(), tx.ID); err == nil {
		t.Fatalf("refused %s was stored", tx.ID)
	}
}

func (n *apiNode) newOpSession(t *testing.T) *opSession {
	t.Helper()
	b := ht.New(ht.Options{Simulation: true, Observers: true})
	s := &opSession{session: &session{b: b, space: b.Session.String()}}
	n.opAccept(t, s, b.Create)
	n.opAccept(t, s, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	n.opAccept(t, s, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	n.opAccept(t, s, b.GroupCreate(ht.Member(0), "observers", []dag.Key{}, ht.Members(0, 1), s.last))
	n.opAccept(t, s, b.GroupCreate(ht.Member(2), "party", ht.Members(2, 4), ht.Members(2, 3), s.last))
	n.opAccept(t, s, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	n.opAccept(t, s, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, s.last)
	n.opAccept(t, s, tx)
	s.change = change
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Extends the period to 35 days"}, s.last)
	n.opAccept(t, s, open)
	s.mr, s.opened = mr, open.ID
	for _, k := range []int{10, 11, 12} {
		n.opAccept(t, s, b.KeyRegister(ht.Member(k), s.last))
	}
	b.Advance(25 * time.Hour)
	n.opAccept(t, s, b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k-v0.13", nil), s.last))
	return s
}

// TestOpinionsOverHTTP drives the opinion layer over a real listener with
// envelopes signed in the test: every refusal code of the issue, the
// accepted cases, S13's fact-check loop with its ballot_choice assertion
// provisional and then final_advisory, corrected_by and the member's
// reply, stakes in /tally, anchor_drift in /facts, /objects, paging and
// the ClaimReview view.
func TestOpinionsOverHTTP(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newOpSession(t)
	b := s.b
	onMR := func(kind string, extra map[string]any) map[string]any {
		return ht.OpinionBody(kind, "mr", s.mr.String(), extra)
	}
	seed := b.Seed.Hash().String()
	quote := func(text string) map[string]any {
		return map[string]any{"as_of": seed, "nid": "/us/t1/s1", "text": text}
	}

	// Disclosure (§8): an advisor without funding.
	noFunding := ht.Full()
	delete(noFunding, "funding")
	n.opRefuse(t, b.Opinion(ht.Member(10), onMR("advisor", map[string]any{"disclosure": noFunding}), s.last), 422, dag.CodeDisclosureMissing)
	// A key registered after the aging entry is too new.
	n.opAccept(t, s, b.KeyRegister(ht.Member(13), s.last))
	n.opRefuse(t, b.Opinion(ht.Member(13), onMR("advisor", nil), s.last), 422, dag.CodeKeyTooNew)
	// Group positions (D37): a plain member of the party, then its admin.
	n.opRefuse(t, b.Opinion(ht.Member(3), onMR("group", map[string]any{"on_behalf_of": "group:party", "disclosure": ht.Full()}), s.last), 403, dag.CodeGroupNotAuthorized)
	n.opAccept(t, s, b.Opinion(ht.Member(2), onMR("group", map[string]any{"on_behalf_of": "group:party", "disclosure": ht.Full()}), s.last))

	// S13: member 5 approves; a misquote is refused; a finding with a
	// verified quote says member 5 voted reject.
	ballot := b.Ballot(ht.Member(5), s.mr, "approve", dag.ID{}, s.last)
	n.opAccept(t, s, ballot)
	n.opRefuse(t, b.Opinion(ht.Member(10), onMR("advisor", map[string]any{"quotes": []any{quote("period is 35 days")}}), s.last), 422, dag.CodeQuoteMismatch)
	check := b.Opinion(ht.Member(10), onMR("advisor", map[string]any{
		"quotes": []any{quote("period is 30 days")},
		"findings": []any{map[string]any{
			"target": map[string]any{"type": "ballot", "id": ballot.ID}, "claim": map[string]any{"quote": 0, "text": "member 5 voted to keep 30 days"},
			"verdict": "false", "rationale": "the ballot approves", "evidence": []any{}, "related_quotes": []any{},
			"assertion": map[string]any{"kind": "ballot_choice", "member": ht.Member(5).Key(), "mr": s.mr, "choice": "reject"}}}}), s.last)
	n.opAccept(t, s, check)
	evPath := "/opinions/" + check.ID.String() + "/evaluation"
	ev := n.getMap(t, evPath, nil)
	res := ev["results"].([]any)
	if len(res) != 2 || ev["authoritative"] != false || ev["simulation"] != true {
		t.Fatalf("evaluation %v", ev)
	}
	q0, a0 := res[0].(map[string]any), res[1].(map[string]any)
	if q0["kind"] != "quote" || q0["result"] != "holds" || a0["kind"] != "assertion" || a0["result"] != "fails" || a0["finality"] != "provisional" {
		t.Fatalf("evaluation results %v", res)
	}
	// Corrections (D25): by another author, then by the author.
	n.opRefuse(t, b.Opinion(ht.Member(11), onMR("advisor", map[string]any{"corrects": check.ID}), s.last), 422, dag.CodeCorrectionInvalid)
	fix := b.Opinion(ht.Member(10), onMR("advisor", map[string]any{"corrects": check.ID, "summary": "rationale reworded"}), s.last)
	n.opAccept(t, s, fix)
	// The checked member replies.
	reply := b.Opinion(ht.Member(5), ht.OpinionBody("member", "opinion", check.ID.String(), map[string]any{"replies_to": check.ID, "stance": "oppose"}), s.last)
	n.opAccept(t, s, reply)
	var got httpapi.OpinionAnswer
	if err := n.c.Get(ctx, "/opinions/"+check.ID.String(), nil, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.CorrectedBy, []dag.ID{fix.ID}) || !slices.Equal(got.RepliesFromSubject, []dag.ID{reply.ID}) ||
		got.Author != ht.Member(10).Key() || got.AuthorKind != "advisor" || got.Finality != "provisional" {
		t.Fatalf("opinion %+v", got)
	}

	// Observers (D78, S22): a plain opinion on the spec, but not on the MR.
	n.opAccept(t, s, b.GroupUpdate(ht.Member(0), "observers", []dag.Key{ht.Member(12).Key()}, ht.Members(0, 1), s.last))
	n.opRefuse(t, b.Opinion(ht.Member(12), onMR("advisor", nil), s.last), 403, dag.CodeObserverNotAllowed)
	n.opRefuse(t, b.Opinion(ht.Member(12), ht.OpinionBody("advisor", "spec", "30k-v0.13", map[string]any{"estimate": map[string]any{"mr": s.mr}}), s.last), 403, dag.CodeObserverNotAllowed)
	n.opAccept(t, s, b.Opinion(ht.Member(12), ht.OpinionBody("advisor", "spec", "30k-v0.13", nil), s.last))

	// Stakes (D32): member 5's latest declaration sits next to the ballot.
	stakes := map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{}, "ai_assistance": "none",
		"stakes": []any{map[string]any{"subject": s.mr, "direction": "yes", "venue": "a simulated market", "size_band": "<1k"}}, "foreign_principal": nil}
	n.opAccept(t, s, b.Opinion(ht.Member(5), onMR("member", map[string]any{"disclosure": stakes, "stance": "support"}), s.last))
	tal := n.getMap(t, "/merge-requests/"+s.mr.String()+"/tally", nil)
	st := tal["stakes"].([]any)
	if len(st) != 1 || st[0].(map[string]any)["member"] != ht.Member(5).Key().String() || st[0].(map[string]any)["choice"] != "approve" {
		t.Fatalf("tally stakes %v", tal["stakes"])
	}
	if tal["result"].(map[string]any)["tally"].(map[string]any)["approve"] != float64(1) {
		t.Fatalf("opinions changed the tally: %v", tal["result"])
	}

	// Formalization (D28) anchored on section 1; the MR modifies it.
	src := []byte(`{"catala":"scope Notice: definition period equals 30 day"}`)
	form := b.Sign(ht.Member(11), dag.TxOpinionPublish, onMR("advisor", map[string]any{"quotes": []any{quote("period is 30 days")},
		"formalization": map[string]any{"language": "catala", "language_version": "0.9", "source": dag.Sum(src),
			"anchors": []any{map[string]any{"rule": "period", "quote": 0}}, "terms": []any{"term:/us/t1#period"}}}), []dag.ID{s.last}, src)
	noSrc := form
	noSrc.Attach = nil
	n.opRefuse(t, noSrc, 422, dag.CodeUnknownParent)
	n.opAccept(t, s, form)
	facts := n.getMap(t, "/merge-requests/"+s.mr.String()+"/facts", nil)["facts"].(map[string]any)
	drift := facts["anchor_drift"].([]any)
	if len(drift) != 1 || drift[0].(map[string]any)["formalization"] != form.ID.String() || drift[0].(map[string]any)["nids"].([]any)[0] != "/us/t1/s1" {
		t.Fatalf("anchor_drift %v", facts["anchor_drift"])
	}

	// Every opinion through /objects.
	obj := n.getMap(t, "/objects/"+check.ID.String(), nil)
	if obj["kind"] != "entry" || obj["space"] != s.space {
		t.Fatalf("/objects %v", obj)
	}
	// Paging: one at a time, in tx id order, every opinion once.
	var ids []string
	q := url.Values{"limit": {"1"}}
	for {
		var page httpapi.OpinionsAnswer
		if err := n.c.Get(ctx, "/opinions", q, &page); err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Opinions {
			ids = append(ids, o.ID.String())
		}
		if page.Next == nil {
			break
		}
		q.Set("after", *page.Next)
	}
	if len(ids) != 8 || !slices.IsSorted(ids) {
		t.Fatalf("paged %d opinions: %v", len(ids), ids)
	}
	var byAuthor httpapi.OpinionsAnswer
	if err := n.c.Get(ctx, "/opinions", url.Values{"author": {ht.Member(10).Key().String()}, "kind": {"advisor"}}, &byAuthor); err != nil {
		t.Fatal(err)
	}
	if len(byAuthor.Opinions) != 2 {
		t.Fatalf("by author: %d", len(byAuthor.Opinions))
	}
	var bySubject httpapi.OpinionsAnswer
	if err := n.c.Get(ctx, "/opinions", url.Values{"subject": {check.ID.String()}}, &bySubject); err != nil {
		t.Fatal(err)
	}
	if len(bySubject.Opinions) != 1 || bySubject.Opinions[0].ID != reply.ID {
		t.Fatalf("by subject: %+v", bySubject.Opinions)
	}
	cr := n.getMap(t, "/opinions/"+check.ID.String()+"/claim-review", nil)
	rv := cr["claim_reviews"].([]any)[0].(map[string]any)
	if rv["@type"] != "ClaimReview" || rv["reviewRating"].(map[string]any)["alternateName"] != "false" {
		t.Fatalf("claim review %v", cr)
	}

	// S13: determined, executed and checkpointed, the assertion is
	// final_advisory (still fails).
	var ballots []dag.ID
	ballots = append(ballots, ballot.ID)
	for i := 0; i < 5; i++ {
		tx := b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.opAccept(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	n.opAccept(t, s, b.Determine(ht.Member(0), s.mr, ballots, "approved", s.last))
	if a := n.getMap(t, evPath, nil)["results"].([]any)[1].(map[string]any); a["finality"] != "provisional" {
		t.Fatalf("before the checkpoint: %v", a)
	}
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	ev = n.getMap(t, evPath, nil)
	if a := ev["results"].([]any)[1].(map[string]any); a["result"] != "fails" || a["finality"] != "final_advisory" || ev["finality"] != "final_advisory" {
		t.Fatalf("after the checkpoint: %v", ev)
	}
	var page httpapi.OpinionsAnswer
	if err := n.c.Get(ctx, "/opinions", url.Values{"author": {ht.Member(10).Key().String()}}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Opinions) != 2 || page.Opinions[0].Finality != "final_advisory" || page.Finality != "final_advisory" {
		t.Fatalf("checkpointed opinions: %+v", page)
	}
	n.problem(t, "GET", httpapi.Base+"/opinions/"+dag.Sum(nil).String()+"/evaluation", "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/opinions?author=nobody", "", nil, 400, dag.CodeSchema)

	// Two replicas fed the same entries in different causal orders, as a
	// peer would (Ingest), answer /evaluation byte for byte alike.
	rng := rand.New(rand.NewPCG(1, 2))
	var answers []string
	for k := 0; k < 2; k++ {
		m := newNode(t)
		order := slices.Clone(s.txs)
		// A random causal order: every tx here has one parent, the one
		// before, so shuffle and let the replica hold what waits.
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var items []sync.Item
		for _, tx := range order {
			it := sync.Item{Data: tx.Bytes}
			for _, a := range tx.Attach {
				it.Objects = append(it.Objects, dag.NewObject(a))
			}
			items = append(items, it)
		}
		if _, err := m.node.Ingest(ctx, s.space, items); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, rawGet(t, m, evPath+"?session="+s.space))
	}
	if answers[0] != answers[1] {
		t.Fatalf("two replicas answer differently:\n%s\n%s", answers[0], answers[1])
	}
}

func rawGet(t *testing.T, n *apiNode, path string) string {
	t.Helper()
	resp, err := http.Get(n.srv.URL + httpapi.Base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestOpinionRateLimit: a per-key limit on what HTTP clients submit
// (rate_limited, 429), its description and its count in the capability
// document; another key keeps its own budget.
func TestOpinionRateLimit(t *testing.T) {
	n := newNode(t)
	clk := time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)
	srv, err := httpapi.New(httpapi.Options{Node: n.node, OpinionRateLimit: httpapi.OpinionLimit{PerKey: 1, Window: time.Hour, Now: func() time.Time { return clk }}})
	if err != nil {
		t.Fatal(err)
	}
	n.srv.Config.Handler = srv
	s := n.newOpSession(t)
	b := s.b
	n.opRefuse(t, b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "x", nil), s.last), 429, dag.CodeRateLimited)
	n.opAccept(t, s, b.Opinion(ht.Member(5), ht.OpinionBody("member", "spec", "x", nil), s.last))
	clk = clk.Add(time.Hour)
	n.opAccept(t, s, b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "y", nil), s.last))
	var c httpapi.Capability
	if err := n.c.Get(context.Background(), "/.well-known/oth", nil, &c); err != nil {
		t.Fatal(err)
	}
	if c.OpinionPolicy != "open" || c.RateLimited != 1 || c.KeyAging != 86400 || len(c.AssertionKinds) != 5 {
		t.Fatalf("capability %+v", c)
	}
}

// TestOriginOverHTTP (S16, D36): text an advisor and a party proposed,
// later appended by a member, appears in the MR's origin with each
// opinion; an opinion that proposed it only after the append does not.
func TestOriginOverHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	gen := b.Trees[b.Genesis]
	ops := []statute.Op{ht.Replace(gen, "/us/t1/s2", "The period is 60 days.")}
	res, err := statute.Apply(gen, ops)
	if err != nil {
		t.Fatal(err)
	}
	c := &statute.Change{Base: gen.Hash(), Ops: ops, Result: res.Hash(), Parents: []dag.ID{b.Genesis}, Message: "proposed", Author: ht.Member(10).Key().String()}
	raw, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	attach := [][]byte{raw}
	for _, o := range res.Objects() {
		attach = append(attach, o.Canonical())
	}
	proposes := map[string]any{"proposes": []any{dag.Sum(raw)}, "stance": "amend"}
	early := b.Sign(ht.Member(10), dag.TxOpinionPublish, ht.OpinionBody("advisor", "mr", s.mr.String(), proposes), []dag.ID{s.last}, attach...)
	bare := early
	bare.Attach = nil
	n.opRefuse(t, bare, 422, dag.CodeUnknownParent)
	n.opAccept(t, s, early)
	party := ht.OpinionBody("group", "mr", s.mr.String(), proposes)
	party["on_behalf_of"] = "group:party"
	byParty := b.Opinion(ht.Member(2), party, s.last)
	n.opAccept(t, s, byParty)
	app, change := b.Append(ht.Member(2), "draft", s.change, []statute.Op{ht.Replace(b.Trees[s.change], "/us/t1/s2", "The period is 60 days.")}, s.last)
	n.opAccept(t, s, app)
	late := b.Sign(ht.Member(11), dag.TxOpinionPublish, ht.OpinionBody("advisor", "mr", s.mr.String(), proposes), []dag.ID{s.last}, attach...)
	n.opAccept(t, s, late)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "45 and 60 days"}, s.last)
	n.opAccept(t, s, open)
	facts := n.getMap(t, "/merge-requests/"+mr.String()+"/facts", nil)["facts"].(map[string]any)
	origin := facts["origin"].([]any)
	want := map[string]string{early.ID.String(): "advisor", byParty.ID.String(): "group"}
	if len(origin) != 2 {
		t.Fatalf("origin %v", origin)
	}
	for _, o := range origin {
		m := o.(map[string]any)
		kind, ok := want[m["opinion"].(string)]
		if !ok || m["nid"] != "/us/t1/s2" || m["author_kind"] != kind {
			t.Fatalf("origin entry %v", m)
		}
		if kind == "group" && m["on_behalf_of"] != "group:party" {
			t.Fatalf("group origin %v", m)
		}
	}
}
