package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// TestHTTPPeerCheckpointFork (30k §9, S10: replicas check peers'
// checkpoints when they sync): B pulls A over HTTP through a proxy that
// can lie. Honest: the first pull records A's checkpoint (first_seen); A
// grows and checkpoints, the next pull verifies A's consistency proof
// (consistent); a pull with nothing new is consistent too. Then the proxy
// serves checkpoints signed with A's own key (the operator's) over a
// rewritten history, each a fork_detected worked out from RFC 9162: a
// bigger log whose root is not the one A's real consistency proof
// reaches; the same size with another root; a smaller log. Each pull
// still ingests the entries (judged on their own), returns an error
// wrapping node.ErrForkDetected, and keeps the last verified checkpoint:
// when the proxy is honest again, the pull is consistent.
func TestHTTPPeerCheckpointFork(t *testing.T) {
	ctx := context.Background()
	a, b := newNode(t), newNode(t)
	s := a.newSession(t)
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32)) // newNode's node key: the operator's
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(a.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var lie atomic.Uint64 // 0 honest; else the size of the forged checkpoint
	forge := func(size uint64) []byte {
		ids := make([]dag.ID, size)
		for i := range ids {
			ids[i] = dag.Sum([]byte(fmt.Sprintf("rewritten %d", i)))
		}
		c := replica.Checkpoint{Size: size, Root: replica.MerkleRoot(ids), TS: time.Date(2026, 9, 22, 0, 0, 0, 0, time.UTC), Node: key.Key()}
		msg, err := c.SigningBytes()
		if err != nil {
			t.Fatal(err)
		}
		c.Sig = key.Sign(replica.DomainCheckpoint, msg)
		cb, _ := json.Marshal(c)
		out, _ := json.Marshal(map[string]any{"session": s.space, "checkpoint": json.RawMessage(cb), "log_size": size, "finality": "final_advisory"})
		return out
	}
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if size := lie.Load(); size != 0 && r.URL.Path == httpapi.Base+"/checkpoint" {
			w.Header().Set("Content-Type", "application/json")
			w.Write(forge(size))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(liar.Close)
	peer := node.NewHTTPPeer(liar.URL, nil)
	var detail string
	pull := func(want string) error {
		t.Helper()
		res, err := b.node.PullHTTP(ctx, peer)
		if len(res) == 1 {
			detail = res[0].ForkDetail
		}
		if len(res) != 1 || res[0].Checkpoint != want || res[0].Quarantined != 0 {
			t.Fatalf("pull: %+v %v, want checkpoint %s", res, err, want)
		}
		if want == "fork_detected" && res[0].ForkDetail == "" {
			t.Fatalf("fork without detail: %+v", res[0])
		}
		return err
	}
	if err := pull("none"); err != nil { // A has no checkpoint yet
		t.Fatal(err)
	}
	a.checkpointNow(t, s.space)
	if err := pull("first_seen"); err != nil {
		t.Fatal(err)
	}
	voter := 0
	grow := func() {
		t.Helper()
		a.submit(t, s, s.b.Ballot(ht.Member(voter), s.mr, "approve", dag.ID{}, s.last))
		voter++
		a.checkpointNow(t, s.space)
	}
	grow()
	if err := pull("consistent"); err != nil {
		t.Fatal(err)
	}
	if err := pull("consistent"); err != nil {
		t.Fatal(err)
	}
	verified := a.node.Replica().Checkpoints(dag.MustParseID(s.space))
	last := verified[len(verified)-1].Size // what B verified last
	grow()                                 // A's real log is last+1: its real proof last..last+1 exists, to A's real root
	for _, c := range []struct {
		size uint64
		want string
	}{{last + 1, "names roots"}, {last, "root changed"}, {last - 1, "shrank"}} {
		lie.Store(c.size)
		if err := pull("fork_detected"); !errors.Is(err, node.ErrForkDetected) {
			t.Fatalf("forged size %d: %v, want ErrForkDetected", c.size, err)
		}
		if !strings.Contains(detail, c.want) {
			t.Errorf("forged size %d: detail %q, want it to say %q", c.size, detail, c.want)
		}
	}
	lie.Store(0)
	if err := pull("consistent"); err != nil {
		t.Fatalf("honest again: %v", err)
	}
	hb, _ := b.node.Heads(ctx, s.space)
	ha, _ := a.node.Heads(ctx, s.space)
	if len(ha) != 1 || len(hb) != 1 || ha[0] != hb[0] {
		t.Fatalf("heads %v / %v", ha, hb)
	}
}
