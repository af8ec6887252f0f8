package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// peersSpy records whether POST /peers reached the federation.
type peersSpy struct{ connects int }

func (p *peersSpy) Peers() []httpapi.Peer { return nil }
func (p *peersSpy) Pulls() []httpapi.Pull { return nil }
func (p *peersSpy) Connect(context.Context, string, []string) ([]httpapi.SyncResult, error) {
	p.connects++
	return nil, nil
}

func guarded(t *testing.T, o httpapi.Options) (*httptest.Server, *node.Node) {
	t.Helper()
	n, err := node.Open(context.Background(), node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	o.Node = n
	s, err := httpapi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); n.Close() })
	return srv, n
}

type req struct {
	method, path, host, origin, ctype, auth string
	body                                    []byte
}

func send(t *testing.T, srv *httptest.Server, r req) (int, dag.Code) {
	t.Helper()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, srv.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		hr.Host = r.host
	}
	for k, v := range map[string]string{"Origin": r.origin, "Content-Type": r.ctype, "Authorization": r.auth} {
		if v != "" {
			hr.Header.Set(k, v)
		}
	}
	resp, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p httpapi.Problem
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &p) //nolint:errcheck // not every answer is a problem
	return resp.StatusCode, p.Code
}

func txBody(tx ht.Tx) []byte {
	t := httpapi.Transaction{Envelope: tx.Bytes}
	for _, a := range tx.Attach {
		w, err := dag.AttachmentWire(a)
		if err != nil {
			panic(err)
		}
		t.Attachments = append(t.Attachments, w)
	}
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return b
}

// A web page in the user's browser, on another site, cannot write to the
// node: a cross-site POST (form-like or fetch with JSON) is refused and
// nothing of it is kept; a DNS-rebinding page (its own name in Host) is
// refused even for reads; the node's own origin and non-browser clients
// write as before. On 9f8fa68 every one of these was served.
func TestCrossSiteRequestsRefused(t *testing.T) {
	srv, n := guarded(t, httpapi.Options{})
	b := ht.New(ht.Options{Simulation: true})
	tx := httpapi.Base + "/transactions"

	// A form posted from https://evil.example (a "simple" request: no
	// preflight), and the same as fetch with a JSON body.
	for _, r := range []req{
		{method: "POST", path: tx, origin: "https://evil.example", ctype: "text/plain", body: txBody(b.Create)},
		{method: "POST", path: tx, origin: "https://evil.example", ctype: "application/json", body: txBody(b.Create)},
		{method: "POST", path: tx, origin: "null", ctype: "application/json", body: txBody(b.Create)},
	} {
		if st, code := send(t, srv, r); st != http.StatusForbidden || code != httpapi.CodeForbidden {
			t.Fatalf("cross-site POST (Origin %s, %s): %d %s, want 403 %s", r.origin, r.ctype, st, code, httpapi.CodeForbidden)
		}
	}
	// No Origin, not JSON (what a form or a script with no CORS sends as
	// text/plain): refused.
	if st, code := send(t, srv, req{method: "POST", path: tx, ctype: "text/plain", body: txBody(b.Create)}); st != http.StatusUnsupportedMediaType || code != httpapi.CodeUnsupportedMediaType {
		t.Fatalf("text/plain POST: %d %s, want 415", st, code)
	}
	if got := n.Replica().Sessions(); len(got) != 0 {
		t.Fatalf("refused requests made sessions %v", got)
	}
	// DNS rebinding: a page of evil.example resolved to 127.0.0.1.
	if st, code := send(t, srv, req{method: "GET", path: httpapi.Base + "/sessions", host: "evil.example:8030"}); st != http.StatusForbidden || code != httpapi.CodeForbidden {
		t.Fatalf("rebinding GET: %d %s, want 403", st, code)
	}
	if st, _ := send(t, srv, req{method: "GET", path: httpapi.Base + "/sessions", host: "localhost"}); st != http.StatusOK {
		t.Fatalf("GET with Host localhost: %d", st)
	}
	// The node's own page, and a command-line client, write.
	if st, code := send(t, srv, req{method: "POST", path: tx, origin: srv.URL, ctype: "application/json", body: txBody(b.Create)}); st != http.StatusOK {
		t.Fatalf("same-origin POST: %d %s", st, code)
	}
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	if st, code := send(t, srv, req{method: "POST", path: tx, ctype: "application/json; charset=utf-8", body: txBody(roster)}); st != http.StatusOK {
		t.Fatalf("client POST: %d %s", st, code)
	}
}

// POST /peers makes the node dial any address: only the operator may.
func TestPeersIsAnOperatorAction(t *testing.T) {
	body := []byte(`{"addr":"/ip4/192.0.2.1/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"}`)
	post := req{method: "POST", path: httpapi.Base + "/peers", ctype: "application/json", body: body}

	spy := &peersSpy{}
	srv, _ := guarded(t, httpapi.Options{Peers: spy, OperatorToken: "s3cret"})
	if st, code := send(t, srv, post); st != http.StatusForbidden || code != httpapi.CodeForbidden {
		t.Fatalf("POST /peers without the token: %d %s", st, code)
	}
	wrong := post
	wrong.auth = "Bearer guess"
	if st, _ := send(t, srv, wrong); st != http.StatusForbidden {
		t.Fatalf("POST /peers with a wrong token: %d", st)
	}
	if spy.connects != 0 {
		t.Fatalf("the node dialled for a refused request")
	}
	right := post
	right.auth = "Bearer s3cret"
	if st, code := send(t, srv, right); st != http.StatusOK || spy.connects != 1 {
		t.Fatalf("POST /peers with the token: %d %s, %d connects", st, code, spy.connects)
	}
	// Loopback clients, when the node allows them (witan up does), but
	// never a cross-site page among them.
	spy2 := &peersSpy{}
	srv2, _ := guarded(t, httpapi.Options{Peers: spy2, LoopbackOperator: true})
	if st, _ := send(t, srv2, post); st != http.StatusOK || spy2.connects != 1 {
		t.Fatalf("loopback POST /peers: %d", st)
	}
	evil := post
	evil.origin = "https://evil.example"
	if st, _ := send(t, srv2, evil); st != http.StatusForbidden || spy2.connects != 1 {
		t.Fatalf("cross-site POST /peers from the user's browser: %d", st)
	}
}

// Writes are rate limited per client, and key.register more tightly; a
// loopback client only when asked (LimitLoopback).
func TestWriteLimits(t *testing.T) {
	free, _ := guarded(t, httpapi.Options{WriteRate: 1, WriteBurst: 1, KeyRegisterPerHour: 1})
	fb := ht.New(ht.Options{Simulation: true})
	for i, x := range []ht.Tx{fb.Create, fb.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), fb.Create.ID)} {
		if st, code := send(t, free, req{method: "POST", path: httpapi.Base + "/transactions", ctype: "application/json", body: txBody(x)}); st != http.StatusOK {
			t.Fatalf("loopback write %d without LimitLoopback: %d %s", i, st, code)
		}
	}
	// The test's client is on loopback, which is not limited unless
	// LimitLoopback: a LAN client is.
	srv, _ := guarded(t, httpapi.Options{WriteRate: 1, WriteBurst: 6, KeyRegisterPerHour: 2, LimitLoopback: true})
	b := ht.New(ht.Options{Simulation: true})
	tx := httpapi.Base + "/transactions"
	post := func(x ht.Tx) (int, dag.Code) {
		return send(t, srv, req{method: "POST", path: tx, ctype: "application/json", body: txBody(x)})
	}
	if st, code := post(b.Create); st != http.StatusOK {
		t.Fatalf("session.create: %d %s", st, code)
	}
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	if st, code := post(roster); st != http.StatusOK {
		t.Fatalf("roster: %d %s", st, code)
	}
	for i := range 3 {
		st, code := post(b.KeyRegister(ht.Member(10+i), roster.ID))
		if i < 2 && st != http.StatusOK {
			t.Fatalf("key.register %d: %d %s", i, st, code)
		}
		if i == 2 && (st != http.StatusTooManyRequests || code != dag.CodeRateLimited) {
			t.Fatalf("key.register past the hourly allowance: %d %s, want 429 rate_limited", st, code)
		}
	}
	// 5 writes so far of a burst of 6: the next passes, the one after not.
	if st, _ := post(b.KeyRegister(ht.Member(20), roster.ID)); st != http.StatusTooManyRequests {
		t.Fatalf("sixth write: %d (the key.register allowance is spent)", st)
	}
	st, code := post(b.GroupCreate(ht.Member(0), "g", ht.Members(0, 2), ht.Members(0, 1), roster.ID))
	if st != http.StatusTooManyRequests || code != dag.CodeRateLimited {
		t.Fatalf("write past the burst: %d %s, want 429", st, code)
	}
}

// Forgeries posted by one client leave a bounded record, paged, charged to
// that client; nothing of them is stored.
func TestQuarantinePagedAndBounded(t *testing.T) {
	n, err := node.Open(context.Background(), node.Options{InMemory: true, Replica: replica.Options{QuarantinePerSource: 3}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer func() { srv.Close(); n.Close() }()
	b := ht.New(ht.Options{Simulation: true})
	tx := httpapi.Base + "/transactions"
	for _, x := range []ht.Tx{b.Create} {
		if st, code := send(t, srv, req{method: "POST", path: tx, ctype: "application/json", body: txBody(x)}); st != http.StatusOK {
			t.Fatalf("setup: %d %s", st, code)
		}
	}
	key := b.KeyRegister(ht.Member(1), b.Create.ID)
	var forged []dag.ID
	for k := range 5 {
		env := *key.Env
		env.Sig = bytes.Clone(env.Sig)
		env.Sig[k] ^= 1
		f := ht.Tx{Env: &env, Bytes: env.Canonical(), ID: env.ID()}
		if st, code := send(t, srv, req{method: "POST", path: tx, ctype: "application/json", body: txBody(f)}); st != http.StatusBadRequest || code != dag.CodeBadSignature {
			t.Fatalf("forgery %d: %d %s", k, st, code)
		}
		forged = append(forged, f.ID)
		if st, _ := n.Store().Has(context.Background(), f.ID); st != dag.Absent {
			t.Fatalf("forgery %d stored as %s", k, st)
		}
	}
	c := &httpapi.Client{BaseURL: srv.URL}
	var page struct {
		Quarantine []httpapi.QuarantineEntry   `json:"quarantine"`
		Next       uint64                      `json:"next"`
		Stats      struct{ Held, Evicted int } `json:"stats"`
	}
	if err := c.Get(context.Background(), "/quarantine", map[string][]string{"limit": {"2"}}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Quarantine) != 2 || page.Next == 0 || page.Stats.Held != 3 || page.Stats.Evicted != 2 {
		t.Fatalf("first page %+v", page)
	}
	if e := page.Quarantine[0]; e.ID != forged[2] || e.Source != "http:127.0.0.1" || e.Code != dag.CodeBadSignature || e.Time == "" {
		t.Fatalf("oldest record kept %+v, want forgery 2 from http:127.0.0.1", e)
	}
	next := page.Next
	page.Next = 0
	if err := c.Get(context.Background(), "/quarantine", map[string][]string{"after": {fmt.Sprint(next)}}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Quarantine) != 1 || page.Quarantine[0].ID != forged[4] || page.Next != 0 {
		t.Fatalf("second page %+v", page)
	}
}

// A key.register by a small-order key is refused: ZIP-215 accepts the
// forgery R = identity, S = 0 for such a key and any message, so anyone
// could sign as it (dag.Key.SmallOrder). The test forges one: the
// envelope's signature verifies, and admission refuses the key.
func TestKeyRegisterSmallOrderRefused(t *testing.T) {
	srv, _ := guarded(t, httpapi.Options{})
	b := ht.New(ht.Options{Simulation: true})
	tx := httpapi.Base + "/transactions"
	post := func(env []byte) (int, dag.Code) {
		body, err := json.Marshal(httpapi.Transaction{Envelope: env})
		if err != nil {
			t.Fatal(err)
		}
		return send(t, srv, req{method: "POST", path: tx, ctype: "application/json", body: body})
	}
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	for _, x := range []ht.Tx{b.Create, roster} {
		if st, code := send(t, srv, req{method: "POST", path: tx, ctype: "application/json", body: txBody(x)}); st != http.StatusOK {
			t.Fatalf("setup: %d %s", st, code)
		}
	}
	// An honest key.register, rewritten to the all-zero key (y = 0, a
	// point of order 4) with the forged signature.
	honest := b.KeyRegister(ht.Member(10), roster.ID)
	var env map[string]any
	d := json.NewDecoder(bytes.NewReader(honest.Bytes))
	d.UseNumber()
	if err := d.Decode(&env); err != nil {
		t.Fatal(err)
	}
	zero, err := dag.KeyFromBytes(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	forged := make([]byte, 64)
	forged[0] = 1 // R = the identity (y = 1), S = 0
	if env["author"] != ht.Member(10).Key().String() {
		t.Fatalf("envelope author %v: the rewrite below assumes an \"author\" member", env["author"])
	}
	env["author"] = zero.String()
	env["body"] = map[string]any{"key": zero.String()}
	env["sig"] = base64.RawURLEncoding.EncodeToString(forged)
	raw, err := dag.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := maps.Clone(env)
	delete(unsigned, "sig")
	msg, err := dag.Marshal(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	if !dag.Verify(zero, dag.DomainEnvelope, msg, forged) {
		t.Fatal("the forgery does not verify: the test no longer exercises the small-order rule")
	}
	if st, code := post(raw); st != http.StatusBadRequest || code != dag.CodeSchema {
		t.Fatalf("key.register of a small-order key: %d %s, want 400 schema", st, code)
	}
}
