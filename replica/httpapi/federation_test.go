package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// TestHTTPFederation (30k §9): two witan nodes, no libp2p at all; B pulls
// A over plain HTTP and converges on A's heads and state hash, again after
// A grows; a lying peer serving a forged ballot (its choice changed after
// signing) gets it quarantined with bad_signature, and B's state is
// unchanged.
func TestHTTPFederation(t *testing.T) {
	ctx := context.Background()
	a, b := newNode(t), newNode(t)
	s := a.newSession(t)
	peer := node.NewHTTPPeer(a.srv.URL, nil)
	converge := func(what string) {
		t.Helper()
		res, err := b.node.PullHTTP(ctx, peer)
		if err != nil || len(res) != 1 || res[0].Quarantined != 0 {
			t.Fatalf("%s: pull %+v %v", what, res, err)
		}
		ha, _ := a.node.Heads(ctx, s.space)
		hb, _ := b.node.Heads(ctx, s.space)
		_, sa, err1 := a.node.Replica().State(ctx, dag.MustParseID(s.space))
		_, sb, err2 := b.node.Replica().State(ctx, dag.MustParseID(s.space))
		if err1 != nil || err2 != nil || !slices.Equal(ha, hb) || sa != sb {
			t.Fatalf("%s: heads %v / %v, state %s / %s (%v %v)", what, ha, hb, sa, sb, err1, err2)
		}
	}
	converge("first pull")
	for i := 0; i < 3; i++ {
		a.submit(t, s, s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last))
	}
	converge("after A grew")

	// A lying peer: A's log with a ballot whose choice was changed.
	forged := s.b.Ballot(ht.Member(5), s.mr, "approve", dag.ID{}, s.last)
	bad := bytes.Replace(forged.Bytes, []byte(`"approve"`), []byte(`"reject"`), 1)
	if bytes.Equal(bad, forged.Bytes) {
		t.Fatal("the forgery changed nothing")
	}
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case httpapi.Base + "/sessions":
			json.NewEncoder(w).Encode(map[string]any{"sessions": []string{s.space}, "finality": "provisional"})
		case httpapi.Base + "/log":
			json.NewEncoder(w).Encode(httpapi.LogPage{Entries: []httpapi.LogEntry{{Position: 1, Tx: forged.ID, Envelope: bad, Attachments: []json.RawMessage{}, Finality: "provisional"}}, Finality: "provisional"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer liar.Close()
	_, before, _ := b.node.Replica().State(ctx, dag.MustParseID(s.space))
	res, err := b.node.PullHTTP(ctx, node.NewHTTPPeer(liar.URL, nil))
	if err != nil || len(res) != 1 || res[0].Quarantined != 1 || res[0].Accepted != 0 {
		t.Fatalf("pull from the liar: %+v %v", res, err)
	}
	_, after, _ := b.node.Replica().State(ctx, dag.MustParseID(s.space))
	q, err := b.node.Quarantine(ctx, s.space)
	if err != nil || after != before || len(q) != 1 || q[0].Code != dag.CodeBadSignature {
		t.Fatalf("after the liar: state %s -> %s, quarantine %+v %v", before, after, q, err)
	}
}
