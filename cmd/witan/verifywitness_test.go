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
	"github.com/witan-dev/witan/replica/extract"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// TestVerifyExtractWitnessed (D45's co-signed checkpoints): node B pulls
// node A over HTTP (real listeners), verifies A's checkpoint and co-signs
// it (POST /witness back to A); A's extract then carries B's
// cosignature, and with the listeners closed witan verify-extract passes
// with -witness B, fails with -witness of a key that did not co-sign,
// fails with any byte of the cosignature changed, and B's cosignature
// copied onto an extract of A's later checkpoint does not verify.
func TestVerifyExtractWitnessed(t *testing.T) {
	ctx := context.Background()
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{5}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{6}, 32))
	keyC, _ := dag.SignerFromSeed(bytes.Repeat([]byte{8}, 32))
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	a := liveNode(t, keyA, []ht.Tx{b.Create, roster})
	nb := liveNode(t, keyB, nil)
	serve := func(n *node.Node) *httptest.Server {
		s, err := httpapi.New(httpapi.Options{Node: n})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		return srv
	}
	srvA, srvB := serve(a), serve(nb)
	get := func(srv *httptest.Server, path string) []byte {
		resp, err := http.Get(srv.URL + httpapi.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return body
	}
	unwitnessed := get(srvA, "/extract/"+roster.ID.String())
	if !bytes.Contains(unwitnessed, []byte(`"cosigned":[]`)) {
		t.Fatalf("extract before any witness: %s", unwitnessed)
	}
	res, err := nb.PullHTTP(ctx, node.NewHTTPPeer(srvA.URL, nil))
	if err != nil || len(res) != 1 || res[0].Checkpoint != "first_seen" || res[0].Witness != "sent" || res[0].Accepted != 2 {
		t.Fatalf("B pulls A: %+v %v", res, err)
	}
	x := get(srvA, "/extract/"+roster.ID.String())
	var ex struct {
		Checkpoint json.RawMessage `json:"checkpoint"`
		Cosigned   []struct {
			Witness string `json:"witness"`
			Sig     string `json:"sig"`
		} `json:"cosigned"`
	}
	if err := json.Unmarshal(x, &ex); err != nil || len(ex.Cosigned) != 1 || ex.Cosigned[0].Witness != keyB.Key().String() {
		t.Fatalf("extract after B witnessed: %v %s", err, x)
	}
	// A grows and checkpoints again: an extract of the new entry is
	// against the new checkpoint, which no witness co-signed yet.
	registrar := b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), roster.ID)
	submitAll(t, a, []ht.Tx{registrar})
	later := get(srvA, "/extract/"+registrar.ID.String())
	if !bytes.Contains(later, []byte(`"cosigned":[]`)) {
		t.Fatalf("extract of a later checkpoint: %s", later)
	}
	srvA.Close()
	srvB.Close() // no listener from here on

	file := filepath.Join(t.TempDir(), "extract.json")
	run := func(data []byte, args ...string) (int, string) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		err := m.Run(ctx, append(append([]string{"verify-extract"}, args...), file))
		return m.ExitCode(err), out.String() + errb.String()
	}
	if code, out := run(x, "-signer", keyA.Key().String(), "-witness", keyB.Key().String()); code != 0 || !strings.Contains(out, "co-signed by witness "+keyB.Key().String()) {
		t.Fatalf("-witness B: exit %d\n%s", code, out)
	}
	if code, out := run(x); code != 0 {
		t.Fatalf("no -witness: exit %d\n%s", code, out)
	}
	if code, out := run(x, "-witness", keyC.Key().String()); code != exitRefused || !strings.Contains(out, "has not co-signed") {
		t.Fatalf("-witness C (never co-signed): exit %d\n%s", code, out)
	}
	if code, out := run(x, "-witness", keyB.Key().String(), "-witness", keyC.Key().String()); code != exitRefused {
		t.Fatalf("-witness B and C: exit %d\n%s", code, out)
	}
	if code, out := run(unwitnessed, "-witness", keyB.Key().String()); code != exitRefused {
		t.Fatalf("the extract taken before B witnessed, -witness B: exit %d\n%s", code, out)
	}
	if code, out := run(later, "-witness", keyB.Key().String()); code != exitRefused {
		t.Fatalf("the extract of A's later checkpoint, -witness B: exit %d\n%s", code, out)
	}
	// Every byte of the cosignature (its member included) changed fails,
	// with or without -witness.
	at := bytes.Index(x, []byte(`"cosigned":[`))
	end := at + bytes.IndexByte(x[at:], ']')
	for i := at; i <= end; i++ {
		y := bytes.Clone(x)
		y[i] ^= 0x01
		if code, out := run(y); code == 0 {
			t.Fatalf("byte %d of cosigned changed (%q -> %q) still verifies:\n%s", i, x[i], y[i], out)
		}
	}
	// B's cosignature moved onto the extract of A's later checkpoint,
	// which B did not co-sign, does not verify.
	moved := bytes.Replace(later, []byte(`"cosigned":[]`), x[at:end+1], 1)
	if bytes.Equal(moved, later) {
		t.Fatal("cosigned not moved")
	}
	if code, out := run(moved); code != exitRefused || !strings.Contains(out, "cosignature 0") {
		t.Fatalf("cosignature on another checkpoint: exit %d\n%s", code, out)
	}
}

// TestVerifyExtractOtherSession: witan verify-extract refuses an extract
// whose checkpoint is correctly signed by the node but of another
// session — a real checkpoint the node signed of its second session, and
// one signed with the node's key with the first session's very size and
// root but the other session (so that only the session differs). The
// same extract rebuilt with its own checkpoint still verifies, so what
// fails is the session.
func TestVerifyExtractOtherSession(t *testing.T) {
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{5}, 32))
	b1 := ht.New(ht.Options{})
	r1 := b1.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b1.Create.ID)
	b2 := ht.New(ht.Options{Simulation: true})
	r2 := b2.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b2.Create.ID)
	if b1.Session == b2.Session {
		t.Fatal("the two sessions are one")
	}
	a := liveNode(t, keyA, []ht.Tx{b1.Create, r1, b2.Create, r2})
	s, err := httpapi.New(httpapi.Options{Node: a})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	resp, err := http.Get(srv.URL + httpapi.Base + "/extract/" + r1.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	x, cp, err := extract.Verify(raw, keyA.Key())
	if err != nil {
		t.Fatal(err)
	}
	cps := a.Replica().Checkpoints(b2.Session)
	if len(cps) == 0 {
		t.Fatal("no checkpoint of the second session")
	}
	forged := cp
	forged.Space = b2.Session.String()
	msg, _ := forged.SigningBytes()
	forged.Sig = keyA.Sign(replica.DomainCheckpoint, msg)
	rebuild := func(c replica.Checkpoint) []byte {
		t.Helper()
		if err := c.Verify(); err != nil {
			t.Fatalf("the swapped-in checkpoint is not correctly signed: %v", err)
		}
		y := *x
		y.Checkpoint, _ = json.Marshal(c)
		out, err := dag.Marshal(y)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	file := filepath.Join(t.TempDir(), "extract.json")
	run := func(data []byte) (int, string) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		err := m.Run(context.Background(), []string{"verify-extract", "-signer", keyA.Key().String(), file})
		return m.ExitCode(err), out.String() + errb.String()
	}
	if code, out := run(rebuild(cp)); code != 0 {
		t.Fatalf("rebuilt with its own checkpoint: exit %d\n%s", code, out)
	}
	for name, c := range map[string]replica.Checkpoint{"the node's checkpoint of the second session": cps[len(cps)-1], "same size and root, other session": forged} {
		if code, out := run(rebuild(c)); code != exitRefused || !strings.Contains(out, "checkpoint is of session "+b2.Session.String()) {
			t.Errorf("%s: exit %d\n%s", name, code, out)
		}
	}
}
