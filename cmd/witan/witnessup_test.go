package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestWitnessOverLibp2pUp (two witan up processes on loopback, libp2p
// between them, no HTTP): B runs with -peer A and A's session; it checks
// A's checkpoint over /witan/checkpoint/1 and sends its cosignature back
// there, so A's extract comes to verify with B's key required. A signs
// its first checkpoint (-checkpoint-every 3s) after B has pulled
// everything, and nothing is written afterwards: B sees the checkpoint by
// its -witness-every loop (default 10 s), not by a pull. A is stopped and
// started again on the same data directory: its extract still carries
// B's cosignature, and with both processes gone witan verify-extract
// -witness B passes on it.
func TestWitnessOverLibp2pUp(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	b := ht.New(ht.Options{Label: "witness over libp2p"})
	space := b.Session.String()
	dirA := t.TempDir()
	a := startUp(t, bin, dirA, "-session", space, "-checkpoint-every", "3s")
	ca := &httpapi.Client{BaseURL: a.info.HTTP, Session: space}
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	for _, tx := range []ht.Tx{b.Create, roster} {
		if rc, err := ca.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
	}
	bn := startUp(t, bin, t.TempDir(), "-session", space, "-peer", a.info.P2P[0])
	keyA, errA := dag.ParseKey(a.info.NodeKey)
	keyB, errB := dag.ParseKey(bn.info.NodeKey)
	if errA != nil || errB != nil {
		t.Fatalf("node keys %q %q: %v %v", a.info.NodeKey, bn.info.NodeKey, errA, errB)
	}
	getExtract := func(base string) (bool, string, []byte) {
		resp, err := http.Get(base + httpapi.Base + "/extract/" + roster.ID.String())
		if err != nil {
			return false, err.Error(), nil
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Sprintf("%d %s", resp.StatusCode, raw), nil
		}
		if _, _, err := extract.VerifyWitnessed(raw, keyA, []dag.Key{keyB}); err != nil {
			return false, err.Error(), nil
		}
		return true, "", raw
	}
	// 3 s to A's checkpoint, up to 12.5 s to B's next look: the rest is
	// room for a loaded machine.
	eventually(t, "A's extract carries B's cosignature, sent over libp2p", 60*time.Second, func() (bool, string) {
		ok, why, _ := getExtract(a.info.HTTP)
		return ok, why
	})
	bn.stop(t)
	a.stop(t)

	a = startUp(t, bin, dirA, "-session", space)
	ok, why, raw := getExtract(a.info.HTTP)
	a.stop(t)
	if !ok {
		t.Fatalf("A's extract after its restart: %s", why)
	}
	file := filepath.Join(t.TempDir(), "extract.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "verify-extract", "-signer", keyA.String(), "-witness", keyB.String(), file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "co-signed by witness "+keyB.String()) {
		t.Fatalf("verify-extract -witness B, no listener: %v\n%s", err, out)
	}
}
