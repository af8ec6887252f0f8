package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// TestUpPage runs the built binary: a key made with witan keygen into the
// node's data directory is the page's voter; the page at "/" carries its
// CSRF token; a vote from the page is signed with that key, receipted, and
// seen on the node's event stream; and SIGTERM with the stream still open
// stops the node cleanly and at once (Shutdown ends event streams instead
// of waiting for them).
func TestUpPage(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	dir := t.TempDir()
	out, _, code := run(ctx, "", "keygen", "-out", filepath.Join(dir, "voter.key"), "-json")
	if code != 0 {
		t.Fatalf("keygen: %d %s", code, out)
	}
	var kg struct{ Key string }
	if err := json.Unmarshal([]byte(out), &kg); err != nil {
		t.Fatal(err)
	}
	voter, err := dag.ParseKey(kg.Key)
	if err != nil {
		t.Fatal(err)
	}
	p := startUp(t, bin, dir, "-checkpoint-every", "0")
	if p.info.Voter != kg.Key || p.info.Page != p.info.HTTP+"/" {
		t.Fatalf("startup line: voter %q page %q", p.info.Voter, p.info.Page)
	}

	b := ht.New(ht.Options{Simulation: true, Label: "page"})
	space := b.Session.String()
	c := &httpapi.Client{BaseURL: p.info.HTTP, Session: space}
	var last dag.ID
	submit := func(tx ht.Tx) {
		t.Helper()
		if rc, err := c.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		last = tx.ID
	}
	roster := []dag.Key{ht.Member(0).Key(), voter}
	submit(b.Create)
	submit(b.GroupCreate(ht.Member(0), "roster", roster, roster[:1], last))
	submit(b.GroupCreate(ht.Member(0), "registrar", roster[:1], roster[:1], last))
	submit(b.GroupCreate(ht.Member(0), "drafters", roster[:1], roster[:1], last))
	submit(b.BranchCreate(ht.Member(0), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	tx, change := b.Append(ht.Member(0), "draft", b.Genesis, []statute.Op{statuteOps(b, "/us/t1/s2", "The period is 60 days.")}, last)
	submit(tx)
	open, mr := b.Open(ht.Member(0), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: roster, Rule: ht.Majority(house.MinRootNotice)}, last)
	submit(open)

	resp, err := http.Get(p.info.Page)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="witan-csrf" content="([A-Za-z0-9_-]{43})"`).FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil || !strings.Contains(string(page), kg.Key) {
		t.Fatalf("GET /: %d, token %v", resp.StatusCode, m != nil)
	}

	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ectx, "GET", p.info.HTTP+httpapi.Base+"/events?last_event_id=7", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET /events: %v %v", err, stream)
	}
	defer stream.Body.Close()

	body, _ := json.Marshal(map[string]string{"session": space, "mr": mr.String(), "choice": "approve"})
	vreq, _ := http.NewRequest("POST", p.info.HTTP+"/classroom/v0/vote", strings.NewReader(string(body)))
	vreq.Header.Set("Content-Type", "application/json")
	vreq.Header.Set("X-Witan-CSRF", string(m[1]))
	vresp, err := http.DefaultClient.Do(vreq)
	if err != nil {
		t.Fatal(err)
	}
	var va struct {
		Receipt json.RawMessage `json:"receipt"`
	}
	json.NewDecoder(vresp.Body).Decode(&va)
	vresp.Body.Close()
	rc, err := httpapi.DecodeReceipt(va.Receipt)
	if vresp.StatusCode != 200 || err != nil || rc.Status != "accepted" || rc.Verify() != nil {
		t.Fatalf("vote: %d %v %s", vresp.StatusCode, err, va.Receipt)
	}

	sc := bufio.NewScanner(stream.Body)
	seen := false
	for !seen && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev httpapi.EntryEvent
			if json.Unmarshal([]byte(d), &ev) == nil && ev.Tx == rc.Tx {
				if ev.Type != dag.TxBallotCast || ev.Author != voter || ev.Position != 8 || ev.Finality != "provisional" || !ev.Simulation {
					t.Fatalf("the ballot's event: %+v", ev)
				}
				seen = true
			}
		}
	}
	if !seen {
		t.Fatal("the page's ballot never reached the event stream")
	}
	start := time.Now()
	p.signal(t, syscall.SIGTERM)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopping with an open event stream took %s", d)
	}
}

// TestUpPagePublicReadOnly: witan up -public on a non-loopback address
// serves the page read-only: no CSRF token in it, and a vote is refused
// even from loopback.
func TestUpPagePublicReadOnly(t *testing.T) {
	bin := buildWitan(t)
	p := startUp(t, bin, t.TempDir(), "-public", "-http", "0.0.0.0:0", "-no-p2p")
	port := p.info.HTTP[strings.LastIndex(p.info.HTTP, ":"):]
	base := "http://127.0.0.1" + port
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `name="witan-readonly" content="true"`) || !strings.Contains(string(page), `name="witan-csrf" content=""`) {
		t.Fatalf("page served on 0.0.0.0 is not read-only:\n%s", page)
	}
	req, _ := http.NewRequest("POST", base+"/classroom/v0/checkpoint", strings.NewReader(`{"session":"`+dag.Sum(nil).String()+`"}`))
	req.Header.Set("Content-Type", "application/json")
	vresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var prob map[string]any
	json.NewDecoder(vresp.Body).Decode(&prob)
	vresp.Body.Close()
	if vresp.StatusCode != 403 || prob["code"] != "not_authorized" {
		t.Fatalf("write to a read-only page: %d %v", vresp.StatusCode, prob)
	}
	p.stop(t)
}
