package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/extract"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// TestWitnessHTTP (D45's co-signed checkpoints, over real listeners): B
// pulls A over HTTP, verifies A's checkpoint and co-signs it back (POST
// /witness); A's extract carries B's cosignature and verifies with B
// required. A grows: B's next pull verifies A's consistency proof and
// co-signs the new checkpoint, which the extract then uses. POST /witness
// keeps a third node's valid cosignature too (which witnesses matter is
// the verifier's choice), and refuses, keeping nothing: a cosignature
// that does not verify (bad_signature), a checkpoint A did not sign —
// signed by another key, or by A's key over a root A never had
// (witan:unknown_checkpoint) —, A's own key as witness (schema), and a
// witness beyond replica.MaxWitnesses. When A signs again at the same
// size, the extract is against the very checkpoint B co-signed.
func TestWitnessHTTP(t *testing.T) {
	ctx := context.Background()
	a, b := newNode(t), newNodeSeed(t, 9)
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	keyC, _ := dag.SignerFromSeed(bytes.Repeat([]byte{11}, 32))
	s := a.newSession(t)
	a.checkpointNow(t, s.space)
	peer := node.NewHTTPPeer(a.srv.URL, nil)
	pull := func(cp, witness string) {
		t.Helper()
		res, err := b.node.PullHTTP(ctx, peer)
		if err != nil || len(res) != 1 || res[0].Checkpoint != cp || res[0].Witness != witness {
			t.Fatalf("pull: %+v %v, want checkpoint %s, witness %s", res, err, cp, witness)
		}
	}
	getExtract := func(tx dag.ID) ([]byte, *extract.Entry, replica.Checkpoint) {
		t.Helper()
		resp, err := http.Get(a.srv.URL + httpapi.Base + "/extract/" + tx.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("extract: %d %s", resp.StatusCode, body)
		}
		x, cp, err := extract.Verify(body, keyA.Key())
		if err != nil {
			t.Fatalf("extract: %v\n%s", err, body)
		}
		return body, x, cp
	}
	pull("first_seen", "sent")
	pull("consistent", "already_sent")
	raw, x, cp1 := getExtract(s.last)
	if len(x.Cosigned) != 1 || x.Cosigned[0].Witness != keyB.Key() {
		t.Fatalf("cosigned %+v", x.Cosigned)
	}
	if _, _, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyB.Key()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyC.Key()}); err == nil {
		t.Fatal("C required, C never co-signed: verifies")
	}

	// A grows; B's next pull checks consistency and co-signs the new one.
	first := s.last
	a.submit(t, s, s.b.Ballot(ht.Member(0), s.mr, "approve", dag.ID{}, s.last))
	a.checkpointNow(t, s.space)
	pull("consistent", "sent")
	_, x, cp2 := getExtract(first)
	if cp2.Size != cp1.Size+1 || len(x.Cosigned) != 1 || x.Cosigned[0].Witness != keyB.Key() {
		t.Fatalf("after A grew: checkpoint size %d (was %d), cosigned %+v", cp2.Size, cp1.Size, x.Cosigned)
	}

	post := func(body []byte) (int, string) {
		t.Helper()
		st, _, m := rawDo(t, http.MethodPost, a.srv.URL+httpapi.Base+"/witness", body)
		code, _ := m["code"].(string)
		return st, code
	}
	req := func(cp replica.Checkpoint, witness dag.Key, sig []byte) []byte {
		out, err := json.Marshal(map[string]any{"checkpoint": cp, "cosignature": map[string]any{"witness": witness, "sig": base64.RawURLEncoding.EncodeToString(sig)}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cosign := func(k *dag.Signer, cp replica.Checkpoint) []byte {
		msg, err := cp.SigningBytes()
		if err != nil {
			t.Fatal(err)
		}
		return k.Sign(replica.DomainWitness, msg)
	}
	// Refused, nothing kept.
	forged := replica.Checkpoint{Space: s.space, Size: cp2.Size, Root: dag.Sum([]byte("another history")), TS: cp2.TS, Node: keyA.Key()}
	msg, _ := forged.SigningBytes()
	forged.Sig = keyA.Sign(replica.DomainCheckpoint, msg)
	ofC := cp2
	ofC.Node = keyC.Key()
	msg, _ = ofC.SigningBytes()
	ofC.Sig = keyC.Sign(replica.DomainCheckpoint, msg)
	for _, c := range []struct {
		name string
		body []byte
		st   int
		code string
	}{
		{"sig over the earlier checkpoint", req(cp2, keyC.Key(), cosign(keyC, cp1)), 400, "bad_signature"},
		{"sig by another key", req(cp2, keyC.Key(), cosign(keyB, cp2)), 400, "bad_signature"},
		{"checkpoint signed by A's key over a root A never had", req(forged, keyC.Key(), cosign(keyC, forged)), 422, "witan:unknown_checkpoint"},
		{"checkpoint of another node", req(ofC, keyB.Key(), cosign(keyB, ofC)), 422, "witan:unknown_checkpoint"},
		{"A witnessing itself", req(cp2, keyA.Key(), cosign(keyA, cp2)), 400, "schema"},
		{"not JSON", []byte(`{"checkpoint":`), 400, "schema"},
	} {
		if st, code := post(c.body); st != c.st || code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, code, c.st, c.code)
		}
	}
	if _, x, _ := getExtract(first); len(x.Cosigned) != 1 {
		t.Fatalf("a refused cosignature was kept: %+v", x.Cosigned)
	}
	// C's valid cosignature is kept beside B's, sorted by key.
	if st, code := post(req(cp2, keyC.Key(), cosign(keyC, cp2))); st != 200 {
		t.Fatalf("C's cosignature: %d %s", st, code)
	}
	raw, x, _ = getExtract(first)
	if len(x.Cosigned) != 2 || x.Cosigned[0].Witness.String() >= x.Cosigned[1].Witness.String() {
		t.Fatalf("cosigned %+v", x.Cosigned)
	}
	if _, _, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyB.Key(), keyC.Key()}); err != nil {
		t.Fatal(err)
	}
	// At most MaxWitnesses witnesses per session: two are kept, so
	// MaxWitnesses-2 more are, and the next is refused.
	for i := 0; i <= replica.MaxWitnesses-2; i++ {
		k, _ := dag.SignerFromSeed(bytes.Repeat([]byte{byte(100 + i)}, 32))
		st, code := post(req(cp2, k.Key(), cosign(k, cp2)))
		if i < replica.MaxWitnesses-2 && st != 200 || i == replica.MaxWitnesses-2 && st != 400 {
			t.Fatalf("witness %d: %d %s", i+3, st, code)
		}
	}
	// A signs again at the same size, later (same root, another ts): B
	// co-signs the new checkpoint, and the extract is against the very
	// checkpoint B co-signed, not the earlier one of the same size (which
	// C and the others co-signed).
	a.clk.t = a.clk.t.Add(time.Hour)
	a.checkpointNow(t, s.space)
	pull("consistent", "sent")
	raw, x, cp3 := getExtract(first)
	if cp3.Size != cp2.Size || cp3.TS.Equal(cp2.TS) || len(x.Cosigned) != 1 || x.Cosigned[0].Witness != keyB.Key() {
		t.Fatalf("same size again: checkpoint %d at %v (was %v), cosigned %+v", cp3.Size, cp3.TS, cp2.TS, x.Cosigned)
	}
	if _, _, err := extract.VerifyWitnessed(raw, keyA.Key(), []dag.Key{keyB.Key()}); err != nil {
		t.Fatal(err)
	}
}

// TestWitnessAllowList: with Options.Witnesses (witan up -witness-key),
// POST /witness keeps only the named witnesses' cosignatures: another
// key's valid cosignature is 403 forbidden and not in the extract; the
// named witness's is kept.
func TestWitnessAllowList(t *testing.T) {
	a := newNode(t)
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	keyC, _ := dag.SignerFromSeed(bytes.Repeat([]byte{11}, 32))
	s := a.newSession(t)
	a.checkpointNow(t, s.space)
	srv, err := httpapi.New(httpapi.Options{Node: a.node, Witnesses: []dag.Key{keyB.Key()}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	cp, _ := a.node.Replica().LastCheckpoint(dag.MustParseID(s.space))
	msg, _ := cp.SigningBytes()
	post := func(k *dag.Signer) (int, string) {
		body, _ := json.Marshal(map[string]any{"checkpoint": cp, "cosignature": map[string]any{"witness": k.Key(), "sig": base64.RawURLEncoding.EncodeToString(k.Sign(replica.DomainWitness, msg))}})
		st, _, m := rawDo(t, http.MethodPost, hs.URL+httpapi.Base+"/witness", body)
		code, _ := m["code"].(string)
		return st, code
	}
	if st, code := post(keyC); st != http.StatusForbidden || code != string(httpapi.CodeForbidden) {
		t.Fatalf("C, not named: %d %s", st, code)
	}
	if got := a.node.Replica().Cosignatures(cp); len(got) != 0 {
		t.Fatalf("kept %+v", got)
	}
	if st, code := post(keyB); st != http.StatusOK {
		t.Fatalf("B, named: %d %s", st, code)
	}
	if got := a.node.Replica().Cosignatures(cp); len(got) != 1 || got[0].Witness != keyB.Key() {
		t.Fatalf("kept %+v", got)
	}
}
