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
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/extract"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// TestVerifyMRExtractOffline (D45, S17 "an evidence extract for a
// determination verifies offline"): the extract of an MR, taken over HTTP,
// carries its open, ballots and determination with their inclusion
// proofs; witan verify-extract recomputes the tallies it states with no
// listener at all; labels are provisional, then final_advisory once the
// executed determination is checkpointed, never final; and any byte
// changed anywhere makes it fail.
//
// By hand (30k §7, threshold_vote num 1 den 2 cmp gt basis electorate,
// quorum 1/2, on_threshold; roster of five, N = 5):
//   - before the determination, ballots M0 approve, M1 approve, M2 reject
//     checkpointed and M4 abstain not: A=2 R=1 B=0, cast 3; quorum
//     3*2 >= 1*5 holds, 2*2 > 1*5 fails, and (5-1)*2 > 5 is still
//     reachable: pending, provisional, one entry beyond the checkpoint;
//   - after M3 approve and a determination listing M0, M1, M3 only:
//     its ballots A=3 R=0 B=0 (cast 3; 3*2 >= 5, 3*2 > 5): approved;
//     every ballot A=3 R=1 B=1 (cast 5): approved; final_advisory.
func TestVerifyMRExtractOffline(t *testing.T) {
	ctx := context.Background()
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	drafters := b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), roster.ID)
	branch := b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), drafters.ID)
	appendTx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, branch.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5),
		Rule: ht.Majority(house.MinRootNotice), Summary: "45 days"}, appendTx.ID)
	body, wantMR := b.MRBody(ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5),
		Rule: ht.Majority(house.MinRootNotice), Summary: "45 days"})
	if mr != wantMR || dag.Sum(body) != mr {
		t.Fatalf("the MR id is not the hash of its body: %s %s", mr, dag.Sum(body))
	}
	b0 := b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, open.ID)
	b1 := b.Ballot(ht.Member(1), mr, "approve", dag.ID{}, b0.ID)
	b2 := b.Ballot(ht.Member(2), mr, "reject", dag.ID{}, b1.ID)
	b4 := b.Ballot(ht.Member(4), mr, "abstain", dag.ID{}, b2.ID)
	b3 := b.Ballot(ht.Member(3), mr, "approve", dag.ID{}, b4.ID)
	det := b.Determine(ht.Member(1), mr, []dag.ID{b0.ID, b1.ID, b3.ID}, "approved", b3.ID)

	n := liveNode(t, key, []ht.Tx{b.Create, roster, drafters, branch, appendTx, open, b0, b1, b2})
	if rc, err := n.Replica().Submit(ctx, b4.Bytes, b4.Attach); err != nil || rc.Status != "accepted" {
		t.Fatalf("b4: %+v %v", rc, err)
	}
	s, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	pending := ""
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + httpapi.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		pending = resp.Header.Get(httpapi.HeaderPendingEntries)
		return resp.StatusCode, body
	}
	type tally struct{ Electorate, Approve, Reject, Abstain, Void, Cast, Ballots uint64 }
	counts := func(raw json.RawMessage) tally {
		var c tally
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	type mrFile struct {
		Finality       string
		Electorate     []string
		Entries        []struct{ Tx dag.ID }
		Determinations []struct {
			Tx       dag.ID
			Outcome  string
			IfClosed string `json:"if_closed"`
			Tally    json.RawMessage
		}
		Tally struct {
			Finality string
			IfClosed string `json:"if_closed"`
			Tally    json.RawMessage
		}
	}
	entries := func(x mrFile) []dag.ID {
		var out []dag.ID
		for _, e := range x.Entries {
			out = append(out, e.Tx)
		}
		return out
	}
	var wantEl []string
	for _, k := range ht.Members(0, 5) {
		wantEl = append(wantEl, k.String())
	}
	slices.Sort(wantEl)

	// Before the determination: provisional, b4 pending.
	st, early := get("/extract/" + mr.String())
	if st != http.StatusOK {
		t.Fatalf("extract of the open MR: %d %s", st, early)
	}
	var x1 mrFile
	if err := json.Unmarshal(early, &x1); err != nil {
		t.Fatal(err)
	}
	if x1.Finality != "provisional" || pending != "1" || len(x1.Determinations) != 0 || x1.Tally.Finality != "provisional" || x1.Tally.IfClosed != "pending" ||
		!slices.Equal(entries(x1), []dag.ID{open.ID, b0.ID, b1.ID, b2.ID}) || !slices.Equal(x1.Electorate, wantEl) ||
		counts(x1.Tally.Tally) != (tally{Electorate: 5, Approve: 2, Reject: 1, Cast: 3, Ballots: 3}) {
		t.Fatalf("extract of the open MR:\n%s", early)
	}

	// The determination, checkpointed.
	if _, err := n.Replica().Checkpoint(ctx, b.Session); err != nil {
		t.Fatal(err)
	}
	submitAll(t, n, []ht.Tx{b3, det})
	if m, err := n.Views().MR(ctx, b.Session, mr); err != nil || m.Status != house.StatusMerged || m.Finality != replica.FinalAdvisory {
		t.Fatalf("the MR: %+v %v", m, err)
	}
	st, late := get("/extract/" + mr.String())
	var x2 mrFile
	if err := json.Unmarshal(late, &x2); st != http.StatusOK || err != nil {
		t.Fatalf("extract of the merged MR: %d %v %s", st, err, late)
	}
	if x2.Finality != "final_advisory" || pending != "0" || x2.Tally.Finality != "provisional" || x2.Tally.IfClosed != "approved" ||
		!slices.Equal(entries(x2), []dag.ID{open.ID, b0.ID, b1.ID, b2.ID, b4.ID, b3.ID, det.ID}) ||
		counts(x2.Tally.Tally) != (tally{Electorate: 5, Approve: 3, Reject: 1, Abstain: 1, Cast: 5, Ballots: 5}) ||
		len(x2.Determinations) != 1 || x2.Determinations[0].Tx != det.ID || x2.Determinations[0].Outcome != "approved" || x2.Determinations[0].IfClosed != "approved" ||
		counts(x2.Determinations[0].Tally) != (tally{Electorate: 5, Approve: 3, Cast: 3, Ballots: 3}) {
		t.Fatalf("extract of the merged MR:\n%s", late)
	}
	for _, x := range [][]byte{early, late} {
		if bytes.Contains(x, []byte(`"final"`)) {
			t.Fatalf("an extract says final:\n%s", x)
		}
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
	if code, out := run(early, "-signer", key.Key().String()); code != 0 || !strings.Contains(out, "approve 2, reject 1, abstain 0, void 0 -> pending") ||
		!strings.Contains(out, "verified offline (provisional") {
		t.Fatalf("the open MR's extract: exit %d\n%s", code, out)
	}
	code, out := run(late, "-signer", key.Key().String())
	if code != 0 || !strings.Contains(out, "tally recomputed over 5 ballots: approve 3, reject 1, abstain 1, void 0 -> approved") ||
		!strings.Contains(out, "says approved over 3 ballots (approve 3, reject 0, abstain 0, void 0): borne out") ||
		!strings.Contains(out, "verified offline (final_advisory") {
		t.Fatalf("the merged MR's extract: exit %d\n%s", code, out)
	}
	other, _ := dag.SignerFromSeed(bytes.Repeat([]byte{8}, 32))
	if code, _ := run(late, "-signer", other.Key().String()); code != exitRefused {
		t.Fatalf("pinned to another key: exit %d", code)
	}
	// A stated tally changed and the file kept canonical fails too.
	forged := bytes.Replace(late, []byte(`"abstain":1,`), []byte(`"abstain":0,`), 1)
	if code, out := run(forged); code != exitRefused || !strings.Contains(out, "its ballots give") {
		t.Fatalf("a forged tally: exit %d\n%s", code, out)
	}
	// Every byte changed anywhere fails (the library call the command makes).
	for i := range late {
		y := bytes.Clone(late)
		y[i] ^= 0x01
		if _, _, err := extract.VerifyMR(y, dag.Key{}, nil); err == nil {
			t.Fatalf("byte %d changed (%q -> %q) still verifies: ...%s...", i, late[i], y[i], y[max(0, i-80):min(len(y), i+20)])
		}
	}
}
