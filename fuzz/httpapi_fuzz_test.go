package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// httpNode is one in-memory node shared by a fuzz process: opening Badger
// per input would dominate the run.
var httpNode = sync.OnceValues(func() (http.Handler, error) {
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		return nil, err
	}
	l, err := node.Open(context.Background(), node.Options{InMemory: true, NodeKey: key})
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Options{Node: l, MaxBodyBytes: 64 << 10})
})

// checkAnswer fails unless rec is JSON with finality (2xx) or a
// problem+json with a code and a 4xx/5xx status other than 500.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("answer %d is not JSON: %q", rec.Code, rec.Body.String())
	}
	switch {
	case rec.Code == http.StatusInternalServerError:
		t.Fatalf("internal error: %s", rec.Body.String())
	case rec.Code >= 400:
		if rec.Header().Get("Content-Type") != httpapi.ContentTypeProblem || m["code"] == nil || m["code"] == "" {
			t.Fatalf("error %d is not a problem with a code: %s", rec.Code, rec.Body.String())
		}
	default:
		if f := m["finality"]; f != "provisional" && f != "final_advisory" {
			t.Fatalf("answer without finality: %s", rec.Body.String())
		}
	}
}

// FuzzHTTPTransactions: any POST /transactions body gets a receipt or a
// problem+json with a 30k code, never a 500 or a non-JSON answer.
func FuzzHTTPTransactions(f *testing.F) {
	s, _ := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	e := &dag.Envelope{Type: dag.TxBallotCast, Session: dag.Sum([]byte("s")), Parents: []dag.ID{dag.Sum([]byte("p"))},
		Body: []byte(`{"choice":"approve"}`), TS: "2026-09-21T12:00:00Z"}
	b, _, _ := e.Seal(s)
	f.Add([]byte(`{"envelope":` + string(b) + `,"attachments":[]}`))
	f.Add([]byte(`{"envelope":` + string(b) + `,"attachments":[{"a":1},"x"]}`))
	f.Add([]byte(`{"envelope":null}`))
	f.Add([]byte(`{"envelope":{}} {}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		h, err := httpNode()
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, httpapi.Base+"/transactions", bytes.NewReader(body)))
		checkAnswer(t, rec)
		if rec.Code < 300 {
			var a httpapi.ReceiptAnswer
			if json.Unmarshal(rec.Body.Bytes(), &a) != nil {
				t.Fatal("accepted without a receipt")
			}
			rc, err := httpapi.DecodeReceipt(a.Receipt)
			if err != nil || rc.Verify() != nil {
				t.Fatalf("receipt does not verify: %v", err)
			}
		}
	})
}

// FuzzHTTPQuery: any path and query on a GET gets JSON with finality or
// a problem, never a 500: cursors, limits, ids, levels are all parsed
// from untrusted text.
func FuzzHTTPQuery(f *testing.F) {
	f.Add("/log", "after="+httpapi.EncodeCursor(3)+"&limit=2")
	f.Add("/log", "after=bG9nMTotMQ&limit=0")
	f.Add("/objects/sha256:zz", "")
	f.Add("/memory/a/blocks/"+dag.Sum(nil).String(), "level=-5")
	f.Add("/branches/x/tree", "nid=/us&session=sha256:00")
	f.Add("/merge-requests/"+dag.Sum(nil).String()+"/tally", "by=region")
	f.Fuzz(func(t *testing.T, path, query string) {
		h, err := httpNode()
		if err != nil {
			t.Fatal(err)
		}
		u := &url.URL{Path: httpapi.Base + "/" + strings.TrimPrefix(path, "/"), RawQuery: query}
		if strings.ContainsAny(path, "\x00?#") {
			return
		}
		req, err := http.NewRequest(http.MethodGet, u.String(), nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect || rec.Code == http.StatusPermanentRedirect {
			return // ServeMux cleaning a path like /a/../b
		}
		checkAnswer(t, rec)
	})
}

// FuzzHTTPMemoryBlock: any POST of a block is stored (201, and then
// readable at level 0 without confidence) or refused with a CAT7 code.
func FuzzHTTPMemoryBlock(f *testing.F) {
	root := mb.Block{Body: mb.MustText("pier 2 is closed"), Confidence: mb.MustValue("9"), Lineage: mb.MustParents()}.Seal()
	f.Add(root.Encode())
	f.Add(mb.Block{Body: mb.MustText("child"), Lineage: mb.MustParents(root.ID())}.Seal().Encode())
	f.Add([]byte(`{"colour":"red"}`))
	f.Add([]byte(`{"body":"x","hash":"sha256:00"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		h, err := httpNode()
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, httpapi.Base+"/memory/fuzz/blocks", bytes.NewReader(body)))
		checkAnswer(t, rec)
		if rec.Code != http.StatusCreated {
			return
		}
		var a httpapi.PutBlockAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, httpapi.Base+"/memory/fuzz/blocks/"+a.Hash.String(), nil))
		checkAnswer(t, rec)
		var br map[string]any
		json.Unmarshal(rec.Body.Bytes(), &br)
		acc, _ := br["accepted"].(map[string]any)
		if rec.Code != http.StatusOK || acc == nil {
			t.Fatalf("stored block not readable: %s", rec.Body.String())
		}
		if _, ok := acc["confidence"]; ok {
			t.Fatalf("confidence travels: %s", rec.Body.String())
		}
	})
}

// FuzzHTTPDecodeCheckpoint: the client's decoders of a node's signed
// objects never panic, and a decoded checkpoint that verifies re-encodes
// to bytes that decode and verify again.
func FuzzHTTPDecodeCheckpoint(f *testing.F) {
	f.Add([]byte(`{"size":1,"root":"sha256:` + strings.Repeat("0", 64) + `","ts":"2026-09-21T12:00:00Z","node":"ed25519:AAAA","sig":""}`))
	f.Add([]byte(`{"tx":"sha256:00","status":"accepted","errors":null,"sig":"!!"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := httpapi.DecodeCheckpoint(b); err == nil && c.Verify() == nil {
			again, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := httpapi.DecodeCheckpoint(again)
			if err != nil || c2.Verify() != nil {
				t.Fatalf("verified checkpoint does not survive a round trip: %v", err)
			}
		}
		httpapi.DecodeReceipt(b)
	})
}
