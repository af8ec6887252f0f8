package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/mlog"
)

// TestRefusalLog drives D40 over a real listener: a well-formed, signed
// submission the node refuses gets a signed receipt whose refusal_index
// names a record of /refusals ({envelope hash, type, author, code,
// checkpoint_size}); the record is included in the signed refusal
// checkpoint (RFC 9162 proof checked here with the library's verifier);
// a schema rejection is not logged; the log only grows, and its
// consistency proof between two checkpoints verifies.
func TestRefusalLog(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	var c0 httpapi.RefusalCheckpointAnswer
	if err := n.c.Get(ctx, "/refusals/checkpoint", nil, &c0); err != nil {
		t.Fatal(err)
	}
	cp0, err := httpapi.DecodeCheckpoint(c0.Checkpoint)
	if err != nil || (replica.RefusalCheckpoint{Checkpoint: cp0}).Verify() != nil || cp0.Size != 0 {
		t.Fatalf("empty refusal checkpoint %s: %v", c0.Checkpoint, err)
	}
	// Members 0..9 are the roster: member 12's ballot is refused.
	var refused []ht.Tx
	var receipts []*replica.Receipt
	for i := 12; i < 14; i++ {
		tx := s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		rc, err := n.c.Submit(ctx, tx.Bytes, tx.Attach)
		if err == nil || rc == nil || rc.Status != "rejected" || rc.RefusalIndex == nil || *rc.RefusalIndex != uint64(len(refused)) {
			t.Fatalf("refused ballot %d: %+v, %v", i, rc, err)
		}
		if rc.Verify() != nil || rc.CheckpointSize != 7 || len(rc.Errors) != 1 || rc.Errors[0].Code == dag.CodeSchema {
			t.Fatalf("receipt %+v", rc)
		}
		refused, receipts = append(refused, tx), append(receipts, rc)
	}
	// A schema rejection (an envelope that does not decode) is not logged.
	rc, err := n.c.Submit(ctx, []byte(`{"v":"oth/0.10"}`), nil)
	if err == nil || (rc != nil && rc.RefusalIndex != nil) {
		t.Fatalf("schema rejection: %+v %v", rc, err)
	}
	var page httpapi.RefusalsPage
	if err := n.c.Get(ctx, "/refusals", url.Values{"limit": {"1"}}, &page); err != nil {
		t.Fatal(err)
	}
	if page.Size != 2 || len(page.Refusals) != 1 || page.Next == nil || *page.Next != 1 || page.Finality != replica.Provisional {
		t.Fatalf("first page %+v", page)
	}
	if err := n.c.Get(ctx, "/refusals", url.Values{"after": {"1"}}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Refusals) != 1 || page.Next != nil {
		t.Fatalf("second page %+v", page)
	}
	var c1 httpapi.RefusalCheckpointAnswer
	if err := n.c.Get(ctx, "/refusals/checkpoint", nil, &c1); err != nil {
		t.Fatal(err)
	}
	cp1, err := httpapi.DecodeCheckpoint(c1.Checkpoint)
	if err != nil || (replica.RefusalCheckpoint{Checkpoint: cp1}).Verify() != nil || cp1.Size != 2 {
		t.Fatalf("refusal checkpoint %s: %v", c1.Checkpoint, err)
	}
	// Signed under its own domain: not a session checkpoint.
	if cp1.Verify() == nil {
		t.Fatal("a refusal checkpoint verifies as a session checkpoint")
	}
	for i, tx := range refused {
		var a httpapi.RefusalInclusionAnswer
		if err := n.c.Get(ctx, "/proofs/inclusion", url.Values{"log": {"refusals"}, "index": {strconv.Itoa(i)}}, &a); err != nil {
			t.Fatal(err)
		}
		f := a.Refusal
		want := replica.RefusalRecord{Index: uint64(i), Session: s.space, Envelope: dag.Sum(tx.Bytes), Type: string(tx.Env.Type),
			Author: tx.Env.Author, Code: receipts[i].Errors[0].Code, CheckpointSize: 7}
		if f != want || receipts[i].Envelope != dag.Sum(tx.Bytes) {
			t.Fatalf("record %d: %+v, want %+v", i, f, want)
		}
		// The leaf is the record's canonical JSON, recomputed here.
		b, _ := json.Marshal(map[string]any{"author": want.Author, "checkpoint_size": 7, "code": want.Code, "envelope": want.Envelope,
			"index": i, "session": s.space, "type": want.Type})
		cp, _ := httpapi.DecodeCheckpoint(a.Checkpoint)
		if err := mlog.VerifyInclusion(uint64(i), a.TreeSize, mlog.LeafHash(b), ids2b(a.InclusionPath), ids2b([]dag.ID{cp.Root})[0]); err != nil || cp.Root != cp1.Root {
			t.Fatalf("record %d: inclusion %+v: %v", i, a, err)
		}
		if mlog.VerifyInclusion(uint64(1-i), a.TreeSize, mlog.LeafHash(b), ids2b(a.InclusionPath), ids2b([]dag.ID{cp.Root})[0]) == nil {
			t.Fatalf("record %d verified at index %d", i, 1-i)
		}
	}
	// One more refusal; the log of 2 is a prefix of the log of 3.
	tx := s.b.Ballot(ht.Member(15), s.mr, "approve", dag.ID{}, s.last)
	if rc, _ := n.c.Submit(ctx, tx.Bytes, tx.Attach); rc == nil || rc.RefusalIndex == nil || *rc.RefusalIndex != 2 {
		t.Fatalf("third refusal %+v", rc)
	}
	var ca httpapi.RefusalConsistencyAnswer
	if err := n.c.Get(ctx, "/proofs/consistency", url.Values{"log": {"refusals"}, "from": {"2"}}, &ca); err != nil {
		t.Fatal(err)
	}
	if ca.FirstRoot != cp1.Root || ca.SecondSize != 3 || mlog.VerifyConsistency(2, 3, ids2b(ca.ConsistencyPath), ids2b([]dag.ID{cp1.Root})[0], ids2b([]dag.ID{ca.SecondRoot})[0]) != nil {
		t.Fatalf("consistency %+v", ca)
	}
	var capa httpapi.Capability
	if err := n.c.Get(ctx, "/.well-known/oth", nil, &capa); err != nil || !capa.RefusalLog {
		t.Fatalf("capability refusal_log %v %v", capa.RefusalLog, err)
	}
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?log=refusals", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?log=refusals&index=3&size=3", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?log=other&index=0", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/refusals?limit=0", "", nil, http.StatusBadRequest, dag.CodeSchema)
}

func ids2b(ids []dag.ID) [][]byte {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		d := id.Digest()
		out[i] = d[:]
	}
	return out
}
