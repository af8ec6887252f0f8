package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// node is a real node on loopback: Badger in memory, the server on an
// httptest listener (127.0.0.1), and a client.
type apiNode struct {
	node *node.Node
	srv  *httptest.Server
	c    *httpapi.Client
	clk  *clock
}

func newNode(t testing.TB) *apiNode { t.Helper(); return newNodeSeed(t, 7) }

// newNodeSeed is newNode with the node key of seed (32 bytes of seed).
func newNodeSeed(t testing.TB, seed byte) *apiNode {
	t.Helper()
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	l, err := node.Open(context.Background(), node.Options{InMemory: true, NodeKey: key, Clock: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: l, MaxBodyBytes: 1 << 20, LoopbackOperator: true}) // the tests are the operator, on loopback
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); l.Close() })
	return &apiNode{node: l, srv: srv, c: &httpapi.Client{BaseURL: srv.URL}, clk: clk}
}

// getMap GETs path and checks that the answer is JSON with a finality
// that an eventual node may emit.
func (n *apiNode) getMap(t *testing.T, path string, q url.Values) map[string]any {
	t.Helper()
	var m map[string]any
	if err := n.c.Get(context.Background(), path, q, &m); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	f, ok := m["finality"].(string)
	if !ok || (f != "provisional" && f != "final_advisory") {
		t.Fatalf("GET %s: finality %v", path, m["finality"])
	}
	return m
}

// problem does a raw request and checks it is a problem+json with code.
func (n *apiNode) problem(t *testing.T, method, path, contentType string, body io.Reader, status int, code dag.Code) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, n.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != httpapi.ContentTypeProblem {
		t.Fatalf("%s %s: %d %s %s, want %d problem", method, path, resp.StatusCode, resp.Header.Get("Content-Type"), b, status)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["code"] != string(code) || m["status"] != float64(status) || m["title"] == "" {
		t.Fatalf("%s %s: problem %s, want code %s", method, path, b, code)
	}
	return m
}

// house is a session on a node: a roster of ten, a drafters group owning
// the branch "draft" with one amendment, and an open MR.
type session struct {
	b      *ht.Builder
	space  string
	last   dag.ID
	change dag.ID
	mr     dag.ID
	opened dag.ID
}

func (n *apiNode) submit(t *testing.T, s *session, tx ht.Tx) *replica.Receipt {
	t.Helper()
	rc, err := n.c.Submit(context.Background(), tx.Bytes, tx.Attach)
	if err != nil {
		t.Fatalf("%s: %v", tx.Env.Type, err)
	}
	if rc.Status != "accepted" || rc.Tx != tx.ID {
		t.Fatalf("%s: receipt %+v", tx.Env.Type, rc)
	}
	s.last = tx.ID
	return rc
}

func (n *apiNode) newSession(t *testing.T) *session {
	t.Helper()
	b := ht.New(ht.Options{Simulation: true})
	s := &session{b: b, space: b.Session.String()}
	n.submit(t, s, b.Create)
	n.submit(t, s, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	n.submit(t, s, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	n.submit(t, s, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	n.submit(t, s, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, s.last)
	n.submit(t, s, tx)
	s.change = change
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Extends the period to 45 days"}, s.last)
	n.submit(t, s, open)
	s.mr, s.opened = mr, open.ID
	return s
}

func TestCapability(t *testing.T) {
	n := newNode(t)
	for _, p := range []string{"/.well-known/oth", httpapi.Base + "/.well-known/oth"} {
		resp, err := http.Get(n.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var c httpapi.Capability
		err = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if c.Consistency != "eventual" || c.TrustModel != "crdt-replicas" || c.ConformanceLevel != "L2" || c.Protocol != "oth/0.10" {
			t.Fatalf("%s: %+v", p, c)
		}
		for _, k := range c.RuleKinds {
			if k == "capital_vote" {
				t.Fatalf("rule_kinds lists capital_vote: %v", c.RuleKinds)
			}
		}
		if len(c.RuleKinds) == 0 || c.Finality != "provisional" || !c.NodeKey.Valid() {
			t.Fatalf("%s: %+v", p, c)
		}
		// Served endpoints are not listed as missing (TestTallyBy,
		// TestMovedHeadMerge).
		for _, x := range c.NotImplemented {
			if strings.Contains(x, "tally") || strings.Contains(x, "/law") || strings.Contains(x, "/diff") {
				t.Fatalf("witan_not_implemented lists a served endpoint: %q", x)
			}
		}
	}
}

// TestSessionEndpoints walks a session through every read endpoint: the
// MR's tally is provisional until an executed determination is in a
// checkpoint, then final_advisory; the checkpoint verifies and its root is
// the RFC 9162 root of /log in the node's order.
func TestSessionEndpoints(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		tx := s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	tal := n.getMap(t, "/merge-requests/"+s.mr.String()+"/tally", nil)
	if tal["finality"] != "provisional" || tal["status"] != "open" || tal["simulation"] != true {
		t.Fatalf("live tally %v", tal)
	}
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	n.submit(t, s, s.b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last))
	if tal := n.getMap(t, "/merge-requests/"+s.mr.String()+"/tally", nil); tal["finality"] != "provisional" || tal["status"] != "merged" {
		t.Fatalf("determined but not checkpointed: %v", tal)
	}
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	tal = n.getMap(t, "/merge-requests/"+s.mr.String()+"/tally", nil)
	if tal["finality"] != "final_advisory" {
		t.Fatalf("checkpointed executed determination: %v", tal)
	}
	res := tal["result"].(map[string]any)["tally"].(map[string]any)
	if res["approve"] != float64(7) {
		t.Fatalf("tally %v", res)
	}

	// /log, paged with the opaque cursor, in the node's order.
	var ids []dag.ID
	q := url.Values{"limit": {"3"}}
	for pages := 0; ; pages++ {
		var page httpapi.LogPage
		if err := n.c.Get(ctx, "/log", q, &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			if _, _, id, err := dag.DecodeEnvelope(e.Envelope); err != nil || id != e.Tx || e.Finality != replica.FinalAdvisory {
				t.Fatalf("log entry %d: %v %s %s", e.Position, err, id, e.Finality)
			}
			if e.Position != uint64(len(ids)+1) {
				t.Fatalf("position %d after %d entries", e.Position, len(ids))
			}
			ids = append(ids, e.Tx)
		}
		if page.Next == nil {
			break
		}
		q.Set("after", *page.Next)
		if pages > 20 {
			t.Fatal("log does not end")
		}
	}
	if len(ids) != 15 {
		t.Fatalf("%d log entries, want 15", len(ids))
	}
	var cpa httpapi.CheckpointAnswer
	if err := n.c.Get(ctx, "/checkpoint", nil, &cpa); err != nil {
		t.Fatal(err)
	}
	cp, err := httpapi.DecodeCheckpoint(cpa.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Verify(); err != nil {
		t.Fatal(err)
	}
	if cp.Size != 15 || cp.Root != replica.MerkleRoot(ids) || cpa.Finality != replica.FinalAdvisory || !cpa.Simulation {
		t.Fatalf("checkpoint %+v, log root %s", cpa, replica.MerkleRoot(ids))
	}

	heads := n.getMap(t, "/heads", nil)
	if hs := heads["heads"].([]any); len(hs) != 1 || hs[0] != s.last.String() || heads["finality"] != "final_advisory" {
		t.Fatalf("heads %v, last %s", heads, s.last)
	}
	obj := n.getMap(t, "/objects/"+s.last.String(), nil)
	if obj["kind"] != "entry" || obj["space"] != s.space {
		t.Fatalf("object %v", obj)
	}
	if obj := n.getMap(t, "/objects/"+s.change.String(), nil); obj["kind"] != "object" {
		t.Fatalf("change object %v", obj)
	}
	sess := n.getMap(t, "/sessions/"+s.space, nil)
	if sess["finality"] != "final_advisory" || sess["simulation"] != true {
		t.Fatalf("session %v", sess)
	}
	_, hash, _ := n.node.Replica().State(ctx, dag.MustParseID(s.space))
	if sess["state_hash"] != hash.String() {
		t.Fatalf("state hash %v, want %s", sess["state_hash"], hash)
	}
	if g := n.getMap(t, "/groups/roster", nil)["group"].(map[string]any); len(g["members"].([]any)) != 10 {
		t.Fatalf("roster %v", g)
	}
	if bs := n.getMap(t, "/branches", nil)["branches"].([]any); len(bs) != 2 {
		t.Fatalf("branches %v", bs)
	}
	if b := n.getMap(t, "/branches/draft", nil)["branch"].(map[string]any); b["name"] != "draft" {
		t.Fatalf("branch %v", b)
	}
	tree := n.getMap(t, "/branches/draft/tree", url.Values{"nid": {"/us/t1/s1"}})
	if node := tree["node"].(map[string]any); node["text"] != "The period is 45 days." {
		t.Fatalf("tree %v", tree)
	}
	mrs := n.getMap(t, "/merge-requests", nil)
	if l := mrs["merge_requests"].([]any); len(l) != 1 || mrs["finality"] != "final_advisory" {
		t.Fatalf("mrs %v", mrs)
	}
	if m := n.getMap(t, "/merge-requests/"+s.mr.String(), nil); m["status"] != "merged" || m["finality"] != "final_advisory" {
		t.Fatalf("mr %v", m)
	}
	if r := n.getMap(t, "/rules", nil)["rules"].([]any); len(r) == 0 {
		t.Fatal("no rules")
	}
	if r := n.getMap(t, "/rules/threshold_vote", nil)["rule"].(map[string]any); r["kind"] != "threshold_vote" {
		t.Fatalf("rule %v", r)
	}
	if q := n.getMap(t, "/quarantine", nil)["quarantine"].([]any); len(q) != 0 {
		t.Fatalf("quarantine %v", q)
	}
	if p := n.getMap(t, "/peers", nil)["peers"].([]any); len(p) != 0 {
		t.Fatalf("peers %v", p)
	}
	n.getMap(t, "/sessions", nil)
	// The law is the merged text at the root head.
	law := n.getMap(t, "/law", nil)
	if sec := law["root"].(map[string]any)["children"].([]any)[0].(map[string]any)["children"].([]any)[0].(map[string]any); sec["text"] != "The period is 45 days." || law["finality"] != "final_advisory" {
		t.Fatalf("law %v", law)
	}
	// On a date: the merge is effective on the date of the checkpoint that
	// included its executed determination (on_merge, D43): 2026-09-24.
	section1 := func(l map[string]any) string {
		return l["root"].(map[string]any)["children"].([]any)[0].(map[string]any)["children"].([]any)[0].(map[string]any)["text"].(string)
	}
	before := n.getMap(t, "/law", url.Values{"date": {"2026-09-23"}})
	after := n.getMap(t, "/law", url.Values{"date": {"2026-09-24"}})
	if section1(before) != "The period is 30 days." || before["merges_in_force"] != float64(0) || len(before["held_back"].([]any)) != 1 {
		t.Fatalf("law on 2026-09-23: %v", before)
	}
	if section1(after) != "The period is 45 days." || after["merges_in_force"] != float64(1) || after["finality"] != "final_advisory" {
		t.Fatalf("law on 2026-09-24: %v", after)
	}
	n.problem(t, "GET", httpapi.Base+"/law?date=2026-13-01", "", nil, 400, dag.CodeSchema)
	n.problem(t, "GET", httpapi.Base+"/law?date=2026-10-01&jurisdiction=XX", "", nil, 422, dag.CodeJurisdictionUnknown)
	// The MR's review: section 1 modified, checks pass, the fact sheet
	// reports 30 -> 45 (S13's number extraction).
	diff := n.getMap(t, "/merge-requests/"+s.mr.String()+"/diff", nil)
	dv := diff["diff"].(map[string]any)
	if diff["finality"] != "final_advisory" || dv["authoritative"] != false || !strings.Contains(dv["unified"].(string), "45 days") {
		t.Fatalf("diff %v", diff)
	}
	if mod := dv["nodes"].(map[string]any)["modified"].([]any); len(mod) != 1 || mod[0] != "/us/t1/s1" {
		t.Fatalf("diff nodes %v", dv["nodes"])
	}
	checks := n.getMap(t, "/merge-requests/"+s.mr.String()+"/checks", nil)["checks"].(map[string]any)
	if checks["blocked"] != false || len(checks["checks"].([]any)) < 5 {
		t.Fatalf("checks %v", checks)
	}
	facts := n.getMap(t, "/merge-requests/"+s.mr.String()+"/facts", nil)["facts"].(map[string]any)
	nums, _ := json.Marshal(facts["numbers"])
	if !strings.Contains(string(nums), "30") || !strings.Contains(string(nums), "45") || facts["finality"] != "final_advisory" {
		t.Fatalf("facts numbers %s, finality %v", nums, facts["finality"])
	}
	n.problem(t, "GET", httpapi.Base+"/merge-requests/"+dag.Sum(nil).String()+"/diff", "", nil, 404, httpapi.CodeNotFound)

	// A second MR onto the merged root: its merge-base is found through
	// the first MR's merge change.
	merged, err := n.node.Views().MR(ctx, dag.MustParseID(s.space), s.mr)
	if err != nil || merged.Merge == nil {
		t.Fatalf("merge change: %v", err)
	}
	tx2, change2 := s.b.Append(ht.Member(2), "draft", s.change, []statute.Op{ht.Replace(s.b.Trees[s.change], "/us/t1/s2", "The period is 60 days.")}, s.last)
	n.submit(t, s, tx2)
	open2, mr2 := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change2, TargetHead: *merged.Merge,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	n.submit(t, s, open2)
	dv2 := n.getMap(t, "/merge-requests/"+mr2.String()+"/diff", nil)
	if mod := dv2["diff"].(map[string]any)["nodes"].(map[string]any)["modified"].([]any); len(mod) != 1 || mod[0] != "/us/t1/s2" || dv2["finality"] != "provisional" {
		t.Fatalf("second MR's diff %v", dv2)
	}
}

func TestLawBeforeAnyMerge(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	law := n.getMap(t, "/law", nil)
	if law["snapshot"] != s.b.Seed.Hash().String() || law["simulation"] != true {
		t.Fatalf("law %v, seed %s", law, s.b.Seed.Hash())
	}
}

func TestErrors(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	tx := httpapi.Base + "/transactions"
	n.problem(t, "POST", tx, "application/json", strings.NewReader(`{"envelope":`), 400, dag.CodeSchema)
	n.problem(t, "POST", tx, "application/json", strings.NewReader(`{"envelope":{"v":"0.10"}}`), 400, dag.CodeSchema)
	n.problem(t, "POST", tx, "application/json", strings.NewReader(`{"envelope":{},"extra":1}`), 400, dag.CodeSchema)
	n.problem(t, "POST", tx, "application/json", strings.NewReader(``), 400, dag.CodeSchema)
	n.problem(t, "POST", tx, "application/json", strings.NewReader(`{"envelope":{}} {}`), 400, dag.CodeSchema)
	big := `{"envelope":"` + strings.Repeat("a", 1<<20) + `"}`
	n.problem(t, "POST", tx, "application/json", strings.NewReader(big), 413, httpapi.CodeTooLarge)
	n.problem(t, "GET", tx, "", nil, 405, httpapi.CodeMethodNotAllowed)
	n.problem(t, "DELETE", httpapi.Base+"/log", "", nil, 405, httpapi.CodeMethodNotAllowed)
	n.problem(t, "POST", httpapi.Base+"/heads", "", nil, 405, httpapi.CodeMethodNotAllowed)
	n.problem(t, "GET", httpapi.Base+"/nope", "", nil, 404, httpapi.CodeNotFound)
	unknown := dag.Sum([]byte("nothing")).String()
	n.problem(t, "GET", httpapi.Base+"/objects/"+unknown, "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/objects/not-an-id", "", nil, 400, dag.CodeSchema)
	n.problem(t, "GET", httpapi.Base+"/merge-requests/"+unknown, "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/merge-requests/"+unknown+"/tally", "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/sessions/"+unknown, "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/log?session="+unknown, "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/heads?session="+unknown, "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/groups/nobody", "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/branches/nobranch", "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/branches/draft/tree?nid=/no/such", "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/rules/capital_votes", "", nil, 422, dag.CodeRuleUnknown)
	n.problem(t, "GET", httpapi.Base+"/log?after=garbage", "", nil, 400, dag.CodeSchema)
	n.problem(t, "GET", httpapi.Base+"/log?limit=-1", "", nil, 400, dag.CodeSchema)
	n.problem(t, "GET", httpapi.Base+"/heads?session=sha256:zz", "", nil, 400, dag.CodeSchema)
	n.problem(t, "GET", httpapi.Base+"/checkpoint", "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "POST", httpapi.Base+"/peers", "application/json", strings.NewReader(`{"addr":"/ip4/127.0.0.1"}`), 501, httpapi.CodeNotImplemented)

	// A bad signature: a well-formed envelope whose sig is another's. The
	// node refuses it with a signed rejection receipt.
	ballot := s.b.Ballot(ht.Member(4), s.mr, "approve", dag.ID{}, s.last)
	forged := *ballot.Env
	forged.Sig = append([]byte(nil), forged.Sig...)
	forged.Sig[0] ^= 1
	rc, err := n.c.Submit(context.Background(), forged.Canonical(), nil)
	var pe *httpapi.Error
	if !errors.As(err, &pe) || pe.Code() != dag.CodeBadSignature || pe.Status != 400 {
		t.Fatalf("forged ballot: %v", err)
	}
	if rc == nil || rc.Status != "rejected" || rc.Errors[0].Code != dag.CodeBadSignature || rc.Verify() != nil || rc.Tx != forged.ID() {
		t.Fatalf("rejection receipt %+v", rc)
	}
	if q := n.getMap(t, "/quarantine", nil)["quarantine"].([]any); len(q) != 1 {
		t.Fatalf("quarantine %v", q)
	}
	// An unauthorised ballot (not a roster member) is refused the same way.
	_, err = n.c.Submit(context.Background(), s.b.Ballot(ht.Member(30), s.mr, "approve", dag.ID{}, s.last).Bytes, nil)
	if !errors.As(err, &pe) || pe.Problem.Receipt == nil || pe.Code() != dag.CodeBallotInvalid || pe.Status != 422 {
		t.Fatalf("outsider's ballot: %v", err)
	}
	// A submission naming a parent the node does not hold.
	_, err = n.c.Submit(context.Background(), s.b.Ballot(ht.Member(5), s.mr, "approve", dag.ID{}, dag.Sum([]byte("x"))).Bytes, nil)
	if !errors.As(err, &pe) || pe.Code() != dag.CodeUnknownParent {
		t.Fatalf("unknown parent: %v", err)
	}
}

func TestSessionSelection(t *testing.T) {
	n := newNode(t)
	n.problem(t, "GET", httpapi.Base+"/heads", "", nil, 404, httpapi.CodeNotFound)
	a := n.newSession(t)
	n.getMap(t, "/heads", nil) // one session: chosen
	b := ht.New(ht.Options{Label: "second"})
	n.submit(t, &session{}, b.Create)
	n.problem(t, "GET", httpapi.Base+"/heads", "", nil, 400, dag.CodeSchema)
	h := n.getMap(t, "/heads", url.Values{"session": {b.Session.String()}})
	if hs := h["heads"].([]any); len(hs) != 1 || hs[0] != b.Create.ID.String() {
		t.Fatalf("heads of the second session %v", h)
	}
	if h := n.getMap(t, "/heads", url.Values{"session": {a.space}}); h["heads"].([]any)[0] != a.last.String() {
		t.Fatalf("heads of the first session %v", h)
	}
}

func TestMemoryBlocks(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	root := mb.Block{Origin: mb.MustText("agent:ada"), Subject: mb.MustText("tide"), Body: mb.MustText("high water 06:10"),
		Evidence: mb.MustText("gauge 3"), Confidence: mb.MustValue("80"), ObservedAt: mb.MustText("2026-09-21T06:10:00Z"),
		Lineage: mb.MustParents()}.Seal()
	child := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("confirmed"), Lineage: mb.MustParents(root.ID())}.Seal()
	put := func(b mb.Block) error {
		return n.c.Do(ctx, "POST", "/memory/harbour/blocks", nil, b.Encode(), nil)
	}
	var pe *httpapi.Error
	if err := put(child); !errors.As(err, &pe) || pe.Code() != dag.Code(mb.CodeBlockMissingParent) || pe.Status != 422 {
		t.Fatalf("child before its parent: %v", err)
	}
	if err := put(root); err != nil {
		t.Fatal(err)
	}
	if err := put(child); err != nil {
		t.Fatal(err)
	}
	if err := put(root); err != nil {
		t.Fatalf("again: %v", err)
	}
	tampered := root
	tampered.Body = mb.MustText("low water")
	if err := put(tampered); !errors.As(err, &pe) || pe.Code() != dag.Code(mb.CodeBlockHashMismatch) {
		t.Fatalf("tampered: %v", err)
	}
	n.problem(t, "POST", httpapi.Base+"/memory/harbour/blocks", "application/json", strings.NewReader(`{"colour":"red"}`), 422, dag.Code(mb.CodeBlockUnknownField))
	n.problem(t, "POST", httpapi.Base+"/memory/bad%20name/blocks", "application/json", strings.NewReader(string(root.Encode())), 400, dag.CodeSchema)
	n.problem(t, "GET", httpapi.Base+"/memory/harbour/blocks", "", nil, 405, httpapi.CodeMethodNotAllowed)

	at := func(level string) map[string]any {
		return n.getMap(t, "/memory/harbour/blocks/"+root.ID().String(), url.Values{"level": {level}})
	}
	l0, l50 := at("0"), at("50")
	if _, ok := l0["accepted"].(map[string]any)["evidence"]; ok {
		t.Fatalf("level 0 sees evidence: %v", l0)
	}
	if l50["accepted"].(map[string]any)["evidence"] != "gauge 3" {
		t.Fatalf("level 50: %v", l50)
	}
	for _, r := range []map[string]any{l0, l50} {
		if _, ok := r["accepted"].(map[string]any)["confidence"]; ok {
			t.Fatalf("confidence travels: %v", r)
		}
	}
	anc := n.getMap(t, "/memory/harbour/blocks/"+child.ID().String()+"/ancestry", nil)
	if ch := anc["ancestry"].(map[string]any)["chain"].([]any); len(ch) != 2 || ch[1] != root.ID().String() {
		t.Fatalf("ancestry %v", anc)
	}
	if hs := n.getMap(t, "/memory/harbour/heads", nil)["heads"].([]any); len(hs) != 1 || hs[0] != child.ID().String() {
		t.Fatalf("heads %v", hs)
	}
	if sp := n.getMap(t, "/memory", nil)["spaces"].([]any); len(sp) != 1 || sp[0] != "harbour" {
		t.Fatalf("spaces %v", sp)
	}
	n.problem(t, "GET", httpapi.Base+"/memory/other/blocks/"+root.ID().String(), "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "GET", httpapi.Base+"/memory/harbour/blocks/"+root.ID().String()+"?level=x", "", nil, 400, dag.CodeSchema)
	// A memory block is an entry of its space: /objects finds it too.
	if o := n.getMap(t, "/objects/"+root.ID().String(), nil); o["space"] != "mem:harbour" {
		t.Fatalf("object %v", o)
	}
}

// TestConcurrentReads: reads that share the memoised derivation run at
// once (go test -race checks them).
func TestConcurrentReads(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	paths := []string{"/merge-requests/" + s.mr.String() + "/diff", "/merge-requests/" + s.mr.String() + "/facts",
		"/merge-requests/" + s.mr.String() + "/checks", "/branches/draft/tree", "/law", "/heads", "/log"}
	errc := make(chan error, 4*len(paths))
	for i := 0; i < 4; i++ {
		for _, p := range paths {
			go func() {
				var m map[string]any
				errc <- n.c.Get(context.Background(), p, nil, &m)
			}()
		}
	}
	for i := 0; i < cap(errc); i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// TestRefs: an append travels with its change and the nodes its result
// adds (the edited section and its ancestors), not the base snapshot.
func TestRefs(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	ctx := context.Background()
	e, err := n.node.Get(ctx, s.opened) // the mr.open: refers to changes, but its body names no object
	if err != nil {
		t.Fatal(err)
	}
	var page httpapi.LogPage
	if err := n.c.Get(ctx, "/log", nil, &page); err != nil {
		t.Fatal(err)
	}
	for _, le := range page.Entries {
		env, _, _, _ := dag.DecodeEnvelope(le.Envelope)
		switch env.Type {
		case dag.TxSessionCreate:
			if len(le.Attachments) != 6 { // root, title, three sections, the rules' text
				t.Fatalf("session.create travels with %d objects, want the seed's 5 nodes and the rule text", len(le.Attachments))
			}
		case dag.TxBranchAppend:
			if len(le.Attachments) != 4 { // change, root, title, section 1
				t.Fatalf("branch.append travels with %d objects, want 4", len(le.Attachments))
			}
		}
	}
	ids, err := n.node.Refs(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := n.node.Object(ctx, id); err != nil {
			t.Fatalf("ref %s is not an object: %v", id, err)
		}
	}
}
