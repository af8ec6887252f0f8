package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/witan-dev/witan/replica/httpapi"
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
