package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

func TestPeerOf(t *testing.T) {
	for in, want := range map[string]string{
		"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWQYhT":         "12D3KooWQYhT",
		"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWQYhT/p2p-x/y": "12D3KooWQYhT",
		"/ip4/127.0.0.1/tcp/4001":                          "",
	} {
		if got := peerOf(in); got != want {
			t.Errorf("peerOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3<<30 + 1<<29: "3.5 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSyncTracker: snapshots of the node's running pulls, as /peers
// serves them, add up across rounds and spaces; other peers' pulls and
// other spaces are ignored; a pull that disappears counts as complete.
func TestSyncTracker(t *testing.T) {
	pull := func(peer, space string, round int, ed, ee, bd, be uint64) httpapi.Pull {
		return httpapi.Pull{Peer: peer, Space: space, Round: round, EntriesDone: ed, EntriesExpected: ee, BytesDone: bd, BytesExpected: be}
	}
	steps := []struct {
		pulls []httpapi.Pull
		want  string // fraction's text
		done  uint64
		total uint64
	}{
		{nil, "0/0 entries, 0/2 spaces", 0, 0},
		{[]httpapi.Pull{pull("P", "a", 1, 0, 100, 0, 10000)}, "0/100 entries, 0 B/9.7 KiB, 0/2 spaces", 0, 10000},
		{[]httpapi.Pull{pull("P", "a", 1, 40, 100, 4000, 10000), pull("Q", "a", 1, 99, 100, 9900, 10000), pull("P", "z", 1, 5, 5, 5, 5)},
			"40/100 entries, 3.9 KiB/9.7 KiB, 0/2 spaces", 4000, 10000},
		// Round 2 of space a: round 1's 100 entries all came.
		{[]httpapi.Pull{pull("P", "a", 2, 10, 20, 1000, 2000), pull("P", "b", 1, 0, 50, 0, 5000)},
			"110/170 entries, 10.7 KiB/16.6 KiB, 0/2 spaces", 11000, 17000},
		// a ended (round 2 complete); b runs.
		{[]httpapi.Pull{pull("P", "b", 1, 25, 50, 2500, 5000)}, "145/170 entries, 14.1 KiB/16.6 KiB, 1/2 spaces", 14500, 17000},
		// The estimate was low: more bytes came than announced.
		{[]httpapi.Pull{pull("P", "b", 1, 50, 50, 6000, 5000)}, "170/170 entries, 17.5 KiB/17.5 KiB, 1/2 spaces", 18000, 18000},
		{nil, "170/170 entries, 17.5 KiB/17.5 KiB, 2/2 spaces", 18000, 18000},
	}
	tr := newSyncTracker("P", []string{"a", "b"})
	for i, st := range steps {
		tr.observe(st.pulls)
		done, total, text := tr.fraction()
		if text != st.want || done != st.done || total != st.total {
			t.Fatalf("step %d: %d/%d %q, want %d/%d %q", i, done, total, text, st.done, st.total, st.want)
		}
	}
	// Without spaces named, any space of the peer counts; entries fill
	// the bar when no bytes were announced.
	tr = newSyncTracker("P", nil)
	tr.observe([]httpapi.Pull{pull("P", "x", 1, 3, 4, 0, 0)})
	if done, total, text := tr.fraction(); done != 3 || total != 4 || text != "3/4 entries" {
		t.Fatalf("entries only: %d/%d %q", done, total, text)
	}
}

// TestProgressDraw: the bar redraws when its fill or its text changes,
// pads over a longer previous text, and ends its line once.
func TestProgressDraw(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, label: "sync", last: -1}
	p.show(0, 0, "0/0 entries")
	p.show(0, 0, "0/0 entries") // unchanged: no redraw
	p.show(5, 10, "5/10 entries, 1.0 KiB/2.0 KiB")
	p.show(10, 10, "10/10")
	p.done()
	lines := strings.Split(b.String(), "\r")[1:]
	want := []string{
		"sync       [                              ] 0/0 entries",
		"sync       [###############               ] 5/10 entries, 1.0 KiB/2.0 KiB",
		"sync       [##############################] 10/10" + strings.Repeat(" ", len("5/10 entries, 1.0 KiB/2.0 KiB")-len("10/10")) + "\n",
	}
	if len(lines) != len(want) {
		t.Fatalf("drew %q", b.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Fatalf("line %d: %q, want %q", i, lines[i], want[i])
		}
	}
	// Not a terminal: nothing is drawn.
	var q bytes.Buffer
	np := newProgress(&q, "sync", 0)
	np.show(1, 2, "x")
	np.set(1, 2)
	np.done()
	if q.Len() != 0 {
		t.Fatalf("drew on a non-terminal: %q", q.String())
	}
}

// TestSyncBarFollowsTransfer: witan sync's bar moves with the node's own
// reports of this call's pull, one per batch ingested. The peer sends
// batches of 10 and the node ingests 10 at a time, so a session of 43
// entries draws 0, 10, 20, 30, 40, 43 entries and ends full. (The pulling
// node is Manual, so no pull of its own races the one witan sync makes.)
func TestSyncBarFollowsTransfer(t *testing.T) {
	ctx := context.Background()
	a, _ := syncedNodeWith(t, func(c *sync.Config) { c.Engine.MaxBatchItems = 10 })
	_, bURL := syncedNodeWith(t, func(c *sync.Config) { c.Engine.IngestItems = 10; c.Manual = true })
	session, _ := progressSession(t, a)
	var out, errb, bar bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, progressTo: &bar}
	if code := m.ExitCode(m.Run(ctx, []string{"sync", "-node", bURL, "-session", session, a.Sync().Addrs()[0]})); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	// a has signed no checkpoint: the check after the pull says so.
	if !strings.Contains(out.String(), session+"  43 new entries stored (43 held now)") || !strings.Contains(out.String(), "; the peer's checkpoint: none\n") {
		t.Fatalf("answer:\n%s", out.String())
	}
	checkBar(t, bar.String(), []string{"0/43", "10/43", "20/43", "30/43", "40/43", "43/43"})
	// A dial that fails fails before any line: an ordinary problem.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	_, errOut, code := run(ctx, "", "sync", "-node", bURL, "-session", session, fmt.Sprintf("/ip4/127.0.0.1/tcp/%d/p2p/%s", port, a.Sync().ID()))
	if code != exitFailure || !strings.Contains(errOut, "witan:peer_unreachable") {
		t.Fatalf("unreachable peer: exit %d %q", code, errOut)
	}
}

// TestJoinBarFollowsTransfer: witan join -wait draws its bar from the
// node's reports of the session's pulls as they are made, and ends when
// the session has arrived: 0, 10, 20, 30, 40, 43 of 43 entries.
func TestJoinBarFollowsTransfer(t *testing.T) {
	ctx := context.Background()
	a, _ := syncedNodeWith(t, func(c *sync.Config) { c.Engine.MaxBatchItems = 10 })
	b, bURL := syncedNodeWith(t, func(c *sync.Config) { c.Engine.IngestItems = 10 })
	session, last := progressSession(t, a)
	if _, errOut, code := run(ctx, "", "sync", "-node", bURL, a.Sync().Addrs()[0]); code != 0 {
		t.Fatalf("witan sync: exit %d %s", code, errOut)
	}
	var out, errb, bar bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, progressTo: &bar}
	if code := m.ExitCode(m.Run(ctx, []string{"join", "-node", bURL, "-wait", "60s", session})); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if want := "joined " + session + "\n  arrived; heads:\n    " + last.String() + "\n"; out.String() != want {
		t.Fatalf("answer:\n%s\nwant\n%s", out.String(), want)
	}
	if hb, _ := b.Heads(ctx, session); len(hb) != 1 || hb[0] != last {
		t.Fatalf("b's heads %v", hb)
	}
	checkBar(t, bar.String(), []string{"0/43", "10/43", "20/43", "30/43", "40/43", "43/43"})
}

// progressSession writes a session of 43 entries (its creation and 42
// groups) to n and returns its id and its last entry.
func progressSession(t *testing.T, n *node.Node) (string, dag.ID) {
	t.Helper()
	bld := ht.New(ht.Options{Simulation: true, Label: "progress"})
	txs := []ht.Tx{bld.Create}
	for i := range 42 {
		txs = append(txs, bld.GroupCreate(ht.Member(0), fmt.Sprintf("g%02d", i), ht.Members(0, 3), ht.Members(0, 1), txs[len(txs)-1].ID))
	}
	for _, tx := range txs {
		if rc, err := n.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%v %+v", err, rc)
		}
	}
	return bld.Session.String(), txs[len(txs)-1].ID
}

// checkBar checks a bar's frames: the entries counts drawn, in order
// (repeats folded), full only at the end, and its line ended.
func checkBar(t *testing.T, drawn string, want []string) {
	t.Helper()
	frames := strings.Split(strings.TrimSuffix(drawn, "\n"), "\r")[1:]
	var entries []string
	for _, f := range frames {
		_, text, _ := strings.Cut(f, "] ")
		n, _, _ := strings.Cut(text, " entries")
		if len(entries) == 0 || entries[len(entries)-1] != n {
			entries = append(entries, n)
		}
	}
	if !slices.Equal(entries, want) {
		t.Fatalf("bar drew entries %q, want %q; frames:\n%s", entries, want, strings.Join(frames, "\n"))
	}
	full := "[" + strings.Repeat("#", progressWidth) + "]"
	if !strings.Contains(frames[len(frames)-1], full) || !strings.HasSuffix(drawn, "\n") {
		t.Fatalf("last frame %q: not full, or the line not ended", frames[len(frames)-1])
	}
	for _, f := range frames[:len(frames)-1] {
		if strings.Contains(f, full) {
			t.Fatalf("full before the end: %q", f)
		}
	}
	t.Logf("frames:\n%s", strings.Join(frames, "\n"))
}
