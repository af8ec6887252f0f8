package node_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// A peer sends memory blocks that do not verify: each is
// refused, nothing of it is stored, and it is in the node's one bounded
// quarantine record beside refused envelopes, with its code and its
// sender, as GET /quarantine on a real listener shows. A good block the
// same peer sends in the same batch is applied.
func TestBadMemoryBlockQuarantinedOverHTTP(t *testing.T) {
	ctx := context.Background()
	space, err := node.MemorySpace("harbour")
	if err != nil {
		t.Fatal(err)
	}
	victimNode, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer victimNode.Close()
	var mu gosync.Mutex
	done := map[string]sync.Stats{}
	victim, err := sync.NewNode(ctx, victimNode, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space},
		Engine: sync.Options{OnEvent: func(ev sync.Event) {
			if ev.Kind == sync.EventSyncDone {
				mu.Lock()
				done[ev.Peer] = ev.Stats
				mu.Unlock()
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	srv, err := httpapi.New(httpapi.Options{Node: victimNode})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	// Two blocks that are not CAT7 blocks (memory-sync-cat7: a block is
	// the canonical JSON array of the domain and seven slots): one with
	// the domain and a single slot, one that is not canonical JSON at
	// all. Their ids are the SHA-256 of the bytes sent: no block hash can
	// be read from them. And one good block.
	short := []byte(`["` + mb.HashDomain + `",[]]`)
	loose := []byte(`{ "subject": "tide" }`)
	good := mb.Block{Origin: mb.MustText("agent:ada"), Subject: mb.MustText("tide"), Body: mb.MustText("high water 06:10"),
		Lineage: mb.MustParents()}.Seal()
	bad := map[dag.ID]bool{dag.Sum(short): true, dag.Sum(loose): true}
	from := sybil(t, victim, []sync.Item{{Data: short}, {Data: loose}, {Data: good.Entry(space).Data}})
	waitFor(t, 30*time.Second, "the victim's pull from the peer", func() bool {
		mu.Lock()
		defer mu.Unlock()
		_, ok := done[from.String()]
		return ok
	})

	var page struct {
		Quarantine []httpapi.QuarantineEntry `json:"quarantine"`
		Stats      struct {
			Held    int `json:"held"`
			Refused int `json:"refused"`
			Sources int `json:"sources"`
		} `json:"stats"`
	}
	getJSON(t, hs.URL+httpapi.Base+"/quarantine", http.StatusOK, &page)
	if page.Stats.Held != 2 || page.Stats.Refused != 2 || page.Stats.Sources != 1 {
		t.Fatalf("quarantine stats %+v, want the 2 bad blocks from 1 source", page.Stats)
	}
	for _, q := range page.Quarantine {
		if !bad[q.ID] {
			t.Errorf("quarantined %s, not one of the bad blocks", q.ID)
			continue
		}
		delete(bad, q.ID)
		if q.Code != dag.Code(mb.CodeBlockMalformed) || q.Session != space || q.Source != "peer:"+from.String() || q.Detail == "" || q.Time == "" {
			t.Errorf("record %+v: want code %s, space %s, source peer:%s, a reason and a time", q, mb.CodeBlockMalformed, space, from)
		}
	}
	if len(bad) != 0 {
		t.Fatalf("not in /quarantine: %v (page %+v)", bad, page.Quarantine)
	}
	for _, id := range []dag.ID{dag.Sum(short), dag.Sum(loose)} {
		if st, err := victimNode.Store().Has(ctx, id); err != nil || st != dag.Absent {
			t.Errorf("refused block %s: store status %v, %v; want absent", id, st, err)
		}
		if c, ok, _ := victimNode.Quarantined(ctx, id); !ok || c != dag.Code(mb.CodeBlockMalformed) {
			t.Errorf("Quarantined(%s) = %q, %v", id, c, ok)
		}
		getJSON(t, hs.URL+httpapi.Base+"/memory/harbour/blocks/"+id.String(), http.StatusNotFound, nil)
	}
	var heads struct {
		Heads []dag.ID `json:"heads"`
	}
	getJSON(t, hs.URL+httpapi.Base+"/memory/harbour/heads", http.StatusOK, &heads)
	if len(heads.Heads) != 1 || heads.Heads[0] != good.ID() {
		t.Fatalf("memory heads %v, want only the good block %s", heads.Heads, good.ID())
	}
}

// getJSON GETs url, wants status, and decodes the body into v (if set).
func getJSON(t *testing.T, url string, status int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d", strings.TrimPrefix(url, "http://"), resp.StatusCode, status)
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
}
