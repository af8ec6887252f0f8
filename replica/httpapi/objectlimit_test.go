package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// A session.create travels to a peer with the objects it names, at most
// dag.MaxEntryObjects (256, sync's limit per item) of them. Counted by
// hand: housetest's seed of n sections is n+2 node objects (the root
// /us, the title /us/t1, the n sections), and both root rules name the
// one rule text: n+3 objects. With 254 sections (257 objects) the node
// refuses the create over HTTP with schema, a signed rejection for the id
// computed here, and keeps nothing; with 253 (256 objects) it accepts
// it, and a second node that pulls the first's /log receives the create
// with every object it needs and derives the same state.
func TestSessionCreateNamingTooManyObjectsRefused(t *testing.T) {
	a, b := newNode(t), newNode(t)

	big := ht.New(ht.Options{Label: "too many objects", Sections: 254})
	if got := len(big.Create.Attach); got != 257 {
		t.Fatalf("the create of 254 sections attaches %d objects, want 257", got)
	}
	m := a.refuse(t, big.Create, dag.CodeSchema)
	if d, _ := m["detail"].(string); !strings.Contains(d, "more than 256 objects") {
		t.Fatalf("detail %q does not say what the limit is", d)
	}
	if sessions, _ := a.get(t, "/sessions")["sessions"].([]any); len(sessions) != 0 {
		t.Fatalf("the refused create made sessions %v", sessions)
	}
	if st, _, _ := rawDo(t, http.MethodGet, a.srv.URL+httpapi.Base+"/sessions/"+bodyID(big.Create.Env.Body), nil); st != http.StatusNotFound {
		t.Fatalf("GET /sessions/{refused create}: %d, want 404", st)
	}

	edge := ht.New(ht.Options{Label: "as many objects as travel", Sections: 253})
	if got := len(edge.Create.Attach); got != 256 {
		t.Fatalf("the create of 253 sections attaches %d objects, want 256", got)
	}
	a.accept(t, edge.Create)
	session := bodyID(edge.Create.Env.Body) // 30k §4: the session id is the hash of the create's body
	relay(t, a, b)                          // GET /log on a, with its attachments, POST /transactions on b
	converged(t, a, b, session)
}

// A branch.append travels to a peer with its change and the node objects
// the change's result adds to its base (replica.BodyObjects), at most
// dag.MaxEntryObjects (256) of them. Counted by hand on housetest's seed
// of 3 sections (/us, /us/t1, /us/t1/s1..s3): inserting under /us/t1 a
// section /us/t1/s4 with k subsections adds k+1 new node objects and
// changes the hashes of its two ancestors, /us/t1 and /us, so the append
// names 1 (the change) + (k+1) + 2 = k+4 objects; s1..s3 are unchanged
// and were in the base. With k = 253 (257 objects) the node refuses the
// append over HTTP with schema, a signed rejection for the id computed
// here, a detail naming the limit, and keeps nothing: not the entry in
// /log, not the change object. With k = 252 (256 objects) it accepts
// it, /log serves it with all 256, and a second node that relays the
// first's /log holds each of them and derives the same state. (A peer
// admits an append from its change alone, recomputing the result, so
// an append of 257 would converge too, one node object short: that is
// what the last checks would see.)
func TestBranchAppendNamingTooManyObjectsRefused(t *testing.T) {
	a, b := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{}, 3)
	bl := s.b
	s.do(t, a, bl.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, bl.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))

	// insert is the op adding section /us/t1/s4 with k subsections after
	// /us/t1/s3.
	insert := func(k int) statute.Op {
		sec := statute.NodeSpec{NID: "/us/t1/s4", Kind: "section", Heading: "Section 4"}
		for i := 1; i <= k; i++ {
			sec.Children = append(sec.Children, statute.NodeSpec{NID: fmt.Sprintf("/us/t1/s4/%d", i), Kind: "subsection", Text: fmt.Sprintf("Subsection %d: the period is 30 days.", i)})
		}
		return statute.Op{Op: statute.OpInsert, ParentNID: "/us/t1", AfterNID: "/us/t1/s3", Node: &sec}
	}

	big, change := bl.Append(ht.Member(2), "draft", bl.Genesis, []statute.Op{insert(253)}, s.last)
	m := a.refuse(t, big, dag.CodeSchema)
	if d, _ := m["detail"].(string); !strings.Contains(d, "more than 256 objects") || !strings.Contains(d, "branch.append") {
		t.Fatalf("detail %q does not say what the limit is and for which entry", d)
	}
	if st, _, _ := rawDo(t, http.MethodGet, a.srv.URL+httpapi.Base+"/objects/"+bodyID(big.Attach[0]), nil); st != http.StatusNotFound {
		t.Fatalf("GET /objects/{refused change %s}: %d, want 404", change, st)
	}
	if e := logEntry(t, a, txID(t, big.Bytes)); e != nil {
		t.Fatal("the refused append is in /log")
	}

	edge, _ := bl.Append(ht.Member(2), "draft", bl.Genesis, []statute.Op{insert(252)}, s.last)
	// What travels: the attachments (the change, then every node of the
	// result) less the seed's node objects, which came with the create.
	seed := map[string]bool{}
	for _, o := range bl.Create.Attach {
		seed[bodyID(o)] = true
	}
	var travel []string
	for _, o := range edge.Attach {
		if !seed[bodyID(o)] {
			travel = append(travel, bodyID(o))
		}
	}
	if len(travel) != 256 {
		t.Fatalf("the append of 252 subsections adds %d objects, want 256", len(travel))
	}
	s.do(t, a, edge)
	e := logEntry(t, a, txID(t, edge.Bytes))
	if e == nil {
		t.Fatal("the accepted append is not in /log")
	}
	if atts, _ := field(e, "attachments").([]any); len(atts) != 256 {
		t.Fatalf("/log serves the append with %d attachments, want 256", len(atts))
	}
	relay(t, a, b) // GET /log on a, with its attachments, POST /transactions on b
	converged(t, a, b, s.space)
	for _, id := range travel {
		if st, _, _ := rawDo(t, http.MethodGet, b.srv.URL+httpapi.Base+"/objects/"+id, nil); st != http.StatusOK {
			t.Fatalf("the second node answers %d for object %s of the append", st, id)
		}
	}
}

// logEntry is the entry tx of n's /log, or nil.
func logEntry(t *testing.T, n *apiNode, tx string) any {
	t.Helper()
	for _, e := range n.get(t, "/log?limit=1000")["entries"].([]any) {
		if field(e, "tx") == tx {
			return e
		}
	}
	return nil
}

// bodyID is the hash of a canonical body, computed here.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}
