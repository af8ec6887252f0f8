package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
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

// bodyID is the hash of a canonical body, computed here.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}
