package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// TestWitnessSurvivesRestart: node A keeps its store in a Badger
// directory; B pulls A over HTTP and co-signs A's checkpoint (POST
// /witness). A is stopped and started again on the same directory: its
// extract is byte for byte the one it served before the restart, B's
// cosignature included, and with no listener left witan verify-extract
// -signer A -witness B passes.
func TestWitnessSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	keyA, _ := dag.SignerFromSeed(bytes.Repeat([]byte{5}, 32))
	keyB, _ := dag.SignerFromSeed(bytes.Repeat([]byte{6}, 32))
	dir := t.TempDir()
	openA := func() (*node.Node, *httptest.Server) {
		t.Helper()
		n, err := node.Open(ctx, node.Options{Dir: dir, NodeKey: keyA, Clock: func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }})
		if err != nil {
			t.Fatal(err)
		}
		s, err := httpapi.New(httpapi.Options{Node: n})
		if err != nil {
			t.Fatal(err)
		}
		return n, httptest.NewServer(s)
	}
	get := func(srv *httptest.Server, path string) []byte {
		t.Helper()
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
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	a, srvA := openA()
	submitAll(t, a, []ht.Tx{b.Create, roster})
	nb := liveNode(t, keyB, nil)
	res, err := nb.PullHTTP(ctx, node.NewHTTPPeer(srvA.URL, nil))
	if err != nil || len(res) != 1 || res[0].Witness != "sent" {
		t.Fatalf("B pulls A: %+v %v", res, err)
	}
	before := get(srvA, "/extract/"+roster.ID.String())
	if !bytes.Contains(before, []byte(`"witness":"`+keyB.Key().String()+`"`)) {
		t.Fatalf("extract before the restart lacks B's cosignature: %s", before)
	}
	srvA.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	a, srvA = openA()
	after := get(srvA, "/extract/"+roster.ID.String())
	srvA.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, before) {
		t.Fatalf("extract after the restart:\n%s\nbefore:\n%s", after, before)
	}
	file := filepath.Join(t.TempDir(), "extract.json")
	if err := os.WriteFile(file, after, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	err = m.Run(ctx, []string{"verify-extract", "-signer", keyA.Key().String(), "-witness", keyB.Key().String(), file})
	if code := m.ExitCode(err); code != 0 || !strings.Contains(out.String(), "co-signed by witness "+keyB.Key().String()) {
		t.Fatalf("verify-extract -witness B after the restart: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
