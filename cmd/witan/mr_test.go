package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
)

// TestVoteWalkUp walks a whole vote from the command line against a real
// witan up on loopback: the class is started and enrolled with envelopes
// signed in the test; then witan mr open shows the diff and the MR's id
// (worked out in the test) and signs only when told; witan vote casts and
// supersedes; witan mr close refuses while the rule allows nothing, then
// shows the determination the rule allows and signs it; the law reads the
// new text.
func TestVoteWalkUp(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	dir := t.TempDir()
	up := startUp(t, bin, filepath.Join(dir, "data"))
	defer up.stop(t)
	nodeURL := up.info.HTTP
	client := &httpapi.Client{BaseURL: nodeURL}

	keys := map[string]*dag.Signer{}
	for _, who := range []string{"teacher", "ana", "ben"} {
		p := filepath.Join(dir, who+".key")
		if out, errOut, code := run(ctx, "", "keygen", "-out", p); code != exitOK {
			t.Fatalf("keygen %s: %d %s %s", who, code, out, errOut)
		}
		s, err := readKeyFile(p)
		if err != nil {
			t.Fatal(err)
		}
		keys[who] = s
	}
	keyFile := func(who string) string { return filepath.Join(dir, who+".key") }
	witan := func(stdin, who string, args ...string) (string, string, int) {
		t.Helper()
		var full []string
		if len(args) > 1 && args[0] == "mr" {
			full = append([]string{"mr", args[1], "-key", keyFile(who), "-node", nodeURL}, args[2:]...)
		} else {
			full = append([]string{args[0], "-key", keyFile(who), "-node", nodeURL}, args[1:]...)
		}
		return run(ctx, stdin, full...)
	}

	// The class, signed here: the template session, then ana and ben
	// enrolled by the teacher.
	ta, err := author.New(author.Options{Signer: keys["teacher"], Heads: clientHeads{client}})
	if err != nil {
		t.Fatal(err)
	}
	submit := func(txs ...author.Tx) {
		t.Helper()
		for _, tx := range txs {
			rc, err := client.Submit(ctx, tx.Bytes, tx.Attach)
			if err != nil || rc.Status != "accepted" {
				t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
			}
		}
	}
	start, err := ta.StartClass(ctx, "Civics")
	if err != nil {
		t.Fatal(err)
	}
	submit(start...)
	sid := start[0].Made
	roster := []dag.Key{keys["teacher"].Key(), keys["ana"].Key(), keys["ben"].Key()}
	enrol, err := ta.GroupUpdate(ctx, sid, author.Group{ID: "roster", Members: sortedKeys(roster), Admins: []dag.Key{keys["teacher"].Key()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	submit(enrol)
	logSize := func() int {
		var p httpapi.LogPage
		if err := client.Get(ctx, "/log", map[string][]string{"session": {sid.String()}, "limit": {"1000"}}, &p); err != nil {
			t.Fatal(err)
		}
		return len(p.Entries)
	}

	// The MR ana's amendment makes, worked out here from the seed: her
	// drafting group's branch, forked at the genesis change.
	var law httpapi.LawAnswer
	if err := client.Get(ctx, "/law", map[string][]string{"session": {sid.String()}}, &law); err != nil {
		t.Fatal(err)
	}
	seed := author.ClassSeed()
	newText := "Homework is due 14 days after it is set."
	pre, _ := seed.NodeHash("/us/t1/s1")
	op := statute.Op{Op: statute.OpReplace, NID: "/us/t1/s1", Pre: pre,
		Node: &statute.NodeSpec{NID: "/us/t1/s1", Kind: "section", Heading: "Homework", Text: newText, Children: []statute.NodeSpec{}}}
	result, err := statute.Apply(seed, []statute.Op{op})
	if err != nil {
		t.Fatal(err)
	}
	ch := &statute.Change{Base: seed.Hash(), Ops: []statute.Op{op}, Result: result.Hash(), Parents: []dag.ID{law.Head},
		Message: "Two weeks", Author: keys["ana"].Key().String()}
	raw, err := ch.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	change := dag.Sum(raw)
	branch := "amend-" + change.String()[7:19]
	maj, _ := author.Majority(house.MinRootNotice, dag.Sum(author.ClassMajorityText))
	_, wantMR, err := author.MRBody(sid, author.MR{Source: branch, SourceHead: change, TargetHead: law.Head, Members: roster, Rule: maj, Summary: "Two weeks"})
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := "what it changes:\n@@ /us/t1/s1 (modified) @@\n [section] Homework\n-Homework is due 7 days after it is set.\n+Homework is due 14 days after it is set.\n"

	// 1. mr open shows the plan; answered "n", it signs nothing.
	n0 := logSize()
	out, errOut, code := witan("n\n", "ana", "mr", "open", "-summary", "Two weeks", "/us/t1/s1", newText)
	if code != exitFailure || !strings.Contains(out, "merge request "+wantMR.String()+"\n") || !strings.Contains(out, wantDiff) ||
		!strings.Contains(out, "sign these 4 transactions with "+keys["ana"].Key().String()+"? [y/N] nothing signed") {
		t.Fatalf("mr open, declined: %d\n%s\n%s\nwant MR %s branch %s", code, out, errOut, wantMR, branch)
	}
	if !strings.Contains(out, "  from        branch "+branch+" (group "+author.DraftGroup(keys["ana"].Key())+", new)") {
		t.Errorf("mr open names no branch %s:\n%s", branch, out)
	}
	if n := logSize(); n != n0 {
		t.Fatalf("a declined mr open signed something: log %d -> %d", n0, n)
	}
	// A stranger's key is refused before anything is shown as signable.
	if _, errOut, code := witan("y\n", "nobody-missing", "mr", "open", "/us/t1/s1", newText); code != exitFailure || !strings.Contains(errOut, "no key file") || !strings.Contains(errOut, "witan keygen -out") {
		t.Errorf("mr open with no key: %d %s", code, errOut)
	}

	// 2. Answered "y", it signs and opens exactly that MR.
	out, errOut, code = witan("y\n", "ana", "mr", "open", "-summary", "Two weeks", "/us/t1/s1", newText)
	if code != exitOK || !strings.HasSuffix(out, "opened "+wantMR.String()+"\n") || strings.Count(out, "accepted  ") != 4 || !strings.Contains(out, "accepted  mr.open         sha256:") {
		t.Fatalf("mr open: %d\n%s\n%s", code, out, errOut)
	}
	var m view.MR
	if err := client.Get(ctx, "/merge-requests/"+wantMR.String(), map[string][]string{"session": {sid.String()}}, &m); err != nil {
		t.Fatal(err)
	}
	if m.Status != house.StatusOpen || m.Summary != "Two weeks" || m.Source == nil || m.Source.Branch != branch {
		t.Fatalf("the node's MR: %+v", m.MRView)
	}

	// 3. Votes: the teacher rejects then approves (the second supersedes
	// the first); ana approves. Closing before the second approval: the
	// rule allows nothing yet (1 of 3 is not more than half; 2 more
	// approvals can still come).
	mr := wantMR.String()
	nBefore := logSize()
	out, errOut, code = witan("", "teacher", "vote", mr, "reject")
	if code != exitOK || !strings.HasPrefix(out, "accepted  ballot.cast  ") {
		t.Fatalf("vote: %d %s %s", code, out, errOut)
	}
	var first dag.ID
	{
		var p httpapi.LogPage
		client.Get(ctx, "/log", map[string][]string{"session": {sid.String()}, "limit": {"1000"}}, &p)
		first = p.Entries[len(p.Entries)-1].Tx
	}
	// The receipt line numbers the ballot as witan log and the protocol's
	// log_index do, from 0: after nBefore entries, it is the one at nBefore.
	if want := fmt.Sprintf("accepted  ballot.cast     %s  log index %d\n", first, nBefore); out != want {
		t.Fatalf("vote's receipt line:\n%q\nwant\n%q", out, want)
	}
	out, errOut, code = witan("", "teacher", "vote", mr, "approve")
	if code != exitOK || !strings.HasPrefix(out, "replaces your ballot "+first.String()+"\naccepted  ballot.cast  ") {
		t.Fatalf("second vote: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := witan("", "ana", "vote", mr, "maybe"); code != exitUsage || !strings.Contains(errOut, `choice "maybe"`) {
		t.Errorf("vote maybe: %d %s", code, errOut)
	}
	// Two ballots (one superseded) and one effective approval: pending.
	if _, errOut, code := witan("", "teacher", "mr", "close", "-yes", mr); code != exitFailure || !strings.Contains(errOut, "the rule allows no determination yet") {
		t.Fatalf("early close: %d %s", code, errOut)
	}
	if out, errOut, code := witan("", "ana", "vote", mr, "approve"); code != exitOK {
		t.Fatalf("ana's vote: %d %s %s", code, out, errOut)
	}

	// 4. Closing: the plan, then the signature.
	out, errOut, code = witan("", "teacher", "mr", "close", "-dry-run", mr)
	want := "determination of " + mr + "\n  outcome     approved\n  ballots     3, every ballot cast on it that the node holds\n" +
		"  tally       2 approve, 0 reject, 0 abstain of an electorate of 3\n" +
		"  rule        approve_of_electorate 2/3, threshold gt 1/2\n"
	if code != exitOK || !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "dry run: nothing signed\n") {
		t.Fatalf("mr close -dry-run: %d\n%s\nwant prefix\n%s%s", code, out, want, errOut)
	}
	out, errOut, code = witan("yes\n", "teacher", "mr", "close", mr)
	if code != exitOK || !strings.Contains(out, "? [y/N] accepted  mr.determine    ") || !strings.HasSuffix(out, mr+" is merged (provisional)\n") {
		t.Fatalf("mr close: %d\n%s\n%s", code, out, errOut)
	}
	if err := client.Get(ctx, "/merge-requests/"+mr, map[string][]string{"session": {sid.String()}}, &m); err != nil {
		t.Fatal(err)
	}
	if m.Status != house.StatusMerged {
		t.Fatalf("MR %s after the determination, want merged", m.Status)
	}
	if err := client.Get(ctx, "/law", map[string][]string{"session": {sid.String()}}, &law); err != nil {
		t.Fatal(err)
	}
	if law.Snapshot != result.Hash() {
		t.Errorf("law snapshot %s, want %s (the seed with section 1 amended)", law.Snapshot, result.Hash())
	}
	if _, errOut, code := witan("", "teacher", "mr", "close", "-yes", mr); code != exitFailure || !strings.Contains(errOut, "is merged, not open") {
		t.Errorf("closing a merged MR: %d %s", code, errOut)
	}
	b, _ := json.Marshal(m.Determinations)
	if !strings.Contains(string(b), `"ballots":3`) {
		t.Errorf("determination %s, want 3 ballots", b)
	}
}

func sortedKeys(ks []dag.Key) []dag.Key {
	out := append([]dag.Key(nil), ks...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].String() < out[i].String() {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
