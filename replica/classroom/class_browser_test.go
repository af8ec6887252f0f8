package classroom_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/classroom"
	"github.com/witan-dev/witan/replica/classroom/internal/browsertest"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// room starts n laptops with no session: each a node in memory with its
// own member key, libp2p sync on loopback (every laptop dials laptop 0,
// the teacher's), and the page and API on a real loopback listener. The
// teacher's address book is a file in the test's directory.
func room(t testing.TB, n int) []*laptop {
	t.Helper()
	ctx := context.Background()
	var laps []*laptop
	for i := 0; i < n; i++ {
		nd, err := node.Open(ctx, node.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Close() })
		l := &laptop{name: []string{"teacher", "ana", "ben", "chloe"}[i], key: ht.Member(i), node: nd}
		cfg := sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Debounce: 10 * time.Millisecond, Interval: 500 * time.Millisecond}
		if i > 0 {
			cfg.Peers = []string{laps[0].sync.Addrs()[0]}
		}
		if l.sync, err = nd.StartSync(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		api, err := httpapi.New(httpapi.Options{Node: nd, Ephemeral: true})
		if err != nil {
			t.Fatal(err)
		}
		o := classroom.Options{Node: nd, API: api, Voter: l.key}
		if i == 0 {
			l.names = filepath.Join(t.TempDir(), "names.json")
			o.Names = l.names
		}
		if l.page, err = classroom.New(o); err != nil {
			t.Fatal(err)
		}
		l.srv = httptest.NewServer(l.page)
		t.Cleanup(func() { l.srv.CloseClientConnections(); l.srv.Close() })
		laps = append(laps, l)
	}
	return laps
}

// click clicks the element with id in the page, by script (the element
// may be below the fold).
func click(t testing.TB, ctx context.Context, id string) {
	t.Helper()
	if !js[bool](t, ctx, fmt.Sprintf(`(() => { const b = document.getElementById(%q); if (!b || b.disabled) return false; b.click(); return true; })()`, id)) {
		t.Fatalf("no enabled #%s to click", id)
	}
}

// fill types v into the field with id, as a person would (an input event
// follows).
func fill(t testing.TB, ctx context.Context, id, v string) {
	t.Helper()
	if !js[bool](t, ctx, fmt.Sprintf(`(() => { const f = document.getElementById(%q); if (!f) return false; f.focus(); f.value = %q; f.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, id, v)) {
		t.Fatalf("no #%s to fill", id)
	}
}

func text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	return js[string](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.textContent : ""; })()`, sel))
}

// TestBrowserClassFromThePage runs a whole class from the page, in
// Chromium, on four laptops syncing over libp2p on loopback: the teacher
// starts a session from the template; each student's laptop shows its
// code and joins the session its peers announce; the teacher pastes the
// codes with the students' names (the roster grows; the connected laptops
// and the roster show those names); Ana proposes an amendment by editing
// a section (the diff is shown before she signs); the three students
// vote on their own laptops; the teacher works out the determination (the
// page shows "approved" before signing), signs it, then signs a
// checkpoint; the new text is the law on every laptop. Every view is
// checked with axe-core and saved as a screenshot.
func TestBrowserClassFromThePage(t *testing.T) {
	start := time.Now()
	bctx := browsertest.Browser(t, 1100, 900)
	laps := room(t, 4)
	teacher, students := laps[0], laps[1:]
	wait := 30 * time.Second

	// 1. The teacher starts a class from the template.
	tctx, cancelT := chromedp.NewContext(bctx)
	defer cancelT()
	if err := chromedp.Do(tctx, chromedp.Navigate(teacher.srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	until(t, tctx, `document.getElementById("start") !== null`, "the start button", wait)
	browsertest.Screenshot(tctx, t, "01-teacher-home")
	axe(t, tctx, "the teacher's home page")
	click(t, tctx, "start")
	until(t, tctx, `/^#\/s\/sha256:[0-9a-f]{64}\/teacher$/.test(location.hash) && document.getElementById("enrol") !== null`, "the teacher's view of the new class", wait)
	space := strings.TrimSuffix(strings.TrimPrefix(js[string](t, tctx, `location.hash`), "#/s/"), "/teacher")
	sid, err := dag.ParseID(space)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Class rules", "Homework is due 7 days after it is set.", "Roster (1 members)", "Simulation"} {
		if !js[bool](t, tctx, fmt.Sprintf(`document.body.textContent.includes(%q)`, want)) {
			t.Errorf("the new class's page does not show %q", want)
		}
	}

	// 2. Each student's laptop shows its code and joins the class its
	// peer announces.
	sctx := make([]context.Context, len(students))
	codes := make([]string, len(students))
	for i, s := range students {
		c, cancel := chromedp.NewContext(bctx)
		defer cancel()
		sctx[i] = c
		if err := chromedp.Do(c, chromedp.Navigate(s.srv.URL+"/")); err != nil {
			t.Fatal(err)
		}
		until(t, c, fmt.Sprintf(`document.querySelector('[data-available=%q] button.join') !== null`, space), s.name+"'s page offering the class", wait)
		codes[i] = js[string](t, c, `document.getElementById("my-code").value`)
		want := classroom.EnrolCode(s.key.Key(), s.sync.ID().String())
		if codes[i] != want {
			t.Fatalf("%s's page shows code %q, want %q", s.name, codes[i], want)
		}
		if i == 0 {
			browsertest.Screenshot(c, t, "02-student-home")
			axe(t, c, "a student's home page")
		}
		click(t, c, "join-"+space[7:19])
		until(t, c, fmt.Sprintf(`location.hash === "#/s/%s" && document.getElementById("not-enrolled") !== null`, space), s.name+"'s page on the joined class, not enrolled yet", wait)
	}
	browsertest.Screenshot(sctx[0], t, "03-student-not-enrolled")

	// 3. The teacher enrols them by pasting their codes, with names.
	names := []string{"Ana", "Ben", "Chloe"}
	for i := range students {
		fill(t, tctx, "enrol-code", codes[i])
		fill(t, tctx, "enrol-name", names[i])
		click(t, tctx, "enrol")
		until(t, tctx, fmt.Sprintf(`(document.getElementById("enrol-note") || {}).textContent === %q`, names[i]+" is enrolled."), "enrolment of "+names[i], wait)
	}
	until(t, tctx, `document.body.textContent.includes("Roster (4 members)")`, "a roster of four", wait)
	for _, n := range names {
		if !js[bool](t, tctx, fmt.Sprintf(`[...document.querySelectorAll("ul.roster li strong")].some(e => e.textContent === %q)`, n)) {
			t.Errorf("the roster does not name %s", n)
		}
	}
	until(t, tctx, `["Ana", "Ben", "Chloe"].every(n => [...document.querySelectorAll("tr[data-peer] td strong")].some(e => e.textContent === n))`, "the connected laptops by name", wait)
	// The names are this laptop's only: no envelope of the session carries them.
	ids, _ := teacher.node.Log(context.Background(), space, 0, 0)
	for _, id := range ids {
		e, _ := teacher.node.Get(context.Background(), id)
		for _, n := range names {
			if strings.Contains(string(e.Data), n) {
				t.Errorf("entry %s carries the name %s", id, n)
			}
		}
	}
	browsertest.Screenshot(tctx, t, "04-teacher-enrolled")
	axe(t, tctx, "the teacher's view with the class enrolled")

	// 4. Ana proposes an amendment: she edits section 1, sees the diff,
	// signs.
	ana := sctx[0]
	until(t, ana, `document.getElementById("not-enrolled") === null && document.getElementById("propose-_us_t1_s1") !== null`, "ana enrolled on her own laptop", wait)
	click(t, ana, "propose-_us_t1_s1")
	until(t, ana, `document.getElementById("draft-text") !== null`, "the draft form", wait)
	newText := "Homework is due 14 days after it is set."
	fill(t, ana, "draft-text", newText)
	fill(t, ana, "draft-summary", "Two weeks for homework")
	click(t, ana, "draft-preview")
	until(t, ana, `document.getElementById("draft-diff") !== null`, "the diff before signing", wait)
	wantDiff := "@@ /us/t1/s1 (modified) @@\n [section] Homework\n-Homework is due 7 days after it is set.\n+Homework is due 14 days after it is set.\n"
	if got := text(t, ana, "#draft-diff"); got != wantDiff {
		t.Errorf("diff shown:\n%s\nwant:\n%s", got, wantDiff)
	}
	mrText := text(t, ana, "#draft-mr")
	mr, err := dag.ParseID(mrText)
	if err != nil {
		t.Fatalf("the MR id shown, %q: %v", mrText, err)
	}
	before, _ := students[0].node.Log(context.Background(), space, 0, 0)
	browsertest.Screenshot(ana, t, "05-student-diff-before-signing")
	axe(t, ana, "a student's amendment with its diff, before signing")
	if after, _ := students[0].node.Log(context.Background(), space, 0, 0); len(after) != len(before) {
		t.Fatalf("showing the diff signed something: the log grew from %d to %d", len(before), len(after))
	}
	click(t, ana, "draft-sign")
	until(t, ana, fmt.Sprintf(`document.querySelector('article.mr[data-mr=%q]') !== null`, mr.String()), "ana's MR on her page", wait)
	if _, err := students[0].node.Views().MR(context.Background(), dag.MustParseID(space), mr); err != nil {
		t.Fatalf("the MR shown before signing is not the MR opened: %v", err)
	}

	// 5. The three students vote approve, each on their own laptop.
	tag := mr.String()[7:19]
	for i, c := range sctx {
		until(t, c, fmt.Sprintf(`document.getElementById("vote-approve-%s") !== null`, tag), students[i].name+"'s vote buttons", wait)
		click(t, c, "vote-approve-"+tag)
		until(t, c, `(document.querySelector(".receipt-status") || {}).textContent === "accepted"`, students[i].name+"'s receipt", wait)
	}

	// 6. The teacher works out the determination, sees it, signs it.
	until(t, tctx, tallyExpr(mr)+`.startsWith("3 approve, 0 reject, 0 abstain of an electorate of 4")`, "three approvals on the teacher's laptop", wait)
	if got := text(t, tctx, fmt.Sprintf(`article.mr[data-mr=%q] .opener strong`, mr.String())); got != "Ana" {
		t.Errorf("the teacher's page names the MR's proposer %q, want Ana", got)
	}
	click(t, tctx, "close-"+tag)
	until(t, tctx, `document.querySelector(".close-outcome") !== null`, "the determination before signing", wait)
	if got := text(t, tctx, ".close-outcome"); got != "approved" {
		t.Fatalf("the determination shown is %q, want approved (3 of 4 > 1/2, quorum 3 of 4 >= 1/2)", got)
	}
	if !strings.Contains(text(t, tctx, "#close-plan-"+tag), "Tally: 3 approve, 0 reject, 0 abstain of an electorate of 4, over the 3 ballots cast on it.") {
		t.Errorf("the plan reads %q", text(t, tctx, "#close-plan-"+tag))
	}
	browsertest.Screenshot(tctx, t, "06-teacher-determination-before-signing")
	axe(t, tctx, "the teacher's determination, before signing")
	click(t, tctx, "close-sign-"+tag)
	until(t, tctx, fmt.Sprintf(`(document.querySelector('article.mr[data-mr=%q] .status') || {}).textContent === "merged"`, mr.String()), "the MR merged", wait)

	// 7. The teacher signs a checkpoint: the outcome is final advisory there.
	click(t, tctx, "checkpoint")
	until(t, tctx, mrFinalityExpr(mr)+` === "final_advisory"`, "final_advisory after the checkpoint", wait)
	browsertest.Screenshot(tctx, t, "07-teacher-after-checkpoint")

	// 8. The law changed on every laptop, live.
	lawText := `(document.querySelector('li[data-nid="/us/t1/s1"] > .law-text') || {}).textContent`
	for i, c := range append([]context.Context{tctx}, sctx...) {
		until(t, c, lawText+fmt.Sprintf(` === %q`, newText), laps[i].name+"'s page showing the new law", wait)
		l, err := laps[i].node.Views().Law(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := laps[i].node.Views().Snapshot(context.Background(), dag.MustParseID(space), l.Head)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := tr.Get("/us/t1/s1"); n.Text != newText {
			t.Errorf("%s's node: the law reads %q", laps[i].name, n.Text)
		}
		browsertest.Screenshot(c, t, fmt.Sprintf("08-law-changed-%s", laps[i].name))
	}
	axe(t, sctx[2], "a student's page after the merge")
	t.Logf("a whole class from the page in %s; screenshots in %s", time.Since(start).Round(time.Millisecond), browsertest.Dir(t))
}
