package main

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// syncedNode is a node with libp2p sync on loopback (mDNS off) and its
// HTTP API on an httptest listener.
func syncedNode(t *testing.T) (*node.Node, string) { return syncedNodeWith(t, nil) }

// syncedNodeWith is syncedNode with tune applied to its sync.Config.
func syncedNodeWith(t *testing.T, tune func(*sync.Config)) (*node.Node, string) {
	t.Helper()
	cfg := sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Debounce: 10 * time.Millisecond, Interval: 500 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	n, err := node.Open(context.Background(), node.Options{InMemory: true, Sync: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Node: n, LoopbackOperator: true}) // as witan up serves
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); n.Close() })
	return n, hs.URL
}

// The tour's two-laptop section, end to end with the documented verbs:
// two nodes, mDNS off; the second connects to the first (witan sync with
// no session: connected only) and joins its session (witan join); they
// converge on the same heads.
func TestTwoLaptopsJoin(t *testing.T) {
	ctx := context.Background()
	a, _ := syncedNode(t)
	b, bURL := syncedNode(t)
	bld := ht.New(ht.Options{Simulation: true, Label: "two laptops"})
	var last dag.ID
	for _, tx := range []ht.Tx{bld.Create, bld.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), bld.Create.ID)} {
		if rc, err := a.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%v %+v", err, rc)
		}
		last = tx.ID
	}
	session := bld.Session.String()

	out, errOut, code := run(ctx, "", "sync", "-node", bURL, a.Sync().Addrs()[0])
	if code != 0 || !strings.Contains(out, "connected only") {
		t.Fatalf("witan sync: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("$ witan sync %s\n%s", a.Sync().Addrs()[0], out)
	// B lists what A announces: A's session, not joined. The announcement
	// arrives with gossipsub's first message on the new connection.
	want := session + "  not joined (witan join " + session + ")\n  announced by " + a.Sync().ID().String() + "\n"
	out = pollOutput(t, 20*time.Second, want, "sessions", "-node", bURL, "-available")
	t.Logf("$ witan sessions -available\n%s", out)
	out, errOut, code = run(ctx, "", "join", "-node", bURL, "-wait", "20s", session)
	if code != 0 || !strings.Contains(out, "joined "+session) || !strings.Contains(out, last.String()) {
		t.Fatalf("witan join: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("$ witan join -wait 20s %s\n%s", session, out)
	out, errOut, code = run(ctx, "", "sessions", "-node", bURL, "-available")
	if code != 0 || !strings.HasPrefix(out, session+"  joined\n") {
		t.Fatalf("witan sessions -available after join: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(ctx, "", "sessions", "-node", bURL)
	if code != 0 || out != session+"\n" {
		t.Fatalf("witan sessions after join: exit %d\n%s%s", code, out, errOut)
	}
	ha, _ := a.Heads(ctx, session)
	hb, _ := b.Heads(ctx, session)
	if len(ha) != 1 || ha[0] != last || !slices.Equal(ha, hb) {
		t.Fatalf("heads a %v, b %v", ha, hb)
	}
	// A session nobody announces: join says so after -wait, and the node
	// does not stay joined: A stops seeing B announce it, B does not list
	// it as joined.
	nothing := dag.Sum([]byte("nothing")).String()
	offeredByB := func() bool {
		for _, o := range a.Sync().Available() {
			if o.Space == nothing && slices.Contains(o.Peers, b.Sync().ID()) {
				return true
			}
		}
		return false
	}
	_, errOut, code = run(ctx, "", "join", "-node", bURL, "-wait", "1s", nothing)
	if code != exitFailure || !strings.Contains(errOut, "no peer sent "+nothing+" within 1s, so the node did not keep the join") {
		t.Fatalf("unknown session: exit %d %q", code, errOut)
	}
	waitUntil(t, 20*time.Second, "B's failed join no longer joined", func() bool { return !b.Joined(nothing) && !offeredByB() })
	// Joined without -wait, it is announced until witan leave.
	if _, errOut, code = run(ctx, "", "join", "-node", bURL, nothing); code != 0 {
		t.Fatalf("join without -wait: exit %d %q", code, errOut)
	}
	waitUntil(t, 20*time.Second, "B's join announced to A", offeredByB)
	out, errOut, code = run(ctx, "", "leave", "-node", bURL, nothing)
	if code != 0 || out != "left "+nothing+"\n" {
		t.Fatalf("witan leave: exit %d\n%s%s", code, out, errOut)
	}
	waitUntil(t, 20*time.Second, "B's leave seen by A", func() bool { return !offeredByB() })
	// A session B holds is not left.
	_, errOut, code = run(ctx, "", "leave", "-node", bURL, session)
	if code != exitFailure || !strings.Contains(errOut, "this node holds entries of "+session) || !b.Joined(session) {
		t.Fatalf("leave a held session: exit %d %q", code, errOut)
	}
	_, errOut, code = run(ctx, "", "join", "-node", bURL, "not-a-session")
	if code != exitFailure || !strings.Contains(errOut, "neither a session id") {
		t.Fatalf("bad id: exit %d %q", code, errOut)
	}
}

// waitUntil polls cond until it holds, or fails the test at the deadline.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
}

// pollOutput runs witan args until its output is want (exit 0), or fails
// the test at the deadline with the last output.
func pollOutput(t *testing.T, d time.Duration, want string, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out, errOut, code := run(context.Background(), "", args...)
		if code == 0 && out == want {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("witan %s: no %q within %s; last: exit %d\n%s%s", strings.Join(args, " "), want, d, code, out, errOut)
		}
		time.Sleep(50 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
}
