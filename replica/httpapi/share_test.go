package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// TestSubmitDuringPeerSyncHTTP: clients POST /transactions to node B on a
// real listener (B's store on disk) while B pulls a session of nPeer ballots from node A over
// HTTP federation (PullHTTP, the peer write path: Ingest in parts, which
// client submissions queued meanwhile share store commits with). Each
// client's ballot, signed here with its id computed here, is answered
// 200 with a receipt that says accepted, names the id and the log index
// B's log has it at; every ballot of the pull is accepted; B's log holds
// both, once each.
func TestSubmitDuringPeerSyncHTTP(t *testing.T) {
	ctx := context.Background()
	const nPeer, nClients, perClient = 3000, 16, 16
	a := newNodeSeed(t, 51)
	keyB, err := dag.SignerFromSeed(bytes.Repeat([]byte{52}, 32))
	if err != nil {
		t.Fatal(err)
	}
	bn, bsrv := diskNode(t, keyB, t.TempDir(), nil) // on disk, fsync on: commits take a while, as in use
	b := &apiNode{node: bn, srv: bsrv}
	bl := ht.New(ht.Options{Simulation: true})
	n := nPeer + nClients*perClient
	roster := bl.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), bl.Create.ID)
	open, mr := bl.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: bl.Genesis, TargetHead: bl.Genesis,
		Members: ht.Members(0, n), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	head := []ht.Tx{bl.Create, roster, open}
	for _, tx := range head {
		for _, nd := range []*apiNode{a, b} {
			if st, m := nd.post(t, tx); st != http.StatusOK || field(m, "receipt", "status") != "accepted" {
				t.Fatalf("%s: %d %v", tx.Env.Type, st, m)
			}
		}
	}
	subs := make([]replica.Submission, nPeer)
	for i := range subs {
		subs[i] = replica.Submission{Envelope: bl.Ballot(ht.Member(i), mr, "approve", dag.ID{}, open.ID).Bytes}
	}
	if _, err := a.node.Replica().Ingest(ctx, subs); err != nil {
		t.Fatal(err)
	}
	ballots := make([]ht.Tx, nClients*perClient)
	for i := range ballots {
		ballots[i] = bl.Ballot(ht.Member(nPeer+i), mr, "reject", dag.ID{}, open.ID)
	}

	type answer struct {
		Tx       dag.ID  `json:"tx"`
		Status   string  `json:"status"`
		LogIndex *uint64 `json:"log_index"`
	}
	answers := make([]struct {
		Receipt answer `json:"receipt"`
	}, len(ballots))
	errs := make(chan error, len(ballots)+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err := b.node.PullHTTP(ctx, node.NewHTTPPeer(a.srv.URL, nil))
		if err == nil && (len(res) != 1 || res[0].Accepted != nPeer || res[0].Pending != 0 || res[0].Quarantined != 0) {
			err = fmt.Errorf("the pull: %+v", res)
		}
		errs <- err
	}()
	for c := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c * perClient; i < (c+1)*perClient; i++ {
				body, err := json.Marshal(httpapi.Transaction{Envelope: ballots[i].Bytes})
				if err != nil {
					errs <- err
					return
				}
				resp, err := http.Post(b.srv.URL+httpapi.Base+"/transactions", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				msg, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("ballot %d: %s %s", i, resp.Status, msg)
				}
				if err == nil {
					err = json.Unmarshal(msg, &answers[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	log, err := b.node.Log(ctx, bl.Session.String(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(head) + nPeer + len(ballots); len(log) != want {
		t.Fatalf("B's log has %d entries, want %d", len(log), want)
	}
	for i, w := range answers {
		an := w.Receipt
		if an.Status != "accepted" || an.Tx != ballots[i].ID || an.LogIndex == nil {
			t.Fatalf("ballot %d: %+v, want accepted %s with a log index", i, an, ballots[i].ID)
		}
		if idx := *an.LogIndex; idx >= uint64(len(log)) || log[idx] != ballots[i].ID {
			t.Fatalf("ballot %d: the receipt says log index %d, B's log has it elsewhere", i, idx)
		}
	}
}
