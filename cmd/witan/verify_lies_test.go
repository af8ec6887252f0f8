package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// honest starts an honest node (node key seed 9) holding a session whose
// log is: create, roster, registrar, mr.open, then approving ballots by
// members from..from+2, each the child of the one before; and a
// checkpoint of it. Two honest nodes with different from have different
// histories after position 4 and one key: what a node that rewrote its
// history would serve.
func honest(t *testing.T, from int) (*httptest.Server, *node.Node, string) {
	t.Helper()
	hs, l, h := honestSession(t, from)
	return hs, l, h.b.Session.String()
}

// honestHistory is what honestSession built: the builder, the MR and the
// last entry.
type honestHistory struct {
	b    *ht.Builder
	mr   dag.ID
	last dag.ID
}

// honestSession is honest, returning what it built.
func honestSession(t *testing.T, from int) (*httptest.Server, *node.Node, honestHistory) {
	t.Helper()
	ctx := context.Background()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	l, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Node: l})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); l.Close() })
	b := ht.New(ht.Options{Label: "lies"})
	var last dag.ID
	ok := func(tx ht.Tx) {
		t.Helper()
		if rc, err := l.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		last = tx.ID
	}
	ok(b.Create)
	ok(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), last))
	ok(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, last)
	ok(open)
	for i := from; i < from+3; i++ {
		ok(b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last))
	}
	if _, err := l.Replica().Checkpoint(ctx, b.Session); err != nil {
		t.Fatal(err)
	}
	return hs, l, honestHistory{b, mr, last}
}

// liar serves what upstream serves, except that doctor may rewrite the
// JSON answer of a path (read as a generic object).
func liar(t *testing.T, upstream func(path string) string, doctor func(path string, m map[string]any)) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(upstream(r.URL.Path) + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if doctor != nil && resp.StatusCode == http.StatusOK && json.Unmarshal(b, &m) == nil {
			doctor(r.URL.Path, m)
			b, _ = json.Marshal(m)
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// entries returns the log page's entries (every test log fits one page).
func entries(m map[string]any) []any { e, _ := m["entries"].([]any); return e }

func renumber(es []any) {
	for i, e := range es {
		e.(map[string]any)["position"] = float64(i + 1)
	}
}

// TestVerifyCatchesLies: witan verify exits 3, naming what is wrong, when
// a node serves a log with one entry altered, removed or reordered, a
// checkpoint whose root the log does not reproduce (signed by the node's
// own key), or a history rewritten between two checkpoints read at
// different times, or since a checkpoint saved earlier (-since).
func TestVerifyCatchesLies(t *testing.T) {
	ctx := context.Background()
	hs, _, space := honest(t, 0)
	other, _, _ := honest(t, 5) // the same key and session, another history
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	const logPath = httpapi.Base + "/log"
	const cpPath = httpapi.Base + "/checkpoint"
	to := func(u string) func(string) string { return func(string) string { return u } }

	// The honest node verifies.
	if out, _, code := run(ctx, "", "verify", hs.URL); code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("honest node: exit %d\n%s", code, out)
	}
	// A checkpoint saved now, for -since.
	st, err := http.Get(hs.URL + cpPath)
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := io.ReadAll(st.Body)
	st.Body.Close()
	savedFile := filepath.Join(t.TempDir(), "cp.json")
	if err := os.WriteFile(savedFile, saved, 0o600); err != nil {
		t.Fatal(err)
	}

	// A checkpoint with another root, signed by the node's own key.
	badRoot := func(path string, m map[string]any) {
		if path != cpPath {
			return
		}
		cp, err := httpapi.DecodeCheckpoint(mustJSON(t, m["checkpoint"]))
		if err != nil {
			t.Fatal(err)
		}
		cp.Root = dag.Sum([]byte("another root"))
		msg, _ := cp.SigningBytes()
		cp.Sig = key.Sign(replica.DomainCheckpoint, msg)
		m["checkpoint"] = json.RawMessage(mustJSON(t, cp))
	}
	// The checkpoint of the first history, then of the other.
	reads := 0
	switching := func(path string) string {
		if path == cpPath {
			reads++
			if reads == 1 {
				return hs.URL
			}
		}
		return other.URL
	}

	cases := []struct {
		name string
		srv  *httptest.Server
		args []string
		want string
	}{
		{"altered entry", liar(t, to(hs.URL), func(path string, m map[string]any) {
			if path == logPath {
				env := field(entries(m)[5], "envelope").(map[string]any)
				env["body"].(map[string]any)["choice"] = "reject"
			}
		}), nil, "the entry was altered"},
		{"removed entry, positions kept", liar(t, to(hs.URL), func(path string, m map[string]any) {
			if path == logPath {
				es := entries(m)
				m["entries"] = append(es[:5:5], es[6:]...)
			}
		}), nil, "an entry was removed"},
		{"removed entry, renumbered", liar(t, to(hs.URL), func(path string, m map[string]any) {
			if path == logPath {
				es := entries(m)
				es = append(es[:5:5], es[6:]...)
				renumber(es)
				m["entries"] = es
			}
		}), nil, "the parent removed"},
		{"reordered entries", liar(t, to(hs.URL), func(path string, m map[string]any) {
			if path == logPath {
				es := entries(m)
				es[4], es[5] = es[5], es[4]
				renumber(es)
			}
		}), nil, "reordered"},
		{"checkpoint root not reproduced", liar(t, to(hs.URL), badRoot), nil, "not the checkpoint's root"},
		{"history rewritten between two reads", liar(t, switching, nil), nil, "history was rewritten"},
		{"history rewritten since a saved checkpoint", other, []string{"-since", savedFile}, "the earlier checkpoint (-since): the first 7 served entries hash to"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reads = 0
			args := append(append([]string{"verify", "-session", space}, c.args...), c.srv.URL)
			out, errOut, code := run(ctx, "", args...)
			if code != exitRefused || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d naming %q:\n%s%s", code, exitRefused, c.want, out, errOut)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func field(v any, k string) any {
	m, _ := v.(map[string]any)
	return m[k]
}

// TestVerifyCatchesWithholding (S10, withholding): a node that signed a
// receipt for an entry and later serves a log without it, or a refusal
// log without the refusal it named, passes verify without the receipt
// (nothing in the log betrays it once the entry is past the checkpoint)
// and fails with it (-receipt), naming the receipt.
func TestVerifyCatchesWithholding(t *testing.T) {
	ctx := context.Background()
	hs, _, h := honestSession(t, 0)
	space := h.b.Session.String()
	dir := t.TempDir()
	submit := func(name string, tx ht.Tx) (string, *replica.Receipt) {
		t.Helper()
		body, err := json.Marshal(httpapi.Transaction{Envelope: tx.Bytes})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(hs.URL+httpapi.Base+"/transactions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var a struct {
			Receipt json.RawMessage `json:"receipt"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v: %s", name, err, b)
		}
		rc, err := httpapi.DecodeReceipt(a.Receipt)
		if err != nil {
			t.Fatalf("%s: %v: %s", name, err, b)
		}
		return file, rc
	}
	// Member 5's ballot, after the checkpoint (7 entries): log_index 7
	// (0-based).
	okFile, ok := submit("accepted.json", h.b.Ballot(ht.Member(5), h.mr, "approve", dag.ID{}, h.last))
	if ok.Status != "accepted" || ok.LogIndex == nil || *ok.LogIndex != 7 {
		t.Fatalf("ballot: %+v, want accepted at log_index 7", ok)
	}
	// Member 20 is not in the roster of ten: refused and logged.
	noFile, no := submit("rejected.json", h.b.Ballot(ht.Member(20), h.mr, "approve", dag.ID{}, h.last))
	if no.Status != "rejected" || no.RefusalIndex == nil || *no.RefusalIndex != 0 {
		t.Fatalf("non-member's ballot: %+v, want rejected at refusal_index 0", no)
	}
	receipts := []string{"-receipt", okFile, "-receipt", noFile}
	verify := func(srv *httptest.Server, extra ...string) (string, int) {
		args := append(append([]string{"verify", "-session", space}, extra...), srv.URL)
		out, errOut, code := run(ctx, "", args...)
		return out + errOut, code
	}
	if out, code := verify(hs, receipts...); code != 0 || !strings.Contains(out, "ok   2 receipts") {
		t.Fatalf("honest node with its receipts: exit %d\n%s", code, out)
	}

	const logPath = httpapi.Base + "/log"
	dropLast := liar(t, func(string) string { return hs.URL }, func(path string, m map[string]any) {
		if path == logPath {
			es := entries(m)
			m["entries"] = es[:len(es)-1]
		}
	})
	if out, code := verify(dropLast); code != 0 {
		t.Fatalf("without the receipt the withheld entry is not visible, verify should pass: exit %d\n%s", code, out)
	}
	if out, code := verify(dropLast, "-receipt", okFile); code != exitRefused || !strings.Contains(out, "withheld: receipt "+okFile+" acknowledged tx "+ok.Tx.String()+" at log_index 7, but the log served has 7 entries") {
		t.Fatalf("entry withheld: exit %d, want %d naming it\n%s", code, exitRefused, out)
	}
	// The ballot swapped for the one before it (the log renumbered): the
	// receipt's position holds another entry, and its tx is not served.
	swapped := liar(t, func(string) string { return hs.URL }, func(path string, m map[string]any) {
		if path == logPath {
			es := entries(m)
			m["entries"] = append(es[:len(es)-1:len(es)-1], es[len(es)-2])
			renumber(m["entries"].([]any))
		}
	})
	if out, code := verify(swapped, "-receipt", okFile); code != exitRefused || !strings.Contains(out, "withheld: receipt "+okFile) {
		t.Fatalf("entry replaced: exit %d, want %d\n%s", code, exitRefused, out)
	}
	noRefusals := liar(t, func(string) string { return hs.URL }, func(path string, m map[string]any) {
		if path == httpapi.Base+"/refusals" {
			m["refusals"] = []any{}
			m["size"] = 0
		}
	})
	if out, code := verify(noRefusals, "-receipt", noFile); code != exitRefused || !strings.Contains(out, "withheld: receipt "+noFile+" names refusal_index 0, but the refusal log (size 0) does not serve it") {
		t.Fatalf("refusal withheld: exit %d, want %d naming it\n%s", code, exitRefused, out)
	}
	// A receipt that does not verify is the caller's error, not the node's.
	bad := filepath.Join(dir, "bad.json")
	raw, _ := os.ReadFile(okFile)
	if err := os.WriteFile(bad, bytes.Replace(raw, []byte(`"accepted"`), []byte(`"rejected"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := verify(hs, "-receipt", bad); code == 0 || code == exitRefused || !strings.Contains(out, "-receipt "+bad) {
		t.Fatalf("a receipt whose signature does not verify: exit %d\n%s", code, out)
	}
}
