package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// TestSimulationLabelEveryEndpoint (D54): every JSON answer concerning a
// simulated session carries "simulation": true — every routed GET path
// (the table must name each one, so a new endpoint is walked too),
// problems about the session, and POST /transactions receipts, accepted
// and rejected.
func TestSimulationLabelEveryEndpoint(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{Simulation: true}, 5)
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, s.last)
	s.do(t, n, tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, open)
	// A second option and a contest grouping the two (D47), for
	// /contests/{id}.
	s.do(t, n, b.BranchCreate(ht.Member(1), "rival", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx2, change2 := b.Append(ht.Member(2), "rival", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 60 days.")}, s.last)
	s.do(t, n, tx2)
	open2, mr2 := b.Open(ht.Member(1), ht.MR{Source: "rival", SourceHead: change2, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, open2)
	contest := s.do(t, n, b.Sign(ht.Member(3), dag.TxContestOpen, map[string]any{"options": []dag.ID{mr, mr2}}, []dag.ID{s.last}))
	// An opinion, for /opinions (opinions.go).
	op := s.do(t, n, b.Opinion(ht.Member(1), ht.OpinionBody("member", "mr", mr.String(), nil), s.last))
	n.checkpointNow(t, s.space)
	sess := "?session=" + s.space

	// Writes: an accepted receipt and a rejection problem.
	st, m := n.post(t, b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, s.last))
	if st != http.StatusOK || m["simulation"] != true {
		t.Fatalf("accepted receipt: %d %v", st, m)
	}
	st, m = n.post(t, b.Ballot(ht.Member(9), mr, "approve", dag.ID{}, s.last))
	if st < 400 || m["simulation"] != true || m["receipt"] == nil {
		t.Fatalf("rejection problem: %d %v", st, m)
	}

	mrp := "/merge-requests/" + mr.String()
	// Each routed GET pattern and the paths that exercise it.
	walk := map[string][]string{
		"/.well-known/oth":                              {"/.well-known/oth"},
		"/oth/v0/.well-known/oth":                       {"/.well-known/oth"},
		"/oth/v0/log":                                   {"/log", "/log" + sess},
		"/oth/v0/objects/{id}":                          {"/objects/" + s.last.String(), "/objects/" + change.String(), "/objects/" + mr.String(), "/objects/" + ht.TextRef.String(), "/objects/" + b.Genesis.String()},
		"/oth/v0/checkpoint":                            {"/checkpoint"},
		"/oth/v0/heads":                                 {"/heads"},
		"/oth/v0/sessions":                              {"/sessions"},
		"/oth/v0/sessions/{id}":                         {"/sessions/" + s.space},
		"/oth/v0/sessions/{id}/state":                   {"/sessions/" + s.space + "/state"},
		"/oth/v0/groups/{id}":                           {"/groups/roster", "/groups/group:drafters" + "?session=" + s.space},
		"/oth/v0/branches":                              {"/branches"},
		"/oth/v0/branches/{name}":                       {"/branches/root", "/branches/draft"},
		"/oth/v0/branches/{name}/tree":                  {"/branches/root/tree", "/branches/draft/tree?nid=/us/t1/s1"},
		"/oth/v0/merge-requests":                        {"/merge-requests"},
		"/oth/v0/merge-requests/{id}":                   {mrp},
		"/oth/v0/merge-requests/{id}/diff":              {mrp + "/diff"},
		"/oth/v0/merge-requests/{id}/checks":            {mrp + "/checks"},
		"/oth/v0/merge-requests/{id}/facts":             {mrp + "/facts"},
		"/oth/v0/merge-requests/{id}/tally":             {mrp + "/tally"},
		"/oth/v0/merge-requests/{id}/estimates":         {mrp + "/estimates"},
		"/oth/v0/merge-requests/{id}/exchanges":         {mrp + "/exchanges"},
		"/oth/v0/law":                                   {"/law", "/law?date=2026-09-22"},
		"/oth/v0/rules":                                 {"/rules"},
		"/oth/v0/rules/{kind}":                          {"/rules/threshold_vote"},
		"/oth/v0/quarantine":                            {"/quarantine"},
		"/oth/v0/peers":                                 {"/peers"},
		"/oth/v0/contests/{id}":                         {"/contests/" + contest.String()},
		"/oth/v0/proofs/inclusion":                      {"/proofs/inclusion?tx=" + s.last.String(), "/proofs/inclusion?log=refusals&index=0"},
		"/oth/v0/proofs/consistency":                    {"/proofs/consistency?from=1", "/proofs/consistency?log=refusals&from=0"},
		"/oth/v0/refusals":                              {"/refusals"},
		"/oth/v0/forks":                                 {"/forks"},
		"/oth/v0/refusals/checkpoint":                   {"/refusals/checkpoint"},
		"/oth/v0/extract/{hash}":                        {"/extract/" + s.last.String(), "/extract/" + mr.String()},
		"/oth/v0/cite/{hash}":                           {"/cite/" + b.Genesis.String()},
		"/oth/v0/cite/{hash}/diff":                      {"/cite/" + b.Genesis.String() + "/diff?to=" + change.String()},
		"/oth/v0/export/rollcall":                       {"/export/rollcall"},
		"/oth/v0/export/popolo":                         {"/export/popolo", "/export/popolo" + sess}, // streamed: labels itself
		"/oth/v0/history/{nid...}":                      {"/history/us/t1/s1"},
		"/oth/v0/events":                                nil, // a stream: each event is labelled (TestEventsS12); its problems below
		"/oth/v0/opinions":                              {"/opinions", "/opinions?kind=member"},
		"/oth/v0/opinions/{id}":                         {"/opinions/" + op.String()},
		"/oth/v0/opinions/{id}/evaluation":              {"/opinions/" + op.String() + "/evaluation"},
		"/oth/v0/opinions/{id}/claim-review":            {"/opinions/" + op.String() + "/claim-review"},
		"/oth/v0/stats":                                 {"/stats?metric=mrs_opened", "/stats?metric=approve_share&scope=" + mr.String()},
		"/oth/v0/transactions":                          nil, // POST, above
		"/oth/v0/join":                                  nil, // POST, node-local: names no session the node holds yet
		"/oth/v0/leave":                                 nil, // POST, node-local: a space the node holds nothing of
		"/oth/v0/witness":                               nil, // POST, a witness's cosignature (TestWitnessHTTP)
		"/oth/v0/restricted":                            nil, // POST (drafts.go), tested in restricted_test.go
		"/oth/v0/restricted/challenge":                  nil, // POST, names no session
		"/oth/v0/restricted/{commitment}":               nil, // a signed challenge; labelled (TestRestrictedDraftReadHTTP)
		"/oth/v0/memory":                                nil, // memory spaces are not sessions
		"/oth/v0/memory/{space}/heads":                  nil,
		"/oth/v0/memory/{space}/blocks":                 nil,
		"/oth/v0/memory/{space}/blocks/{hash}":          nil,
		"/oth/v0/memory/{space}/blocks/{hash}/ancestry": nil,
	}
	srv := n.srv.Config.Handler.(*httpapi.Server)
	for _, p := range httpapi.Patterns(srv) {
		paths, ok := walk[p]
		if !ok {
			t.Errorf("route %s is not walked: add it to this test", p)
		}
		for _, path := range paths {
			url := n.srv.URL + httpapi.Base + path
			if strings.HasPrefix(path, "/.well-known") {
				url = n.srv.URL + path
			}
			st, ct, m := rawDo(t, http.MethodGet, url, nil)
			if st != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
				t.Errorf("GET %s: %d %s %v", path, st, ct, m)
			}
			if m["simulation"] != true {
				t.Errorf("GET %s: no simulation label: %.200v", path, m)
			}
		}
	}
	// Problems about the session are labelled too.
	for _, path := range []string{"/merge-requests/" + dag.Sum([]byte("no such MR")).String(), mrp + "/tally?by=region", "/branches/nope", "/events?nid_prefix=us&" + sess[1:]} {
		st, ct, m := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+path, nil)
		if st < 400 || ct != httpapi.ContentTypeProblem || m["simulation"] != true {
			t.Errorf("GET %s: %d %s %v, want a labelled problem", path, st, ct, m)
		}
	}
}

// TestNoLabelOutsideSimulation: a node holding only a session that is not
// simulated labels nothing simulated.
func TestNoLabelOutsideSimulation(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 3)
	for _, path := range []string{"/.well-known/oth", "/log", "/branches/root/tree", "/objects/" + s.last.String(), "/sessions/" + s.space} {
		if v, ok := n.get(t, path)["simulation"]; ok && v != false {
			t.Errorf("GET %s: simulation %v", path, v)
		}
	}
}
