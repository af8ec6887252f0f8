package classroom_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/sync"
)

// A laptop that took a classmate's ballot from the classmate, not from
// the teacher's, does not tell the teacher's node (its announcements of
// heads others announced are suppressed, and here the periodic ones are
// 30 s apart): the teacher's page asks it, by a pull that brings
// nothing, and lists it up to date from its answer.
func TestPeersProbeALaptopThatKeptQuiet(t *testing.T) {
	c := newClassSync(t, 3, sync.Config{Debounce: 10 * time.Millisecond, Interval: 30 * time.Second}, 0)
	teacher, ana, ben := c.laps[0], c.laps[1], c.laps[2]
	ctx := context.Background()
	if err := ben.sync.Connect(ctx, ana.sync.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	page := func() map[string]map[string]any {
		_, body, _ := getText(t, teacher.srv.URL+"/classroom/v0/peers?session="+c.space)
		var m struct {
			Peers []map[string]any `json:"peers"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, p := range m.Peers {
			out[p["id"].(string)] = p
		}
		return out
	}
	// Ana votes, and both the teacher's node and Ben's pull it from her
	// (as they would on her announcement, which may come before the
	// gossip mesh is up).
	c.ballot(t, ana, "approve")
	for _, l := range []*laptop{teacher, ben} {
		if _, err := l.sync.SyncWith(ctx, ana.sync.ID(), c.space); err != nil {
			t.Fatal(err)
		}
	}
	c.converge(t, 20*time.Second)
	th, _ := teacher.node.Heads(ctx, c.space)
	if seen := teacher.sync.Engine().Announced(ben.sync.ID().String(), c.space); slices.Equal(seen, th) {
		t.Log("the teacher's node already knew Ben's heads: the probe is not what this run tests")
	}
	start := time.Now()
	for {
		p := page()[ben.sync.ID().String()]
		if p != nil && p["announced"] == true && p["behind"] == float64(0) {
			t.Logf("Ben listed up to date %v after the class converged", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("Ben not listed up to date 10 s after the class converged: %v", p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
