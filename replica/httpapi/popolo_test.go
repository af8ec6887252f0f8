package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// popoloGet reads GET /export/popolo raw: status, headers and the body
// decoded as a JSON object (the test fails if it is not one).
func popoloGet(t *testing.T, n *apiNode, query string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Get(n.srv.URL + httpapi.Base + "/export/popolo" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("export/popolo%s: %d, not one JSON object: %v: %.300s", query, resp.StatusCode, err, b)
	}
	return resp, m
}

// popoloShape checks an export against the Popolo classes' required
// fields and enumerations as popoloproject.com states them (Person and
// Organization need a name, a Membership its person and organization, a
// VoteEvent its motion, a Count an option and a value, a Vote its voter
// and an option among yes, no, abstain, absent, not voting, paired; a
// result is pass or fail), and that every object carries a finality an
// eventual node may emit (never "final"). Written by hand: no copy of
// Popolo's JSON schemas is vendored (docs/http-api.md says why).
func popoloShape(t *testing.T, m map[string]any) {
	t.Helper()
	okFinality := func(where string, o map[string]any) {
		if f := o["finality"]; f != "provisional" && f != "final_advisory" {
			t.Errorf("%s %v: finality %v", where, o, f)
		}
	}
	need := func(where string, o map[string]any, keys ...string) {
		for _, k := range keys {
			if s, ok := o[k].(string); !ok || s == "" {
				t.Errorf("%s %v: no %s", where, o, k)
			}
		}
		okFinality(where, o)
	}
	list := func(v any, what string) []map[string]any {
		a, ok := v.([]any)
		if !ok {
			t.Fatalf("%s: %T, want an array", what, v)
		}
		out := make([]map[string]any, len(a))
		for i, x := range a {
			if out[i], ok = x.(map[string]any); !ok {
				t.Fatalf("%s[%d]: %T", what, i, x)
			}
		}
		return out
	}
	results := func(where string, o map[string]any) {
		if r, ok := o["result"]; ok && r != "pass" && r != "fail" {
			t.Errorf("%s: result %v", where, r)
		}
	}
	for _, o := range list(m["persons"], "persons") {
		need("person", o, "id", "name")
	}
	for _, o := range list(m["organizations"], "organizations") {
		need("organization", o, "id", "name", "classification")
	}
	for _, o := range list(m["memberships"], "memberships") {
		need("membership", o, "person_id", "organization_id", "role")
	}
	for _, o := range list(m["motions"], "motions") {
		need("motion", o, "id", "organization_id")
		results("motion", o)
	}
	options := []string{"yes", "no", "abstain", "absent", "not voting", "paired"}
	for _, ev := range list(m["vote_events"], "vote_events") {
		need("vote_event", ev, "id", "motion_id", "organization_id")
		results("vote_event", ev)
		for _, c := range list(ev["counts"], "counts") {
			need("count", c, "option")
			if _, ok := c["value"].(json.Number); !ok || !slices.Contains(options, c["option"].(string)) {
				t.Errorf("count %v", c)
			}
		}
		for _, v := range list(ev["votes"], "votes") {
			need("vote", v, "voter_id", "option")
			if !slices.Contains(options, v["option"].(string)) {
				t.Errorf("vote %v", v)
			}
		}
	}
	if m["authoritative"] != false {
		t.Errorf("authoritative %v", m["authoritative"])
	}
}

// TestPopoloExport (D30, S14's last clause) over a real listener, with
// envelopes signed and tx ids computed in the test. The session: roster
// members 0..9 (admin 0), registrar {0} (admin 0), drafters {1, 2}
// (admin 1). MR B (work -> draft, always_allow) is determined approved:
// merged, so Popolo result "pass". MR A (work -> root, majority) stays
// open, with ballots worked out by hand: members 0-3 approve (yes), 4
// rejects (no), 5 abstains, 6 approves then rejects superseding it (no),
// 7 approves and rejects without superseding (void: "not voting",
// "void": true), 8 and 9 cast nothing (no vote listed). So A's counts are
// yes 4, no 2, abstain 1, not voting 1, as /tally has them (S14).
//
// Finality: after a checkpoint that includes B's determination, B, its
// counts and votes are final_advisory; A is open, so provisional. The
// groups' finality is final_advisory only while the latest checkpoint
// includes every entry: member 5's ballot after the checkpoint makes them
// provisional, a second checkpoint final_advisory again. The export as a
// whole stays provisional (A is open), in its body and its header.
func TestPopoloExport(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{Simulation: true, Label: "Popolo test chamber"}, 10)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	s.branch(t, n, "work", "draft", b.Genesis, ht.AlwaysAllow())
	c1 := s.amend(t, n, "work", b.Genesis, "/us/t1/s1", "The period is 40 days.")
	mrB := s.open(t, n, ht.MR{Source: "work", SourceHead: c1, Target: "draft", TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.AlwaysAllow(), Summary: "B: 40 days in the draft"})
	s.do(t, n, b.Determine(ht.Member(4), mrB, nil, "approved", s.last))
	mrA := s.open(t, n, ht.MR{Source: "work", SourceHead: c1, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "A: 40 days <in law>"})
	s.vote(t, n, mrA, "approve", 0, 4)
	s.vote(t, n, mrA, "reject", 4, 5)
	first := s.do(t, n, b.Ballot(ht.Member(6), mrA, "approve", dag.ID{}, s.last))
	s.do(t, n, b.Ballot(ht.Member(6), mrA, "reject", first, s.last))
	s.do(t, n, b.Ballot(ht.Member(7), mrA, "approve", dag.ID{}, s.last))
	s.do(t, n, b.Ballot(ht.Member(7), mrA, "reject", dag.ID{}, s.last))
	n.checkpointNow(t, s.space)
	s.do(t, n, b.Ballot(ht.Member(5), mrA, "abstain", dag.ID{}, s.last))

	check := func(groups string) {
		t.Helper()
		resp, m := popoloGet(t, n, "?session="+s.space)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" ||
			resp.Header.Get(httpapi.HeaderStreamed) != "true" || resp.Header.Get(httpapi.HeaderFinality) != "provisional" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
		popoloShape(t, m)
		if m["session"] != s.space || m["simulation"] != true || m["finality"] != "provisional" {
			t.Fatalf("head: session %v simulation %v finality %v", m["session"], m["simulation"], m["finality"])
		}
		var persons []string
		for _, p := range field(m, "persons").([]any) {
			persons = append(persons, p.(map[string]any)["id"].(string))
			if f := p.(map[string]any)["finality"]; f != groups {
				t.Errorf("person finality %v, want %s", f, groups)
			}
		}
		var want []string
		for i := 0; i < 10; i++ {
			want = append(want, ht.Member(i).Key().String())
		}
		slices.Sort(want)
		if !slices.Equal(persons, want) {
			t.Errorf("persons %v, want members 0..9 sorted", persons)
		}
		var orgs []string
		for _, o := range field(m, "organizations").([]any) {
			om := o.(map[string]any)
			orgs = append(orgs, om["id"].(string)+"|"+om["name"].(string)+"|"+om["classification"].(string))
		}
		wantOrgs := []string{s.space + "|Popolo test chamber|legislature", "group:drafters|drafters|group", "group:registrar|registrar|group", "group:roster|roster|group"}
		if !slices.Equal(orgs, wantOrgs) {
			t.Errorf("organizations %v, want %v", orgs, wantOrgs)
		}
		roles := map[string]int{}
		for _, ms := range field(m, "memberships").([]any) {
			mm := ms.(map[string]any)
			roles[mm["organization_id"].(string)+" "+mm["role"].(string)]++
		}
		if len(roles) != 6 || roles["group:roster member"] != 10 || roles["group:roster admin"] != 1 || roles["group:registrar member"] != 1 ||
			roles["group:registrar admin"] != 1 || roles["group:drafters member"] != 2 || roles["group:drafters admin"] != 1 {
			t.Errorf("memberships %v", roles)
		}
		events := map[string]map[string]any{}
		for _, e := range field(m, "vote_events").([]any) {
			em := e.(map[string]any)
			events[em["id"].(string)] = em
		}
		motions := map[string]map[string]any{}
		for _, e := range field(m, "motions").([]any) {
			em := e.(map[string]any)
			motions[em["id"].(string)] = em
		}
		a, bv := events[mrA.String()], events[mrB.String()]
		if len(events) != 2 || a == nil || bv == nil || len(motions) != 2 {
			t.Fatalf("vote events %v", events)
		}
		if motions[mrA.String()]["text"] != "A: 40 days <in law>" || motions[mrA.String()]["requirement"] != "threshold_vote" {
			t.Errorf("motion A %v", motions[mrA.String()])
		}
		if _, ok := a["result"]; ok || a["finality"] != "provisional" || a["motion_id"] != mrA.String() || a["organization_id"] != s.space {
			t.Errorf("vote event A %v", a)
		}
		if bv["result"] != "pass" || bv["finality"] != "final_advisory" || motions[mrB.String()]["result"] != "pass" || len(bv["votes"].([]any)) != 0 {
			t.Errorf("vote event B %v, motion %v", bv, motions[mrB.String()])
		}
		for _, c := range bv["counts"].([]any) {
			if c.(map[string]any)["finality"] != "final_advisory" {
				t.Errorf("B count %v", c)
			}
		}
		counts := map[string]string{}
		for _, c := range a["counts"].([]any) {
			cm := c.(map[string]any)
			counts[cm["option"].(string)] = cm["value"].(json.Number).String()
			if cm["finality"] != "provisional" {
				t.Errorf("A count %v", cm)
			}
		}
		if want := map[string]string{"yes": "4", "no": "2", "abstain": "1", "not voting": "1"}; !mapsEqual(counts, want) {
			t.Errorf("A counts %v, want %v", counts, want)
		}
		_, tl, _ := tallyOf(t, n, mrA) // S14: the counts are the tally's
		if counts["yes"] != itoa(tl[0]) || counts["no"] != itoa(tl[1]) || counts["not voting"] != itoa(tl[2]) {
			t.Errorf("A counts %v, /tally A R V %v", counts, tl)
		}
		votes := map[string]string{}
		for _, v := range a["votes"].([]any) {
			vm := v.(map[string]any)
			o := vm["option"].(string)
			if vm["void"] == true {
				o += "+void"
			}
			votes[vm["voter_id"].(string)] = o
			if vm["finality"] != "provisional" {
				t.Errorf("A vote %v", vm)
			}
		}
		wantVotes := map[int]string{0: "yes", 1: "yes", 2: "yes", 3: "yes", 4: "no", 5: "abstain", 6: "no", 7: "not voting+void"}
		if len(votes) != len(wantVotes) {
			t.Errorf("A votes %v, want %v by member", votes, wantVotes)
		}
		for i, w := range wantVotes {
			if got := votes[ht.Member(i).Key().String()]; got != w {
				t.Errorf("member %d: vote %q, want %q", i, got, w)
			}
		}
	}
	check("provisional") // member 5's ballot came after the checkpoint
	n.checkpointNow(t, s.space)
	check("final_advisory")

	// Bad requests are problems, not empty exports.
	n.problem(t, http.MethodGet, httpapi.Base+"/export/popolo?session=nope", "", nil, http.StatusBadRequest, dag.CodeSchema)
	st, ct, pm := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+"/export/popolo?session=sha256:"+strings.Repeat("ab", 32), nil)
	if st != http.StatusNotFound || ct != httpapi.ContentTypeProblem {
		t.Errorf("unknown session: %d %s %v", st, ct, pm)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func itoa(v uint64) string { return json.Number(strings.TrimSpace(string(mustJSON(v)))).String() }

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestPopoloTwoNodes (S14: "/export/popolo vote counts match /tally on
// every node"): B pulls A's session over HTTP (federation, no libp2p);
// with no checkpoint on either node, the two exports agree in every
// member but none depends on a node's own log (persons, organizations,
// memberships, motions, vote events with their counts and votes), and on
// each node the counts are that node's /tally.
func TestPopoloTwoNodes(t *testing.T) {
	ctx := context.Background()
	a, bn := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{Simulation: true}, 10)
	b := s.b
	s.branch(t, a, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c1 := s.amend(t, a, "draft", b.Genesis, "/us/t1/s1", "The period is 40 days.")
	mr := s.open(t, a, ht.MR{Source: "draft", SourceHead: c1, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)})
	s.vote(t, a, mr, "approve", 0, 3)
	s.vote(t, a, mr, "reject", 3, 5)
	s.vote(t, a, mr, "abstain", 5, 6)
	if res, err := bn.node.PullHTTP(ctx, node.NewHTTPPeer(a.srv.URL, nil)); err != nil || len(res) != 1 || res[0].Quarantined != 0 {
		t.Fatalf("pull %+v %v", res, err)
	}
	var exports []map[string]any
	for _, n := range []*apiNode{a, bn} {
		_, m := popoloGet(t, n, "?session="+s.space)
		popoloShape(t, m)
		ev := m["vote_events"].([]any)[0].(map[string]any)
		counts := map[string]string{}
		for _, c := range ev["counts"].([]any) {
			cm := c.(map[string]any)
			counts[cm["option"].(string)] = cm["value"].(json.Number).String()
		}
		_, tl, _ := tallyOf(t, n, mr)
		if counts["yes"] != "3" || counts["no"] != "2" || counts["abstain"] != "1" || counts["yes"] != itoa(tl[0]) || counts["no"] != itoa(tl[1]) {
			t.Errorf("counts %v, /tally A R V %v", counts, tl)
		}
		exports = append(exports, m)
	}
	for _, k := range []string{"persons", "organizations", "memberships", "motions", "vote_events", "finality", "session", "simulation"} {
		x, _ := json.Marshal(exports[0][k])
		y, _ := json.Marshal(exports[1][k])
		if !bytes.Equal(x, y) {
			t.Errorf("%s differ:\nA %s\nB %s", k, x, y)
		}
	}
}
