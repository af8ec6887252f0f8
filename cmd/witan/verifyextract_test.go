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

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// TestVerifyExtractOffline (D45): an extract of an amendment (an envelope
// with attached objects) taken from a node over HTTP verifies with
// witan verify-extract after the listener is closed (no network at all),
// and every single byte changed anywhere in the file makes it fail.
func TestVerifyExtractOffline(t *testing.T) {
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	drafters := b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), roster.ID)
	branch := b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), drafters.ID)
	appendTx, _ := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, branch.ID)
	if len(appendTx.Attach) == 0 {
		t.Fatal("the amendment has no attachments: the test would not check supporting objects")
	}
	n := liveNode(t, key, []ht.Tx{b.Create, roster, drafters, branch, appendTx})
	s, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	get := func(path string) (int, string, []byte) {
		resp, err := http.Get(srv.URL + httpapi.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), body
	}
	st, ct, x := get("/extract/" + appendTx.ID.String())
	if st != http.StatusOK || ct != "application/json" || !bytes.Contains(x, []byte(`"finality":"final_advisory"`)) || bytes.Contains(x, []byte(`"final"`)) {
		t.Fatalf("extract: %d %s %s", st, ct, x)
	}
	if st, ct, _ := get("/extract/nope"); st != http.StatusBadRequest || ct != httpapi.ContentTypeProblem {
		t.Fatalf("bad hash: %d %s", st, ct)
	}
	if st, ct, _ := get("/extract/" + dag.Sum([]byte("x")).String()); st != http.StatusNotFound || ct != httpapi.ContentTypeProblem {
		t.Fatalf("unknown hash: %d %s", st, ct)
	}
	srv.Close() // no listener from here on

	dir := t.TempDir()
	file := filepath.Join(dir, "extract.json")
	run := func(data []byte, args ...string) (int, string) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		err := m.Run(context.Background(), append(append([]string{"verify-extract"}, args...), file))
		return m.ExitCode(err), out.String() + errb.String()
	}
	if code, out := run(x); code != 0 || !strings.Contains(out, "verified offline") {
		t.Fatalf("honest extract: exit %d\n%s", code, out)
	}
	if code, out := run(x, "-signer", key.Key().String()); code != 0 {
		t.Fatalf("pinned to the node's key: exit %d\n%s", code, out)
	}
	other, _ := dag.SignerFromSeed(bytes.Repeat([]byte{6}, 32))
	if code, _ := run(x, "-signer", other.Key().String()); code != exitRefused {
		t.Fatalf("pinned to another key: exit %d", code)
	}
	for i := range x {
		for _, flip := range []byte{0x01} {
			y := bytes.Clone(x)
			y[i] ^= flip
			if code, out := run(y); code == 0 {
				t.Fatalf("byte %d changed (%q -> %q) still verifies:\n%s", i, x[i], y[i], out)
			}
		}
	}
}
