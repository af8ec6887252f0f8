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

// TestVerifyMRExtractApproversOffline (D45, §7 designated_approvers):
// witan verify-extract, with no listener, pins the approvers group from
// the group.update the extract carries. By hand: drafters {M1, M2}
// updated to {M1, M2, M3}; required 2, n = 3; M1 approve, M3 reject, M2
// approve: A=2 R=1, approved if closed.
func TestVerifyMRExtractApproversOffline(t *testing.T) {
	ctx := context.Background()
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{})
	rule := ht.Approvers("drafters", 2)
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	drafters := b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), roster.ID)
	update := b.GroupUpdate(ht.Member(1), "drafters", ht.Members(1, 4), ht.Members(1, 2), drafters.ID)
	branch := b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), update.ID)
	panel := b.BranchCreate(ht.Member(1), "panel", "drafters", house.RootBranch, b.Genesis, false, rule, ht.TwoThirds(), branch.ID)
	appendTx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, panel.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, Target: "panel", TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: rule}, appendTx.ID)
	b1 := b.Ballot(ht.Member(1), mr, "approve", dag.ID{}, open.ID)
	b3 := b.Ballot(ht.Member(3), mr, "reject", dag.ID{}, b1.ID)
	b2 := b.Ballot(ht.Member(2), mr, "approve", dag.ID{}, b3.ID)
	n := liveNode(t, key, []ht.Tx{b.Create, roster, drafters, update, branch, panel, appendTx, open, b1, b3, b2})
	if _, err := n.Replica().Checkpoint(ctx, b.Session); err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	resp, err := http.Get(srv.URL + httpapi.Base + "/extract/" + mr.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close() // no listener from here on
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("extract: %d %s", resp.StatusCode, body)
	}
	file := filepath.Join(t.TempDir(), "extract.json")
	run := func(data []byte) (int, string) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		err := m.Run(ctx, []string{"verify-extract", "-signer", key.Key().String(), file})
		return m.ExitCode(err), out.String() + errb.String()
	}
	if code, out := run(body); code != 0 ||
		!strings.Contains(out, "ok   electorate of 3 is the approvers group as its 1 group entries define it; tally recomputed over 3 ballots: approve 2, reject 1, abstain 0, void 0 -> approved") ||
		!strings.Contains(out, "is the node's word") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// The group.update's object taken out of supporting fails.
	at := bytes.Index(body, []byte(`"supporting":[`))
	if at < 0 {
		t.Fatal("no supporting")
	}
	forged := append(append([]byte{}, body[:at]...), []byte(`"supporting":[],`)...)
	forged = append(forged, body[at+bytes.Index(body[at:], []byte(`],"tally"`))+2:]...)
	if code, out := run(forged); code != exitRefused || !strings.Contains(out, "is not in supporting") {
		t.Fatalf("without the group object: exit %d\n%s", code, out)
	}
}
