package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// handlerSwap lets two servers name each other's URL before either
// handler exists.
type handlerSwap struct{ h http.Handler }

func (s *handlerSwap) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// reportPair starts two nodes with distinct node keys (seeds 21 and 22),
// each configured to ask the other for resolution reports.
func reportPair(t *testing.T) (a, b *apiNode) {
	t.Helper()
	var swaps [2]*handlerSwap
	var srvs [2]*httptest.Server
	for i := range srvs {
		swaps[i] = &handlerSwap{}
		srvs[i] = httptest.NewServer(swaps[i])
	}
	var out [2]*apiNode
	for i := range out {
		key, err := dag.SignerFromSeed(bytes.Repeat([]byte{byte(21 + i)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		clk := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
		l, err := node.Open(context.Background(), node.Options{InMemory: true, NodeKey: key, Clock: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		s, err := httpapi.New(httpapi.Options{Node: l, MaxBodyBytes: 1 << 20, LoopbackOperator: true, ReportPeers: []string{srvs[1-i].URL}})
		if err != nil {
			t.Fatal(err)
		}
		swaps[i].h = s
		srv := srvs[i]
		t.Cleanup(func() { srv.Close(); l.Close() })
		out[i] = &apiNode{node: l, srv: srv, c: &httpapi.Client{BaseURL: srv.URL}, clk: clk}
	}
	return out[0], out[1]
}

func checkpoint(t *testing.T, n *apiNode, space string) string {
	t.Helper()
	cp, err := n.node.Replica().Checkpoint(context.Background(), dag.MustParseID(space))
	if err != nil {
		t.Fatal(err)
	}
	return cp.Root.String()
}

// evalOf GETs an opinion's evaluation and returns its "resolution" part,
// its results and its finality.
func evalOf(t *testing.T, n *apiNode, space string, id dag.ID) (res map[string]any, results []any, fin string) {
	t.Helper()
	ev := n.getMap(t, "/opinions/"+id.String()+"/evaluation", url.Values{"session": {space}})
	if ev["authoritative"] != false || ev["simulation"] != true {
		t.Fatalf("evaluation labels: %v", ev)
	}
	res, _ = ev["resolution"].(map[string]any)
	return res, ev["results"].([]any), ev["finality"].(string)
}

func resultOf(t *testing.T, results []any, kind string) (string, string) {
	t.Helper()
	for _, r := range results {
		m := r.(map[string]any)
		if m["kind"] == kind {
			return m["result"].(string), m["finality"].(string)
		}
	}
	t.Fatalf("no %s result in %v", kind, results)
	return "", ""
}

// TestS15MarketsOverHTTP drives 30k S15 over two real listeners with
// envelopes signed in the test: a resolution spec on an MR's outcome
// stays unresolved while the reports are provisional and resolves
// identically on both listed nodes once each has checkpointed; a spec
// requiring final from witan (eventual) nodes is unsatisfiable; a
// non-member opinion without stakes is refused; a member's stake sits
// beside their ballot; forecasts resolve holds and fails; a ranking by
// approve_share holds on both nodes and one with two items swapped
// fails; /stats answers as of a checkpoint; no answer carries odds.
// Expected values are worked out by hand from the ballots cast below.
func TestS15MarketsOverHTTP(t *testing.T) {
	a, b := reportPair(t)
	s := a.newOpSession(t)
	bl := s.b
	space := s.space
	keyA, keyB := a.node.Replica().NodeKey().String(), b.node.Replica().NodeKey().String()
	outcome := map[string]any{"kind": "mr_outcome", "mr": s.mr, "outcome": "approved"}
	onMR := func(kind string, extra map[string]any) map[string]any {
		return ht.OpinionBody(kind, "mr", s.mr.String(), extra)
	}
	spec := func(question, finality string, nodes []string, minAgree int) map[string]any {
		return onMR("member", map[string]any{"resolution": map[string]any{"question": question, "assertion": outcome,
			"finality": finality, "nodes": nodes, "min_agree": minAgree}})
	}

	// Refusals: the simulated word (D54), a malformed spec, an unknown
	// assertion kind inside one; a non-member opinion without stakes.
	a.opRefuse(t, bl.Opinion(ht.Member(4), spec("Will the MR be approved?", "final_advisory", []string{keyA, keyB}, 2), s.last), 422, dag.CodeResolutionInvalid)
	a.opRefuse(t, bl.Opinion(ht.Member(4), spec("Will the simulated MR pass?", "final_advisory", []string{keyA, keyB}, 3), s.last), 422, dag.CodeResolutionInvalid)
	a.opRefuse(t, bl.Opinion(ht.Member(4), spec("Will the simulated MR pass?", "final", []string{keyA, keyA}, 1), s.last), 422, dag.CodeResolutionInvalid)
	odd := spec("Will the simulated MR pass?", "final_advisory", []string{keyA}, 1)
	odd["resolution"].(map[string]any)["assertion"] = map[string]any{"kind": "odds", "mr": s.mr}
	a.opRefuse(t, bl.Opinion(ht.Member(4), odd, s.last), 422, dag.CodeAssertionUnknown)
	// An observer ranks nothing (D78, S22).
	a.opAccept(t, s, bl.GroupUpdate(ht.Member(0), "observers", []dag.Key{ht.Member(12).Key()}, ht.Members(0, 1), s.last))
	a.opRefuse(t, bl.Opinion(ht.Member(12), ht.OpinionBody("advisor", "spec", "30k-v0.13", map[string]any{"ranking": map[string]any{"metric": "turnout",
		"scope_type": "mr", "filter": map[string]any{"session": space}, "as_of": s.last, "order": "desc", "items": []any{map[string]any{"id": s.mr, "value": "0/10"}}}}), s.last), 403, dag.CodeObserverNotAllowed)
	noStakes := ht.Full()
	delete(noStakes, "stakes")
	a.opRefuse(t, bl.Opinion(ht.Member(10), onMR("advisor", map[string]any{"disclosure": noStakes}), s.last), 422, dag.CodeDisclosureMissing)

	// The specs, accepted.
	both := bl.Opinion(ht.Member(4), spec("Will the simulated MR be approved?", "final_advisory", []string{keyA, keyB}, 2), s.last)
	a.opAccept(t, s, both)
	finalBoth := bl.Opinion(ht.Member(4), spec("Simulated: approved with final finality?", "final", []string{keyA, keyB}, 1), s.last)
	a.opAccept(t, s, finalBoth)

	// A member's stake beside their ballot (D32).
	stake := map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{}, "ai_assistance": "none",
		"stakes": []any{map[string]any{"subject": s.mr, "direction": "yes", "venue": "a simulated market", "size_band": "<1k"}}, "foreign_principal": nil}
	a.opAccept(t, s, bl.Opinion(ht.Member(5), onMR("member", map[string]any{"disclosure": stake, "stance": "support"}), s.last))

	// A second MR from the same change, to rank against.
	open2, mr2 := bl.Open(ht.Member(2), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: bl.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "The same change, asked again"}, s.last)
	a.opAccept(t, s, open2)

	// Forecasts (D34) change nothing in the MR's views: the views before
	// and after are byte for byte the same.
	mrPath, talPath := "/merge-requests/"+s.mr.String(), "/merge-requests/"+s.mr.String()+"/tally"
	mrBefore, talBefore := rawGet(t, a, mrPath), rawGet(t, a, talPath)
	fcYes := bl.Opinion(ht.Member(6), onMR("member", map[string]any{"forecast": map[string]any{"assertion": outcome, "p_num": 3, "p_den": 4, "as_of": dag.Sum([]byte("a root"))}}), s.last)
	a.opAccept(t, s, fcYes)
	fcNo := bl.Opinion(ht.Member(7), onMR("member", map[string]any{"forecast": map[string]any{"assertion": map[string]any{"kind": "mr_outcome", "mr": s.mr, "outcome": "rejected"},
		"p_num": 1, "p_den": 3, "as_of": dag.Sum([]byte("a root"))}}), s.last)
	a.opAccept(t, s, fcNo)
	if rawGet(t, a, mrPath) != mrBefore || rawGet(t, a, talPath) != talBefore {
		t.Fatal("publishing forecasts changed the MR's views")
	}
	for _, p := range []string{mrBefore, talBefore} {
		if strings.Contains(p, "odds") || strings.Contains(p, "forecast") || strings.Contains(p, "p_num") {
			t.Fatalf("an MR view carries forecasts or odds: %s", p)
		}
	}
	a.opRefuse(t, bl.Opinion(ht.Member(7), onMR("member", map[string]any{"forecast": map[string]any{"assertion": outcome, "p_num": 5, "p_den": 4, "as_of": dag.Sum(nil)}}), s.last), 400, dag.CodeSchema)
	if r, f := resultOf(t, func() []any { _, r, _ := evalOf(t, a, space, fcYes.ID); return r }(), "forecast"); r != "undetermined" || f != "provisional" {
		t.Fatalf("forecast before the determination: %s %s", r, f)
	}

	// Ballots: MR 1 gets 6 approvals (members 0-5) and 1 rejection
	// (member 6): approve_share 6/7. MR 2 gets 2 approvals (0, 1) and 3
	// rejections (2, 3, 4): 2/5. Electorate 10 each.
	var ballots1 []dag.ID
	for i := 0; i < 7; i++ {
		choice := "approve"
		if i == 6 {
			choice = "reject"
		}
		tx := bl.Ballot(ht.Member(i), s.mr, choice, dag.ID{}, s.last)
		a.opAccept(t, s, tx)
		ballots1 = append(ballots1, tx.ID)
	}
	for i := 0; i < 5; i++ {
		choice := "approve"
		if i >= 2 {
			choice = "reject"
		}
		a.opAccept(t, s, bl.Ballot(ht.Member(i), mr2, choice, dag.ID{}, s.last))
	}
	tal := a.getMap(t, talPath, nil)
	st := tal["stakes"].([]any)
	if len(st) != 1 || st[0].(map[string]any)["member"] != ht.Member(5).Key().String() || st[0].(map[string]any)["choice"] != "approve" {
		t.Fatalf("tally stakes %v", tal["stakes"])
	}
	det := bl.Determine(ht.Member(0), s.mr, ballots1, "approved", s.last)
	a.opAccept(t, s, det)

	// Rankings (D35), as of the determination (a causal cut every
	// replica holding it reads alike): MR 1 (6/7) above MR 2 (2/5).
	ranking := func(items []any, metric string) map[string]any {
		return ht.OpinionBody("member", "session", space, map[string]any{"ranking": map[string]any{"metric": metric, "scope_type": "mr",
			"filter": map[string]any{"session": space}, "as_of": det.ID, "order": "desc", "items": items}})
	}
	good := bl.Opinion(ht.Member(8), ranking([]any{map[string]any{"id": s.mr, "value": "6/7"}, map[string]any{"id": mr2, "value": "2/5"}}, "approve_share"), s.last)
	a.opAccept(t, s, good)
	swapped := bl.Opinion(ht.Member(8), ranking([]any{map[string]any{"id": mr2, "value": "2/5"}, map[string]any{"id": s.mr, "value": "6/7"}}, "approve_share"), s.last)
	a.opAccept(t, s, swapped)
	a.opRefuse(t, bl.Opinion(ht.Member(8), ranking([]any{map[string]any{"id": s.mr, "value": "1/2"}}, "popularity"), s.last), 422, dag.CodeMetricUnknown)

	// Everything on b, over HTTP federation; nothing checkpointed yet.
	pull(t, b, a)
	for _, n := range []*apiNode{a, b} {
		res, results, fin := evalOf(t, n, space, both.ID)
		if res["result"] != "unresolved" || res["finality"] != "provisional" || fin != "provisional" {
			t.Fatalf("before any checkpoint: %v", res)
		}
		reps := res["reports"].([]any)
		if len(reps) != 2 {
			t.Fatalf("reports %v", reps)
		}
		for _, r := range reps {
			m := r.(map[string]any)
			if m["assertion"] != "holds" || m["finality"] != "provisional" || m["consistency"] != "eventual" {
				t.Fatalf("a provisional report: %v", m)
			}
		}
		if r, _ := resultOf(t, results, "resolution"); r != "unresolved" {
			t.Fatalf("results: %v", results)
		}
		// Requiring final from two eventual nodes: unsatisfiable.
		res, _, _ = evalOf(t, n, space, finalBoth.ID)
		if res["result"] != "unsatisfiable" {
			t.Fatalf("a spec requiring final from witan nodes: %v", res)
		}
	}

	// No checkpoint yet: /stats answers over the whole record, provisional.
	if m := a.getMap(t, "/stats", url.Values{"metric": {"mrs_opened"}}); m["value"] != float64(2) || m["as_of"] != nil || m["finality"] != "provisional" {
		t.Fatalf("/stats before any checkpoint: %v", m)
	}

	// a checkpoints: its own report is final_advisory, b's is not yet.
	rootA := checkpoint(t, a, space)
	if res, _, _ := evalOf(t, a, space, both.ID); res["result"] != "unresolved" {
		t.Fatalf("one of two listed nodes checkpointed: %v", res)
	}
	checkpoint(t, b, space)
	var answers []string
	for _, n := range []*apiNode{a, b} {
		res, results, fin := evalOf(t, n, space, both.ID)
		if res["result"] != "resolved_true" || res["finality"] != "final_advisory" || fin != "final_advisory" {
			t.Fatalf("both checkpointed: %v (%s)", res, fin)
		}
		for _, r := range res["reports"].([]any) {
			if m := r.(map[string]any); m["finality"] != "final_advisory" || m["assertion"] != "holds" {
				t.Fatalf("a checkpointed report: %v", m)
			}
		}
		answers = append(answers, res["result"].(string))
		if r, f := resultOf(t, results, "resolution"); r != "resolved_true" || f != "final_advisory" {
			t.Fatalf("results: %v", results)
		}
		// Forecasts: the approved outcome holds, the rejected fails.
		if _, r, _ := evalOf(t, n, space, fcYes.ID); !eqResult(t, r, "forecast", "holds", "final_advisory") {
			t.Fatalf("forecast approved: %v", r)
		}
		if _, r, _ := evalOf(t, n, space, fcNo.ID); !eqResult(t, r, "forecast", "fails", "final_advisory") {
			t.Fatalf("forecast rejected: %v", r)
		}
		// The ranking holds on every node, the swapped one fails.
		if _, r, _ := evalOf(t, n, space, good.ID); !eqResult(t, r, "ranking", "holds", "final_advisory") {
			t.Fatalf("ranking: %v", r)
		}
		if _, r, _ := evalOf(t, n, space, swapped.ID); !eqResult(t, r, "ranking", "fails", "final_advisory") {
			t.Fatalf("swapped ranking: %v", r)
		}
		if res, _, _ := evalOf(t, n, space, finalBoth.ID); res["result"] != "unsatisfiable" || res["finality"] != "final_advisory" {
			t.Fatalf("unsatisfiable once checkpointed: %v", res)
		}
	}
	if answers[0] != answers[1] {
		t.Fatalf("the listed nodes disagree: %v", answers)
	}

	// A ranking as of a checkpoint root: b pulled a's log in a's order and
	// checkpointed the same entries, so its checkpoint has the same root
	// and the ranking holds on both; a root neither node signed is
	// undetermined.
	byRoot := bl.Opinion(ht.Member(9), ht.OpinionBody("member", "session", space, map[string]any{"ranking": map[string]any{"metric": "approve_share", "scope_type": "mr",
		"filter": map[string]any{"session": space}, "as_of": rootA, "order": "desc",
		"items": []any{map[string]any{"id": s.mr, "value": "6/7"}, map[string]any{"id": mr2, "value": "2/5"}}}}), s.last)
	a.opAccept(t, s, byRoot)
	noRoot := bl.Opinion(ht.Member(9), ht.OpinionBody("member", "session", space, map[string]any{"ranking": map[string]any{"metric": "approve_share", "scope_type": "mr",
		"filter": map[string]any{"session": space}, "as_of": dag.Sum([]byte("no such root")), "order": "desc",
		"items": []any{map[string]any{"id": s.mr, "value": "6/7"}}}}), s.last)
	a.opAccept(t, s, noRoot)
	pull(t, b, a)
	for _, n := range []*apiNode{a, b} {
		if _, r, _ := evalOf(t, n, space, byRoot.ID); !eqResult(t, r, "ranking", "holds", "provisional") {
			t.Fatalf("ranking as of a checkpoint root: %v", r)
		}
		if _, r, _ := evalOf(t, n, space, noRoot.ID); !eqResult(t, r, "ranking", "undetermined", "provisional") {
			t.Fatalf("ranking as of an unknown root: %v", r)
		}
	}

	// /stats as of a's checkpoint (the default: its latest).
	for _, c := range []struct {
		metric, scope string
		want          any
		fin           string
	}{
		{"approve_share", s.mr.String(), "6/7", "final_advisory"},
		{"approve_of_electorate", s.mr.String(), "6/10", "final_advisory"},
		{"turnout", s.mr.String(), "7/10", "final_advisory"},
		{"approve_share", mr2.String(), "2/5", "provisional"}, // no determination: a live tally
		{"ballots_cast", "session", float64(12), "final_advisory"},
		{"ballots_cast", ht.Member(0).Key().String(), float64(2), "final_advisory"},
		{"mrs_opened", "session", float64(2), "final_advisory"},
		{"mrs_merged", "session", float64(1), "final_advisory"},
		{"mrs_opened", ht.Member(1).Key().String(), float64(1), "final_advisory"},
		{"mrs_opened", "group:drafters", float64(2), "final_advisory"},
		{"checkpoints_to_determination", s.mr.String(), float64(0), "final_advisory"},
	} {
		m := a.getMap(t, "/stats", url.Values{"metric": {c.metric}, "scope": {c.scope}})
		if m["value"] != c.want || m["finality"] != c.fin || m["as_of"] != rootA || m["authoritative"] != false || m["simulation"] != true {
			t.Fatalf("/stats %s %s: %v, want %v %s", c.metric, c.scope, m, c.want, c.fin)
		}
	}
	// D50: approve_share beside approve_of_electorate and the share the
	// MR's rule tests (threshold_vote, basis electorate: A/N = 6/10
	// against more than 1/2).
	sh := a.getMap(t, "/stats", url.Values{"metric": {"approve_share"}, "scope": {s.mr.String()}})["shares"].(map[string]any)
	rs := sh["rule_share"].(map[string]any)
	if sh["approve_of_cast"] != "6/7" || sh["approve_of_electorate"] != "6/10" || rs["name"] != "approve_of_electorate" ||
		rs["share"].(map[string]any)["num"] != float64(6) || rs["share"].(map[string]any)["den"] != float64(10) ||
		rs["threshold"].(map[string]any)["num"] != float64(1) || rs["threshold"].(map[string]any)["den"] != float64(2) {
		t.Fatalf("shares %v", sh)
	}
	var capDoc httpapi.Capability
	if err := a.c.Get(context.Background(), "/.well-known/oth", nil, &capDoc); err != nil {
		t.Fatal(err)
	}
	if strings.Join(capDoc.Metrics, ",") != "approve_of_electorate,approve_share,ballots_cast,checkpoints_to_determination,mrs_merged,mrs_opened,turnout" {
		t.Fatalf("capability metrics %v", capDoc.Metrics)
	}
	a.problem(t, "GET", httpapi.Base+"/stats?metric=odds", "", nil, 422, dag.CodeMetricUnknown)
	a.problem(t, "GET", httpapi.Base+"/stats?metric=turnout&scope=session", "", nil, 400, dag.CodeSchema)
	a.problem(t, "GET", httpapi.Base+"/stats?metric=turnout&scope="+s.mr.String()+"&as_of="+dag.Sum(nil).String(), "", nil, 404, httpapi.CodeNotFound)
}

func eqResult(t *testing.T, results []any, kind, result, fin string) bool {
	t.Helper()
	r, f := resultOf(t, results, kind)
	return r == result && f == fin
}

// TestResolutionPeerUnreachable: a listed node whose report peer is down
// is reported unreachable and counts for neither side: a spec needing
// both nodes stays unresolved, one needing either resolves on this
// node's own report alone.
func TestResolutionPeerUnreachable(t *testing.T) {
	a, b := reportPair(t)
	s := a.newOpSession(t)
	bl, space := s.b, s.space
	keyA, keyB := a.node.Replica().NodeKey().String(), b.node.Replica().NodeKey().String()
	spec := func(minAgree int) ht.Tx {
		return bl.Opinion(ht.Member(4), ht.OpinionBody("member", "mr", s.mr.String(), map[string]any{"resolution": map[string]any{
			"question": "Will the simulated MR be approved?", "assertion": map[string]any{"kind": "mr_outcome", "mr": s.mr, "outcome": "approved"},
			"finality": "final_advisory", "nodes": []string{keyA, keyB}, "min_agree": minAgree}}), s.last)
	}
	both := spec(2)
	a.opAccept(t, s, both)
	either := spec(1)
	a.opAccept(t, s, either)
	var ballots []dag.ID
	for i := 0; i < 6; i++ {
		tx := bl.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		a.opAccept(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	a.opAccept(t, s, bl.Determine(ht.Member(0), s.mr, ballots, "approved", s.last))
	checkpoint(t, a, space)
	b.srv.Close()
	res, _, _ := evalOf(t, a, space, both.ID)
	reps := res["reports"].([]any)
	self, other := reps[0].(map[string]any), reps[1].(map[string]any)
	if res["result"] != "unresolved" || res["finality"] != "provisional" || self["source"] != "self" || self["assertion"] != "holds" ||
		self["finality"] != "final_advisory" || other["source"] != "unreachable" || other["assertion"] != nil || other["finality"] != nil || other["consistency"] != nil {
		t.Fatalf("a listed node unreachable: %v", res)
	}
	if res, _, _ := evalOf(t, a, space, either.ID); res["result"] != "resolved_true" || res["finality"] != "final_advisory" {
		t.Fatalf("min_agree 1 with one node reachable: %v", res)
	}
}
