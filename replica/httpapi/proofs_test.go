package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestProofs drives /proofs/inclusion and /proofs/consistency over a real
// listener: every entry's inclusion proof verifies against the signed
// checkpoint's root (which the test recomputes from /log's ids), the
// consistency proof between two checkpoints verifies against both signed
// roots, and a proof does not verify for another entry.
func TestProofs(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t) // 7 entries
	rep := n.node.Replica()
	cp1, err := rep.Checkpoint(ctx, dag.MustParseID(s.space))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		n.submit(t, s, s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last))
	}
	// Before the second checkpoint, a proof at the log's size is provisional.
	var pa httpapi.InclusionAnswer
	if err := n.c.Get(ctx, "/proofs/inclusion", url.Values{"tx": {s.last.String()}}, &pa); err != nil {
		t.Fatal(err)
	}
	if pa.Finality != replica.Provisional || string(pa.Checkpoint) != "null" || pa.TreeSize != 11 || pa.LeafIndex != 10 || !pa.Simulation {
		t.Fatalf("uncheckpointed proof %+v", pa)
	}
	if err := pa.InclusionProof.Verify(); err != nil {
		t.Fatal(err)
	}
	cp2, err := rep.Checkpoint(ctx, dag.MustParseID(s.space))
	if err != nil {
		t.Fatal(err)
	}
	var ids []dag.ID
	var page httpapi.LogPage
	if err := n.c.Get(ctx, "/log", url.Values{"limit": {"100"}}, &page); err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Entries {
		ids = append(ids, e.Tx)
	}
	if len(ids) != 11 || cp1.Size != 7 || cp2.Size != 11 || replica.MerkleRoot(ids) != cp2.Root || replica.MerkleRoot(ids[:7]) != cp1.Root {
		t.Fatalf("log %d, checkpoints %d %d", len(ids), cp1.Size, cp2.Size)
	}
	for i, id := range ids {
		var a httpapi.InclusionAnswer
		if err := n.c.Get(ctx, "/proofs/inclusion", url.Values{"tx": {id.String()}}, &a); err != nil {
			t.Fatal(err)
		}
		cp, err := httpapi.DecodeCheckpoint(a.Checkpoint)
		if err != nil || cp.Verify() != nil {
			t.Fatalf("entry %d: checkpoint %s: %v", i, a.Checkpoint, err)
		}
		if a.LeafIndex != uint64(i) || a.TreeSize != 11 || a.Root != cp2.Root || cp.Root != cp2.Root || a.Finality != replica.FinalAdvisory {
			t.Fatalf("entry %d: %+v", i, a)
		}
		if err := a.InclusionProof.Verify(); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		forged := a.InclusionProof
		forged.Tx = ids[(i+1)%len(ids)]
		if forged.Verify() == nil {
			t.Fatalf("entry %d's proof verified for entry %d", i, (i+1)%len(ids))
		}
		// Against the first checkpoint (size 7), for the entries in it.
		if i < 7 {
			if err := n.c.Get(ctx, "/proofs/inclusion", url.Values{"tx": {id.String()}, "size": {"7"}}, &a); err != nil {
				t.Fatal(err)
			}
			if a.Root != cp1.Root || a.Verify() != nil || a.Finality != replica.FinalAdvisory {
				t.Fatalf("entry %d at size 7: %+v", i, a)
			}
		}
	}
	var ca httpapi.ConsistencyAnswer
	if err := n.c.Get(ctx, "/proofs/consistency", url.Values{"from": {"7"}, "to": {"11"}}, &ca); err != nil {
		t.Fatal(err)
	}
	if ca.FirstRoot != cp1.Root || ca.SecondRoot != cp2.Root || ca.Verify() != nil || ca.Finality != replica.FinalAdvisory {
		t.Fatalf("consistency %+v", ca)
	}
	ca.FirstRoot = replica.MerkleRoot(append([]dag.ID{ids[1], ids[0]}, ids[2:7]...))
	if ca.Verify() == nil {
		t.Fatal("consistency verified for a reordered first log")
	}

	// Bad input: problem+json with the spec's codes.
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?tx=nope", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?tx="+dag.Sum([]byte("x")).String(), "", nil, http.StatusNotFound, httpapi.CodeNotFound)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?tx="+ids[10].String()+"&size=7", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/inclusion?tx="+ids[0].String()+"&size=12", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/consistency?to=3", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/consistency?from=8&to=7", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/consistency?from=-1", "", nil, http.StatusBadRequest, dag.CodeSchema)
	n.problem(t, http.MethodGet, httpapi.Base+"/proofs/consistency?from=1&to="+strconv.Itoa(99), "", nil, http.StatusBadRequest, dag.CodeSchema)
}
