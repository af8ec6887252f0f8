package classroom_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/witan-dev/witan/replica/classroom/internal/browsertest"
	"github.com/witan-dev/witan/sync"
)

// seenHook records, in the page, the wall-clock time (ms) at which its
// counts line of the MR first showed each number of approvals.
const seenHook = `(() => {
  window.__seen = {};
  const look = () => {
    const a = document.querySelector('article.mr[data-mr=%q] .counts');
    if (!a) return;
    const n = parseInt(a.textContent, 10);
    if (!(n in window.__seen)) window.__seen[n] = Date.now();
  };
  new MutationObserver(look).observe(document.getElementById('view'), {childList: true, subtree: true, characterData: true});
  look();
  return true;
})()`

// tenNodes is the classroom simulated on one machine: ten laptops over
// libp2p on loopback with witan up's sync timing, the page open on three
// of them. Each laptop votes in turn on its own node; the result is, per
// vote, the longest time from its receipt to its showing on an open page.
func tenNodes(t testing.TB) []time.Duration {
	ctx := browsertest.Browser(t, 1000, 800)
	c := newClassSync(t, 10, sync.Config{}, 0, 4, 9)
	pages := map[int]context.Context{}
	for _, i := range []int{0, 4, 9} {
		tab, cancel := chromedp.NewContext(ctx)
		t.Cleanup(cancel)
		if err := chromedp.Do(tab, chromedp.Navigate(c.laps[i].srv.URL+"/")); err != nil {
			t.Fatal(err)
		}
		until(t, tab, tallyExpr(c.mr)+`.startsWith("0 approve")`, "the page", 30*time.Second)
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](fmt.Sprintf(seenHook, c.mr.String()))); err != nil {
			t.Fatal(err)
		}
		pages[i] = tab
	}
	var lat []time.Duration
	for k, l := range c.laps {
		c.ballot(t, l, "approve")
		receipt := time.Now()
		var worst time.Duration
		for i, tab := range pages {
			expr := fmt.Sprintf(`window.__seen[%d] || 0`, k+1)
			ms, err := chromedp.Run(tab, chromedp.Poll[int64](expr, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(10*time.Millisecond)))
			if err != nil {
				t.Fatalf("vote %d never reached the page on laptop %d: %v", k+1, i, err)
			}
			worst = max(worst, time.UnixMilli(ms).Sub(receipt))
		}
		lat = append(lat, worst)
	}
	return lat
}

// TestBrowserTenNodes: every vote reaches every open page; CI's bound is
// generous (the goal, 2 s, is measured by BenchmarkClassroomTenNodes).
func TestBrowserTenNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("ten nodes and three pages; skipped with -short")
	}
	lat := tenNodes(t)
	if m := slices.Max(lat); m > 10*time.Second {
		t.Fatalf("a vote took %s to reach an open page (all: %v)", m, lat)
	}
	t.Logf("vote to page, per vote (worst of three pages): %v", lat)
}

// BenchmarkClassroomTenNodes measures the goal: with ten laptops and three
// open pages, every vote on every open page within 2 s of its receipt.
// Run: go test ./classroom -run '^$' -bench ClassroomTenNodes -benchtime 1x
func BenchmarkClassroomTenNodes(b *testing.B) {
	var all []time.Duration
	for b.Loop() {
		all = append(all, tenNodes(b)...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(all[len(all)-1].Milliseconds()), "max-ms")
	b.ReportMetric(float64(len(all)), "votes")
}
