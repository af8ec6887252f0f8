package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// sse is one event read from a stream.
type sse struct {
	ID, Event string
	Data      map[string]any
}

// openEvents opens GET /oth/v0/events with the query and Last-Event-ID
// given and returns the events as they arrive. The stream closes with the
// test.
func openEvents(t *testing.T, base, query, lastID string) <-chan sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/oth/v0/events?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sse, 1000)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Event != "" {
					out <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev.Data); err != nil {
					ev.Event = "bad json: " + line
				}
			}
		}
	}()
	return out
}

// next returns the next event, failing the test after a few seconds.
func next(t *testing.T, c <-chan sse) sse {
	t.Helper()
	select {
	case ev, ok := <-c:
		if !ok {
			t.Fatal("event stream ended")
		}
		if f := ev.Data["finality"]; f != "provisional" && f != "final_advisory" {
			t.Fatalf("event %+v: finality %v (an eventual node says provisional or final_advisory)", ev, f)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return sse{}
}

func quiet(t *testing.T, c <-chan sse) {
	t.Helper()
	select {
	case ev := <-c:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestEventsS12 is S12 over GET /events (30k §5, §10): entries arrive live,
// provisional until this node checkpoints them, then a checkpoint event
// makes them final_advisory; a client resuming with Last-Event-ID gets
// exactly the entries after it, labelled by the checkpoint that now
// covers them. Nothing ever says final, and every event of this simulated
// session says simulation (D54).
func TestEventsS12(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t) // seven entries: create, three groups, branch, append, open
	q := "session=" + s.space
	c := openEvents(t, n.srv.URL, q, "")
	wantTypes := []string{"session.create", "group.create", "group.create", "group.create", "branch.create", "branch.append", "mr.open"}
	for i, typ := range wantTypes {
		ev := next(t, c)
		if ev.Event != "entry" || ev.ID != strconv.Itoa(i+1) || ev.Data["position"] != float64(i+1) ||
			ev.Data["type"] != typ || ev.Data["finality"] != "provisional" || ev.Data["simulation"] != true || ev.Data["session"] != s.space {
			t.Fatalf("event %d: %+v", i+1, ev)
		}
	}
	quiet(t, c) // no checkpoint yet: nothing is final_advisory

	// A ballot arrives live, provisional.
	b1 := s.b.Ballot(dagMember(0), s.mr, "approve", dag.ID{}, s.last)
	n.submit(t, s, b1)
	ev := next(t, c)
	if ev.ID != "8" || ev.Data["type"] != "ballot.cast" || ev.Data["tx"] != b1.ID.String() || ev.Data["mr"] != s.mr.String() || ev.Data["finality"] != "provisional" {
		t.Fatalf("ballot event %+v", ev)
	}
	// The node checkpoints: one checkpoint event, covering all eight.
	cp, err := n.node.Replica().Checkpoint(context.Background(), dag.MustParseID(s.space))
	if err != nil {
		t.Fatal(err)
	}
	ev = next(t, c)
	if ev.Event != "checkpoint" || ev.ID != "" || ev.Data["size"] != float64(8) || ev.Data["finality"] != "final_advisory" || ev.Data["simulation"] != true {
		t.Fatalf("checkpoint event %+v", ev)
	}
	if signed, _ := ev.Data["checkpoint"].(map[string]any); signed["root"] != cp.Root.String() || signed["sig"] == "" {
		t.Fatalf("checkpoint event carries %v, want the signed checkpoint with root %s", ev.Data["checkpoint"], cp.Root)
	}
	// A later ballot is provisional again: the checkpoint does not cover it.
	b2 := s.b.Ballot(dagMember(1), s.mr, "reject", dag.ID{}, s.last)
	n.submit(t, s, b2)
	if ev := next(t, c); ev.ID != "9" || ev.Data["finality"] != "provisional" {
		t.Fatalf("second ballot %+v", ev)
	}
	quiet(t, c)

	// A client that saw up to 5 resumes: 6, 7, 8 are final_advisory now,
	// 9 provisional, then the checkpoint it has not seen.
	r := openEvents(t, n.srv.URL, q, "5")
	for _, want := range []struct {
		id, finality string
	}{{"6", "final_advisory"}, {"7", "final_advisory"}, {"8", "final_advisory"}, {"9", "provisional"}} {
		ev := next(t, r)
		if ev.Event != "entry" || ev.ID != want.id || ev.Data["finality"] != want.finality {
			t.Fatalf("resumed: %+v, want id %s %s", ev, want.id, want.finality)
		}
	}
	if ev := next(t, r); ev.Event != "checkpoint" || ev.Data["size"] != float64(8) {
		t.Fatalf("resumed: %+v, want the checkpoint of 8", ev)
	}
	// ?last_event_id= does the same for a first connection; at the end of
	// the log it sends only the checkpoint.
	e := openEvents(t, n.srv.URL, q+"&last_event_id=9", "")
	if ev := next(t, e); ev.Event != "checkpoint" {
		t.Fatalf("at the end: %+v", ev)
	}
	quiet(t, e)
}

func dagMember(i int) *dag.Signer { return ht.Member(i) }

// TestEventsNIDPrefix: ?nid_prefix= keeps the changes and MR events (open,
// ballots) that touch the subtree, and checkpoints; the session's other
// entries are left out.
func TestEventsNIDPrefix(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t) // its amendment replaces /us/t1/s1
	n.submit(t, s, s.b.Ballot(dagMember(0), s.mr, "approve", dag.ID{}, s.last))
	in := openEvents(t, n.srv.URL, "nid_prefix=/us/t1", "")
	for _, want := range []string{"branch.append", "mr.open", "ballot.cast"} {
		if ev := next(t, in); ev.Data["type"] != want {
			t.Fatalf("under /us/t1: %+v, want %s", ev, want)
		}
	}
	quiet(t, in)
	out := openEvents(t, n.srv.URL, "nid_prefix=/us/t10", "") // a sibling, not a parent
	quiet(t, out)
	n.submit(t, s, s.b.Ballot(dagMember(1), s.mr, "approve", dag.ID{}, s.last))
	if ev := next(t, in); ev.Data["type"] != "ballot.cast" || ev.ID != "9" {
		t.Fatalf("live under /us/t1: %+v", ev)
	}
	quiet(t, out)
	if _, err := n.node.Replica().Checkpoint(context.Background(), dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, out); ev.Event != "checkpoint" {
		t.Fatalf("filtered stream: %+v, want the checkpoint", ev)
	}
}

// TestEventsBadInput: a bad prefix, a Last-Event-ID that is not a position
// or is beyond the log, an unknown session get problem+json, and the node
// serves on.
func TestEventsBadInput(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	q := "/oth/v0/events?session=" + s.space
	for _, p := range []string{"us/t1", "/us%20t1", "/us/%00", "/" + strings.Repeat("a", 600)} {
		n.problem(t, "GET", q+"&nid_prefix="+p, "", nil, 400, dag.CodeSchema)
	}
	for _, id := range []string{"abc", "-1", "1e3", strings.Repeat("9", 21), "18446744073709551616", "8", "1000000"} {
		n.problem(t, "GET", q+"&last_event_id="+id, "", nil, 400, dag.CodeSchema)
	}
	n.problem(t, "GET", "/oth/v0/events?session="+dag.Sum([]byte("no such")).String(), "", nil, 404, httpapi.CodeNotFound)
	n.problem(t, "POST", q, "", nil, 405, httpapi.CodeMethodNotAllowed)
	n.getMap(t, "/merge-requests/"+s.mr.String()+"/tally", nil)
	// The last position the node has is a valid place to resume.
	c := openEvents(t, n.srv.URL, "session="+s.space, "7")
	quiet(t, c)
}

// TestEventsClientCap: the node serves at most MaxClients streams at once;
// one more gets 503 witan:too_many_clients with Retry-After, and a slot
// freed by a client leaving is served again.
func TestEventsClientCap(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	srv, err := httpapi.New(httpapi.Options{Node: n.node, Events: httpapi.EventOptions{MaxClients: 3}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	capped := &apiNode{node: n.node, srv: hs, c: &httpapi.Client{BaseURL: hs.URL}}
	var cancels []context.CancelFunc
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/oth/v0/events?session="+s.space, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream %d: %v %v", i, err, resp)
		}
		defer resp.Body.Close()
	}
	capped.problem(t, "GET", "/oth/v0/events?session="+s.space, "", nil, 503, httpapi.CodeTooManyClients)
	cancels[0]()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(hs.URL + "/oth/v0/events?session=" + s.space + "&last_event_id=7")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a freed slot was not served again: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range cancels {
		c()
	}
}

// smallBuffers gives every accepted connection a small kernel send
// buffer, so that a client that does not read blocks the server's writes
// at once instead of after megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// chainNode is a node holding a session of 3+n entries (n ballots), served
// with the event options given on a listener with small send buffers.
func chainNode(t *testing.T, n int, eo httpapi.EventOptions) (*apiNode, *httpapi.Server, string) {
	t.Helper()
	base := newNode(t)
	b := ht.New(ht.Options{Simulation: true})
	head, _, ballots := b.BallotChain(n)
	for _, tx := range append(head, ballots...) {
		if rc, err := base.node.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	}
	srv, err := httpapi.New(httpapi.Options{Node: base.node, Events: eo})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return &apiNode{node: base.node, srv: hs, c: &httpapi.Client{BaseURL: hs.URL}}, srv, b.Session.String()
}

// rawStream opens GET /events on a bare connection with a small receive
// buffer and returns it unread.
func rawStream(t *testing.T, base, query string) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetReadBuffer(4096)
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET /oth/v0/events?%s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", query, addr); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEventsSlowClientDropped: a client that stops reading is dropped
// once a write to it has waited WriteTimeout, while another client gets
// every event and the node keeps serving.
func TestEventsSlowClientDropped(t *testing.T) {
	// The timeout applies to the reading client too: long enough that a
	// loaded machine's pause of its reader, with the socket's buffers
	// full, does not drop it (300 ms could), short enough to wait for.
	n, srv, space := chainNode(t, 600, httpapi.EventOptions{WriteTimeout: 2 * time.Second})
	rawStream(t, n.srv.URL, "session="+space) // never read
	waitUntil(t, func() bool { return srv.EventClients() == 1 }, "the slow stream served")
	fast := openEvents(t, n.srv.URL, "session="+space, "")
	for i := 1; i <= 603; i++ {
		if ev := next(t, fast); ev.ID != strconv.Itoa(i) {
			t.Fatalf("the reading client's event %d: %+v", i, ev)
		}
	}
	waitUntil(t, func() bool { return srv.EventClients() == 1 }, "the slow client dropped, the reading one served")
	n.getMap(t, "/heads", url.Values{"session": {space}})
}

// TestEventsIdleClients: of many clients that connect and never read, the
// node serves MaxClients and refuses the rest with 503, its heap grows by
// a bounded amount, and it keeps answering.
func TestEventsIdleClients(t *testing.T) {
	n, srv, space := chainNode(t, 2, httpapi.EventOptions{})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const clients = 400
	refused := 0
	conns := make([]net.Conn, 0, clients)
	for i := 0; i < clients; i++ {
		conns = append(conns, rawStream(t, n.srv.URL, "session="+space))
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(line, "HTTP/1.1 200"):
		case strings.HasPrefix(line, "HTTP/1.1 503"):
			refused++
		default:
			t.Fatalf("status line %q", line)
		}
	}
	if refused != clients-httpapi.DefaultMaxEventClients || srv.EventClients() != httpapi.DefaultMaxEventClients {
		t.Fatalf("%d refused, %d served; want %d served", refused, srv.EventClients(), httpapi.DefaultMaxEventClients)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("%d idle streams: heap in use grew by %d KiB (%d B each)", srv.EventClients(), grew>>10, grew/int64(srv.EventClients()))
	if grew > 64<<20 {
		t.Fatalf("heap grew by %d MiB for %d idle streams", grew>>20, srv.EventClients())
	}
	n.getMap(t, "/heads", url.Values{"session": {space}})
	n.problem(t, "GET", "/oth/v0/events?session="+space, "", nil, 503, httpapi.CodeTooManyClients)
}

func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEventsHeartbeat: an idle stream gets a comment line every Heartbeat,
// and the first bytes (the retry hint) arrive before any event, so a
// client knows the stream is open.
func TestEventsHeartbeat(t *testing.T) {
	n, _, space := chainNode(t, 2, httpapi.EventOptions{Heartbeat: 50 * time.Millisecond})
	resp, err := http.Get(n.srv.URL + "/oth/v0/events?session=" + space + "&last_event_id=5")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var lines []string
	for len(lines) < 6 {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.TrimRight(l, "\n"))
	}
	want := []string{"retry: 2000", "", ": heartbeat", "", ": heartbeat", ""}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("idle stream %q, want %q", lines, want)
	}
}
