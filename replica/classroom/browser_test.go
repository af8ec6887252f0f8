package classroom_test

// The browser tests: headless Chromium (internal/browsertest) drives the
// page served by real nodes on loopback, which sync over libp2p. They
// skip when no browser is installed, except under CI=true. Run them alone
// with: go test ./classroom -run Browser

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/classroom"
	"github.com/witan-dev/witan/replica/classroom/internal/browsertest"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// js evaluates expr in the page and decodes its value.
func js[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// until waits for expr to be truthy in the page.
func until(t testing.TB, ctx context.Context, expr, what string, within time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		body := js[string](t, ctx, `document.getElementById("view") ? document.getElementById("view").innerText.slice(0, 3000) : document.body.innerText`)
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, body)
	}
}

// tallyText is the page's counts line of the MR, or "".
func tallyExpr(mr dag.ID) string {
	return fmt.Sprintf(`(() => { const a = document.querySelector('article.mr[data-mr=%q] .counts'); return a ? a.textContent : ""; })()`, mr.String())
}

func shareExpr(mr dag.ID, share string) string {
	return fmt.Sprintf(`(() => { const a = document.querySelector('article.mr[data-mr=%q] .share[data-share=%q] .share-text'); return a ? a.textContent : ""; })()`, mr.String(), share)
}

func mrFinalityExpr(mr dag.ID) string {
	return fmt.Sprintf(`(() => { const a = document.querySelector('article.mr[data-mr=%q] .tally .finality'); return a ? a.getAttribute("data-finality") : ""; })()`, mr.String())
}

// tour saves what the viewport shows, with the element sel (if any)
// scrolled to its middle, as docs/img/<name>.png when WITAN_UPDATE_TOUR=1:
// the screenshots of docs/tour.md.
func tour(t testing.TB, ctx context.Context, name, sel string) {
	t.Helper()
	if os.Getenv("WITAN_UPDATE_TOUR") != "1" {
		return
	}
	if sel != "" {
		js[bool](t, ctx, fmt.Sprintf(`(document.querySelector(%q).scrollIntoView({block: "center"}), true)`, sel))
	}
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	js[bool](t, ctx, `(window.scrollTo(0, 0), true)`)
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// axe runs axe-core's WCAG 2 A and AA checks on the page and fails on any
// violation.
func axe(t testing.TB, ctx context.Context, what string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](string(src)+";0")); err != nil {
		t.Fatalf("loading axe-core: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}})
		.then(r => JSON.stringify({n: r.passes.length, v: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.html.slice(0, 160))}))}))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe.run: %v", err)
	}
	var res struct {
		N int `json:"n"`
		V []struct {
			ID, Impact, Help string
			Nodes            []string
		} `json:"v"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.N == 0 {
		t.Fatalf("axe-core on %s ran no check", what)
	}
	for _, v := range res.V {
		t.Errorf("axe-core on %s: %s (%s): %s %v", what, v.ID, v.Impact, v.Help, v.Nodes)
	}
	t.Logf("axe-core on %s: %d checks passed, %d violations", what, res.N, len(res.V))
}

// TestBrowserClassroom is the classroom in a real browser: a student's
// page on her own laptop watches the tally move when a classmate's ballot
// arrives over libp2p, votes (the node signs with her key and shows the
// receipt), and the teacher's page on the teacher's laptop lists the
// laptops, and after the determination its checkpoint button turns the
// figures final_advisory. Screenshots of each step are saved as artefacts.
func TestBrowserClassroom(t *testing.T) {
	ctx := browsertest.Browser(t, 1100, 900)
	c := newClass(t, 3, 0, 1) // teacher's and ana's laptops serve the page
	teacher, ana, ben := c.laps[0], c.laps[1], c.laps[2]
	wait := 20 * time.Second

	// 1. Ana opens her page: one open MR, no ballot yet.
	if err := chromedp.Do(ctx, chromedp.Navigate(ana.srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, tallyExpr(c.mr)+`.startsWith("0 approve, 0 reject, 0 abstain of an electorate of 3")`, "the empty tally", wait)
	for _, want := range []string{"Not for use in real elections or governance", "Simulation", "Give two weeks for homework", "Homework is due in 14 days.", "The law in force", "Roster (3 members)"} {
		if !js[bool](t, ctx, fmt.Sprintf(`document.body.textContent.includes(%q)`, want)) {
			t.Errorf("the page does not show %q", want)
		}
	}
	js[bool](t, ctx, `window.__sameDocument = true`)
	browsertest.Screenshot(ctx, t, "1-student-page")
	tour(t, ctx, "classroom-student", "")
	axe(t, ctx, "the student's page")

	// 2. Ben votes on his own laptop; the ballot reaches Ana's node over
	// libp2p and her page shows it without reloading.
	benBallot := c.ballot(t, ben, "approve")
	until(t, ctx, tallyExpr(c.mr)+`.startsWith("1 approve, 0 reject")`, "ben's ballot on ana's page", wait)
	// The update line numbers it as people read it everywhere: its
	// 0-based log index on ana's node.
	benPos, err := ana.node.Position(context.Background(), benBallot.ID)
	if err != nil {
		t.Fatal(err)
	}
	until(t, ctx, fmt.Sprintf(`document.getElementById("live").textContent === "Updated: New ballot.cast (log index %d, provisional)."`, benPos-1), "the update line with ben's ballot's log index", wait)
	if got := js[string](t, ctx, shareExpr(c.mr, "approve_of_cast")); got != "Approve of cast: 1 of 1 (100.0%)" {
		t.Errorf("approve_of_cast shows %q", got)
	}
	if got := js[string](t, ctx, shareExpr(c.mr, "approve_of_electorate")); got != "Approve of electorate: 1 of 3 (33.3%)" {
		t.Errorf("approve_of_electorate shows %q", got)
	}
	if got := js[string](t, ctx, shareExpr(c.mr, "rule_share")); got != "Rule share (approve_of_electorate): 1 of 3 (33.3%)" {
		t.Errorf("rule_share shows %q", got)
	}
	if !js[bool](t, ctx, `window.__sameDocument === true`) {
		t.Fatal("the page reloaded")
	}
	browsertest.Screenshot(ctx, t, "2-tally-moved")

	// 3. Ana votes from the page, with the keyboard only: Tab to her
	// Approve button, press Enter.
	tag := c.mr.String()[7:19]
	found := false
	for i := 0; i < 80 && !found; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		found = js[string](t, ctx, `document.activeElement ? document.activeElement.id : ""`) == "vote-approve-"+tag
	}
	if !found {
		t.Fatal("Tab never reached the Approve button")
	}
	if !js[bool](t, ctx, `getComputedStyle(document.activeElement).outlineStyle !== "none" || getComputedStyle(document.activeElement).boxShadow !== "none"`) {
		t.Error("the focused button shows no focus ring")
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, `(document.querySelector(".receipt-status") || {}).textContent === "accepted"`, "the signed receipt", wait)
	until(t, ctx, tallyExpr(c.mr)+`.startsWith("2 approve, 0 reject")`, "ana's own ballot in the tally", wait)
	receiptTx := js[string](t, ctx, `document.querySelector(".receipt-tx").textContent`)
	anaBallot, err := dag.ParseID(receiptTx)
	if err != nil {
		t.Fatalf("receipt tx %q: %v", receiptTx, err)
	}
	e, err := ana.node.Get(context.Background(), anaBallot)
	if err != nil {
		t.Fatalf("the receipt's ballot is not on ana's node: %v", err)
	}
	env, _, _, _ := dag.DecodeEnvelope(e.Data)
	if env.Author != ana.key.Key() || env.VerifySignature() != nil {
		t.Fatalf("ballot by %s, want ana's key %s", env.Author, ana.key.Key())
	}
	if js[string](t, ctx, `document.activeElement.id`) != "vote-approve-"+tag {
		t.Error("focus left the button after the page updated")
	}
	// One number for people: the receipt says the ballot's 0-based log
	// index on ana's node (its position, from 1, less one), as the update
	// line did for ben's, and as witan log and witan submit do.
	pos, err := ana.node.Position(context.Background(), anaBallot)
	if err != nil {
		t.Fatal(err)
	}
	idx := fmt.Sprintf("log index %d", pos-1)
	if got := js[string](t, ctx, `document.querySelector(".receipt p").textContent`); !strings.Contains(got, idx+".") {
		t.Errorf("the receipt says %q, want %q", got, idx)
	}

	browsertest.Screenshot(ctx, t, "3-voted-receipt")
	tour(t, ctx, "classroom-receipt", ".receipt")

	// 4. The teacher's page on the teacher's laptop: the laptops, and the
	// figures still provisional.
	c.converge(t, wait)
	ballots := []dag.ID{anaBallot}
	for _, l := range []*laptop{ben} {
		ids, _ := l.node.Log(context.Background(), c.space, 0, 0)
		for _, id := range ids {
			e, _ := l.node.Get(context.Background(), id)
			if env, _, _, err := dag.DecodeEnvelope(e.Data); err == nil && env.Type == dag.TxBallotCast && env.Author == ben.key.Key() {
				ballots = append(ballots, id)
			}
		}
	}
	slices.SortFunc(ballots, dag.ID.Compare)
	heads, _ := teacher.node.Heads(context.Background(), c.space)
	det := c.b.Determine(teacher.key, c.mr, ballots, "approved", heads...)
	if rc, err := teacher.node.Submit(context.Background(), det.Bytes, nil); err != nil || rc.Status != "accepted" {
		t.Fatalf("determination: %v %+v", err, rc)
	}
	tctx, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(teacher.srv.URL+"/#/s/"+c.space+"/teacher")); err != nil {
		t.Fatal(err)
	}
	until(t, tctx, `[...document.querySelectorAll("td.peer-status")].length === 2 && [...document.querySelectorAll("td.peer-status")].every(td => td.textContent === "up to date")`, "two laptops up to date", wait)
	until(t, tctx, mrFinalityExpr(c.mr)+` === "provisional" && document.body.innerText.includes("merged")`, "the merged MR, provisional", wait)
	if js[bool](t, tctx, `document.body.innerText.includes("final advisory (")`) {
		t.Error("a figure is final_advisory before any checkpoint")
	}
	browsertest.Screenshot(ctx, t, "4-student-after-determination")
	browsertest.Screenshot(tctx, t, "4-teacher-before-checkpoint")
	tour(t, tctx, "classroom-teacher", "")
	axe(t, tctx, "the teacher's page")

	// 5. The checkpoint button: the MR's outcome is final_advisory, on
	// this laptop, live; nothing says final.
	if err := chromedp.Do(tctx, chromedp.Click("#checkpoint")); err != nil {
		t.Fatal(err)
	}
	until(t, tctx, mrFinalityExpr(c.mr)+` === "final_advisory"`, "final_advisory after the checkpoint", wait)
	if js[bool](t, tctx, `[...document.querySelectorAll("[data-finality]")].some(e => e.getAttribute("data-finality") === "final")`) {
		t.Error("the page says final")
	}
	browsertest.Screenshot(tctx, t, "5-teacher-after-checkpoint")
	tour(t, tctx, "classroom-checkpointed", "article.mr")

	// 6. 320 px wide: nothing wider than the screen.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 800)); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, `document.documentElement.scrollWidth <= 320`, "no horizontal scrolling at 320 px", wait)
	browsertest.Screenshot(ctx, t, "6-narrow-320px")
	// A projector: 1920 px, the larger type.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1920, 1080)); err != nil {
		t.Fatal(err)
	}
	if fs := js[string](t, ctx, `getComputedStyle(document.documentElement).fontSize`); fs != "20px" {
		t.Errorf("projector font size %s, want 20px", fs)
	}
	browsertest.Screenshot(ctx, t, "7-projector")
}

// TestBrowserReadOnly: a page served beyond loopback offers no vote and
// no checkpoint, and says why.
func TestBrowserReadOnly(t *testing.T) {
	ctx := browsertest.Browser(t, 800, 900)
	c := newClass(t, 2)
	ro := &laptop{name: "ro", key: c.laps[1].key, node: c.laps[1].node}
	c.serve(t, ro, true)
	if err := chromedp.Do(ctx, chromedp.Navigate(ro.srv.URL+"/#/s/"+c.space+"/teacher")); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, tallyExpr(c.mr)+`.startsWith("0 approve")`, "the tally", 20*time.Second)
	if n := js[int](t, ctx, `document.querySelectorAll("button").length`); n != 0 {
		t.Errorf("read-only page has %d buttons", n)
	}
	if !js[bool](t, ctx, `document.body.innerText.includes("Read-only page")`) {
		t.Error("read-only page does not say so")
	}
	browsertest.Screenshot(ctx, t, "read-only")
}

// peerHeads is the teacher's view's peers, as the test sets them.
type peerHeads struct {
	mu    gosync.Mutex
	heads map[string][]dag.ID // announced heads by peer id
}

func (p *peerHeads) Connected() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.heads))
}

func (p *peerHeads) Announced(peer, _ string) []dag.ID {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.heads[peer])
}

func (p *peerHeads) set(peer string, heads []dag.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.heads[peer] = slices.Clone(heads)
}

// TestBrowserPeersFollow: the teacher's view follows the laptops while
// no entry reaches the teacher's: one drawn behind by an entry shows up
// to date once it announces the teacher's heads, and one that connects
// joins the table, while what the teacher is typing stays as it is.
func TestBrowserPeersFollow(t *testing.T) {
	ctx := browsertest.Browser(t, 1000, 900)
	c := newClass(t, 2)
	teacher := c.laps[0]
	before, _ := teacher.node.Heads(context.Background(), c.space)
	c.ballot(t, teacher, "approve")
	after, _ := teacher.node.Heads(context.Background(), c.space)
	ids, _ := teacher.node.Log(context.Background(), c.space, 0, 0)
	size := len(ids)
	peers := &peerHeads{heads: map[string][]dag.ID{"12D3KooWAnaLaptop": before}}
	api, err := httpapi.New(httpapi.Options{Node: teacher.node, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := classroom.New(classroom.Options{Node: teacher.node, API: api, Voter: teacher.key, Peers: peers})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/#/s/"+c.space+"/teacher")); err != nil {
		t.Fatal(err)
	}
	status := `[...document.querySelectorAll("td.peer-status")].map(td => td.textContent).join("; ")`
	wait := 20 * time.Second
	// The event stream replays the log to a new page, which may draw it
	// once more after the live line names the last entry; so the peers
	// change twice below, in turn, and such a redraw shows the first
	// change at most.
	until(t, ctx, fmt.Sprintf(`document.getElementById("live").textContent === "Updated: New ballot.cast (log index %d, provisional)."`, size-1), "the page after the log's replay", wait)
	until(t, ctx, status+` === "behind by 1 entry"`, "the laptop behind by one entry", wait)
	fill(t, ctx, "enrol-code", "half a code")

	peers.set("12D3KooWAnaLaptop", after)
	until(t, ctx, status+` === "up to date"`, "the laptop up to date", wait)
	peers.set("12D3KooWBenLaptop", nil)
	until(t, ctx, status+` === "up to date; has not announced this session yet"`, "the laptop that connected", wait)
	if got := js[string](t, ctx, `document.activeElement.id + ": " + document.activeElement.value`); got != "enrol-code: half a code" {
		t.Errorf("focus and input after the laptops changed: %q", got)
	}
	if ids, _ := teacher.node.Log(context.Background(), c.space, 0, 0); len(ids) != size {
		t.Errorf("the teacher's log went from %d to %d entries: an entry, not the peers, may have redrawn the page", size, len(ids))
	}
}

// TestBrowserContradictory: two determinations of one MR that disagree
// (each over its own concurrent ballots, OQ-3) are shown plainly, in
// words, on the MR; the MR stays open.
func TestBrowserContradictory(t *testing.T) {
	ctx := browsertest.Browser(t, 1000, 900)
	c := newClass(t, 2)
	l := c.laps[0]
	// A second session on the teacher's node, with ten members.
	b := ht.New(ht.Options{Simulation: true, Label: "Contradiction"})
	var last dag.ID
	put := func(tx ht.Tx) {
		t.Helper()
		if rc, err := l.node.Submit(context.Background(), tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
		last = tx.ID
	}
	put(b.Create)
	put(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), last))
	put(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	put(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	put(b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, last)
	put(tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Extend the period"}, last)
	put(open)
	side := func(from, to int, choice string) []dag.ID {
		prev := open.ID
		var ids []dag.ID
		for i := from; i < to; i++ {
			bt := b.Ballot(ht.Member(i), mr, choice, dag.ID{}, prev)
			put(bt)
			ids, prev = append(ids, bt.ID), bt.ID
		}
		return ids
	}
	a := side(0, 6, "approve") // members 4 and 5 vote on both sides, concurrently
	r := side(4, 10, "reject")
	put(b.Determine(ht.Member(0), mr, a, "approved", a[len(a)-1]))
	put(b.Determine(ht.Member(9), mr, r, "rejected", r[len(r)-1]))

	c.serve(t, l, false)
	if err := chromedp.Do(ctx, chromedp.Navigate(l.srv.URL+"/#/s/"+b.Session.String())); err != nil {
		t.Fatal(err)
	}
	flag := fmt.Sprintf(`document.querySelector('article.mr[data-mr=%q] p.flag[data-flag="contradictory_determination"]')`, mr.String())
	until(t, ctx, flag+` !== null`, "the contradictory_determination flag", 20*time.Second)
	if got := js[string](t, ctx, flag+`.textContent`); !strings.HasPrefix(got, "Contradictory determination: two determinations of this merge request disagree.") {
		t.Errorf("flag reads %q", got)
	}
	if st := js[string](t, ctx, fmt.Sprintf(`document.querySelector('article.mr[data-mr=%q] .status').textContent`, mr.String())); st != "open" {
		t.Errorf("MR status %q, want open", st)
	}
	browsertest.Screenshot(ctx, t, "contradictory")
	axe(t, ctx, "a page with a contradictory determination")
}
