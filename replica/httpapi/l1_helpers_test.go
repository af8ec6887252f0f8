package httpapi_test

// Shared helpers for tests that drive a node only through /oth/v0: a
// real node on a loopback listener (newNode, server_test.go), a
// raw POST /transactions of an envelope signed in the test, whose tx id
// the test computes itself (sha256 of the envelope's bytes), and answers
// read as JSON. Nothing here calls the node's Go API except to make a
// checkpoint, which a node's operator (witan up's timer) does.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// txID is a transaction's id as 30k §4 defines it, computed here rather
// than taken from the builder: sha256 over the envelope's canonical
// bytes, signature included.
func txID(t testing.TB, envelope []byte) string {
	t.Helper()
	c, err := dag.Canonicalize(envelope)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// wireTx is the body of POST /transactions for tx: the envelope and its
// attachments in their wire form (plain-text documents as JSON strings).
func wireTx(t testing.TB, tx ht.Tx) []byte {
	t.Helper()
	atts := make([]json.RawMessage, 0, len(tx.Attach))
	for _, a := range tx.Attach {
		w, err := dag.AttachmentWire(a)
		if err != nil {
			t.Fatal(err)
		}
		atts = append(atts, w)
	}
	b, err := json.Marshal(map[string]any{"envelope": json.RawMessage(tx.Bytes), "attachments": atts})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawDo does one request and returns the status, the content type and
// the answer decoded as a JSON object.
func rawDo(t testing.TB, method, url string, body []byte) (int, string, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %d, not a JSON object: %.300s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), m
}

// post submits tx through POST /transactions and returns the status and
// the answer.
func (n *apiNode) post(t testing.TB, tx ht.Tx) (int, map[string]any) {
	t.Helper()
	st, _, m := rawDo(t, http.MethodPost, n.srv.URL+httpapi.Base+"/transactions", wireTx(t, tx))
	return st, m
}

// accept submits tx and fails unless it is accepted with a receipt for
// the id the test computed.
func (n *apiNode) accept(t testing.TB, tx ht.Tx) string {
	t.Helper()
	id := txID(t, tx.Bytes)
	st, m := n.post(t, tx)
	rc, _ := m["receipt"].(map[string]any)
	if st != http.StatusOK || rc == nil || rc["status"] != "accepted" || rc["tx"] != id {
		t.Fatalf("%s: %d %v, want accepted %s", tx.Env.Type, st, m, id)
	}
	return id
}

// refuse submits tx and fails unless it is refused with a problem+json
// of code, carrying a signed rejection receipt, and nothing is stored:
// /objects/{tx id} is 404.
func (n *apiNode) refuse(t testing.TB, tx ht.Tx, code dag.Code) map[string]any {
	t.Helper()
	id := txID(t, tx.Bytes)
	st, ct, m := rawDo(t, http.MethodPost, n.srv.URL+httpapi.Base+"/transactions", wireTx(t, tx))
	if st < 400 || ct != httpapi.ContentTypeProblem || m["code"] != string(code) {
		t.Fatalf("%s: %d %s %v, want a %s problem", tx.Env.Type, st, ct, m, code)
	}
	if rc, _ := m["receipt"].(map[string]any); rc == nil || rc["status"] != "rejected" || rc["tx"] != id {
		t.Fatalf("%s: rejection receipt %v, want one for %s", tx.Env.Type, m["receipt"], id)
	}
	if st, _, _ := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+"/objects/"+id, nil); st != http.StatusNotFound {
		t.Fatalf("%s: refused %s but /objects answers %d", tx.Env.Type, id, st)
	}
	return m
}

// get reads path (under /oth/v0, with its query) as a JSON object and
// fails unless the answer is 200 application/json.
func (n *apiNode) get(t testing.TB, path string) map[string]any {
	t.Helper()
	st, ct, m := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+path, nil)
	if st != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET %s: %d %s %v", path, st, ct, m)
	}
	return m
}

// checkpoint has the node sign a checkpoint of space, as witan up does
// on its timer.
func (n *apiNode) checkpointNow(t testing.TB, space string) {
	t.Helper()
	if _, err := n.node.Replica().Checkpoint(context.Background(), dag.MustParseID(space)); err != nil {
		t.Fatal(err)
	}
}

// field walks a JSON answer along keys (object members, or array indexes
// given as ints).
func field(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// l1Session is a session driven over HTTP: a builder whose envelopes the
// test signs, and the last accepted tx (the parent of the next).
type l1Session struct {
	b     *ht.Builder
	space string
	last  dag.ID
}

// do accepts tx on n and makes it the last entry.
func (s *l1Session) do(t testing.TB, n *apiNode, tx ht.Tx) dag.ID {
	t.Helper()
	n.accept(t, tx)
	s.last = tx.ID
	return tx.ID
}

// startSession creates a session on n over HTTP with a roster of members
// 0..roster-1 (admin 0), a registrar (member 0) and the group "drafters"
// (members 1, 2; admin 1).
func startSession(t testing.TB, n *apiNode, o ht.Options, roster int) *l1Session {
	t.Helper()
	b := ht.New(o)
	s := &l1Session{b: b, space: b.Session.String()}
	s.do(t, n, b.Create)
	s.do(t, n, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, roster), ht.Members(0, 1), s.last))
	s.do(t, n, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	s.do(t, n, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	return s
}

// vote casts ballots of members from..to-1 with choice on mr and returns
// their ids.
func (s *l1Session) vote(t testing.TB, n *apiNode, mr dag.ID, choice string, from, to int) []dag.ID {
	t.Helper()
	var ids []dag.ID
	for i := from; i < to; i++ {
		ids = append(ids, s.do(t, n, s.b.Ballot(ht.Member(i), mr, choice, dag.ID{}, s.last)))
	}
	return ids
}
