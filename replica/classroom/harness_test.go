package classroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/classroom"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/sync"
)

// laptop is one participant's machine: a member key, a node in memory, a
// libp2p sync node on loopback, and (when served) the page and API on a
// real loopback listener.
type laptop struct {
	name string
	key  *dag.Signer
	node *node.Node
	sync *sync.Node
	page *classroom.Handler
	srv  *httptest.Server
	// names is the page's address book file, if it has one.
	names string
}

// class is a session on several laptops: laptop 0 is the teacher's, who
// made the session; laptop 1 drafted an amendment and opened the MR.
type class struct {
	b       *ht.Builder
	space   string
	mr      dag.ID
	laps    []*laptop
	members []dag.Key
}

// newClass starts n laptops, makes the session on the teacher's, opens an
// MR whose electorate is every laptop's member, connects every laptop to
// the teacher's over libp2p on loopback, and waits until all hold the same
// heads. Laptops listed in serve get the page on a real listener, with
// their own member key as the voter.
func newClass(t testing.TB, n int, serve ...int) *class {
	t.Helper()
	return newClassSync(t, n, sync.Config{Debounce: 10 * time.Millisecond, Interval: 500 * time.Millisecond}, serve...)
}

// newClassSync is newClass with the sync timing of sc (zero: sync's
// defaults, as witan up runs).
func newClassSync(t testing.TB, n int, sc sync.Config, serve ...int) *class {
	t.Helper()
	ctx := context.Background()
	c := &class{}
	for i := 0; i < n; i++ {
		nd, err := node.Open(ctx, node.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		l := &laptop{name: []string{"teacher", "ana", "ben", "chloe"}[min(i, 3)], key: ht.Member(i), node: nd}
		if i > 3 {
			l.name = "student" + string(rune('0'+i))
		}
		t.Cleanup(func() { nd.Close() })
		c.laps = append(c.laps, l)
		c.members = append(c.members, l.key.Key())
	}
	teacher, ana := c.laps[0], c.laps[1]
	c.b = ht.New(ht.Options{Author: teacher.key, Simulation: true, Education: true, Label: "Civics, term 1"})
	c.space = c.b.Session.String()
	put := func(l *laptop, tx ht.Tx) {
		t.Helper()
		rc, err := l.node.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
	}
	heads := func(l *laptop) []dag.ID {
		h, err := l.node.Heads(ctx, c.space)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	put(teacher, c.b.Create)
	put(teacher, c.b.GroupCreate(teacher.key, "roster", c.members, c.members[:1], heads(teacher)...))
	put(teacher, c.b.GroupCreate(teacher.key, "registrar", c.members[:1], c.members[:1], heads(teacher)...))
	put(teacher, c.b.GroupCreate(teacher.key, "drafters", c.members[1:2], c.members[1:2], heads(teacher)...))
	put(teacher, c.b.BranchCreate(ana.key, "draft", "drafters", house.RootBranch, c.b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), heads(teacher)...))
	tx, change := c.b.Append(ana.key, "draft", c.b.Genesis, []statute.Op{ht.Replace(c.b.Trees[c.b.Genesis], "/us/t1/s1", "Homework is due in 14 days.")}, heads(teacher)...)
	put(teacher, tx)
	open, mr := c.b.Open(ana.key, ht.MR{Source: "draft", SourceHead: change, TargetHead: c.b.Genesis, Members: c.members,
		Rule: ht.Majority(house.MinRootNotice), Summary: "Give two weeks for homework"}, heads(teacher)...)
	put(teacher, open)
	c.mr = mr

	for i, l := range c.laps {
		cfg := sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{c.space},
			Debounce: sc.Debounce, Interval: sc.Interval}
		if i > 0 {
			cfg.Peers = []string{teacher.sync.Addrs()[0]}
		}
		// The node runs its own sync, as witan up's does; the page's
		// teacher's view reads its peers from it.
		sn, err := l.node.StartSync(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		l.sync = sn
	}
	for _, i := range serve {
		c.serve(t, c.laps[i], false)
	}
	c.converge(t, 30*time.Second)
	return c
}

// serve puts the page and the API of l on a loopback listener.
func (c *class) serve(t testing.TB, l *laptop, readOnly bool) {
	t.Helper()
	api, err := httpapi.New(httpapi.Options{Node: l.node, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := classroom.New(classroom.Options{Node: l.node, API: api, Voter: l.key, ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	l.page = h
	l.srv = httptest.NewServer(h)
	// A browser's event streams are open requests: close them, or Close
	// waits for them.
	t.Cleanup(func() { l.srv.CloseClientConnections(); l.srv.Close() })
}

// converge waits until every laptop holds the same heads.
func (c *class) converge(t testing.TB, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for {
		first, _ := c.laps[0].node.Heads(ctx, c.space)
		same := len(first) > 0
		for _, l := range c.laps[1:] {
			h, _ := l.node.Heads(ctx, c.space)
			same = same && slices.Equal(h, first)
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("laptops did not converge within %s", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ballot signs and submits l's ballot on the class's MR on l's own node.
func (c *class) ballot(t testing.TB, l *laptop, choice string) ht.Tx {
	t.Helper()
	ctx := context.Background()
	h, err := l.node.Heads(ctx, c.space)
	if err != nil {
		t.Fatal(err)
	}
	tx := c.b.Ballot(l.key, c.mr, choice, dag.ID{}, h...)
	rc, err := l.node.Submit(ctx, tx.Bytes, nil)
	if err != nil || rc.Status != "accepted" {
		t.Fatalf("%s's ballot: %v %+v", l.name, err, rc)
	}
	return tx
}

// post sends a JSON write to the page's endpoints.
func post(t testing.TB, url, token, origin string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Witan-CSRF", token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

func getText(t testing.TB, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// waitFor polls cond until it holds, failing after 20 s.
func waitFor(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
