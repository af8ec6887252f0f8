package fuzz

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// replicaTypes are the transaction types the fuzz targets pick from.
var replicaTypes = dag.TxTypes()

// replicaSeeds returns a body of every L1 type, from a small session.
func replicaSeeds() (*ht.Builder, []ht.Tx) {
	b := ht.New(ht.Options{Observers: true})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 6), ht.Members(0, 1), b.Create.ID)
	drafters := b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), roster.ID)
	branch := b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), drafters.ID)
	amend, change := b.Append(ht.Member(1), "draft", b.Genesis, []statute.Op{ht.Replace(b.Seed, "/us/t1/s1", "The period is 45 days.")}, branch.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 6), Rule: ht.Majority(house.MinRootNotice)}, amend.ID)
	ballot := b.Ballot(ht.Member(2), mr, "approve", dag.ID{}, open.ID)
	det := b.Determine(ht.Member(2), mr, []dag.ID{ballot.ID}, "pending", ballot.ID)
	upd := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 7), ht.Members(0, 1), det.ID)
	key := b.KeyRegister(ht.Member(9), upd.ID)
	gov, _ := b.Open(ht.Member(1), ht.MR{Kind: "governance", Target: "draft", TargetHead: change, Members: ht.Members(0, 6), Rule: ht.TwoThirds(),
		Set: map[string]any{"merge_rule": ht.Majority(0)}}, amend.ID)
	return b, []ht.Tx{b.Create, roster, drafters, branch, amend, open, ballot, det, upd, key, gov}
}

func typeIndex(t dag.TxType) byte {
	for i, x := range replicaTypes {
		if x == t {
			return byte(i)
		}
	}
	return 0
}

// FuzzReplicaBody: decoding any body of any transaction type never panics,
// and every refusal carries one of the spec's error codes.
func FuzzReplicaBody(f *testing.F) {
	_, txs := replicaSeeds()
	for _, tx := range txs {
		f.Add(typeIndex(tx.Env.Type), []byte(tx.Env.Body))
	}
	f.Add(byte(6), []byte(`{"kind":"merge"}`))
	// Restricted branches (docs/restricted-branches.md): a commitment
	// append and a reveal.
	c := house.Commitment(make([]byte, house.SaltSize), dag.Sum([]byte("change")))
	f.Add(typeIndex(dag.TxBranchAppend), []byte(`{"branch":"r-1","commitment":"`+c.String()+`","size":120}`))
	f.Add(typeIndex(dag.TxBranchReveal), []byte(`{"branch":"r-1","changes":[{"change":"`+dag.Sum([]byte("change")).String()+`","commitment":"`+c.String()+`","salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`))
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		tt := replicaTypes[int(typ)%len(replicaTypes)]
		_, err := house.DecodeBody(tt, body)
		if err != nil && !dag.CodeOf(err).Known() {
			t.Fatalf("%s: error without a spec code: %v", tt, err)
		}
	})
}

// FuzzReplicaAdmit: any body, signed by a roster member into a live
// session, is admitted or refused with a spec code; it never panics, and a
// refusal leaves the state unchanged.
func FuzzReplicaAdmit(f *testing.F) {
	b, txs := replicaSeeds()
	for _, tx := range txs[1:] {
		f.Add(typeIndex(tx.Env.Type), byte(1), []byte(tx.Env.Body))
	}
	var h *house.House // rebuilt only after an input is admitted
	f.Fuzz(func(t *testing.T, typ, signer byte, body []byte) {
		if h == nil {
			h = house.New(b.Session, b.Objects)
			for _, tx := range txs[:len(txs)-1] {
				if err := h.Admit(tx.ID, tx.Env); err != nil {
					t.Fatalf("seed session: %v", err)
				}
			}
		}
		before, _ := h.State().Hash()
		tt := replicaTypes[int(typ)%len(replicaTypes)]
		canon, err := dag.Canonicalize(body)
		if err != nil || len(canon) == 0 || canon[0] != '{' || tt == dag.TxSessionCreate {
			return // DecodeEnvelope would refuse it before the house sees it
		}
		env := &dag.Envelope{Type: tt, Session: b.Session, Parents: []dag.ID{txs[len(txs)-2].ID}, Body: canon, TS: "2026-09-22T00:00:00Z"}
		_, id, err := env.Seal(ht.Member(int(signer % 12)))
		if err != nil {
			return
		}
		err = h.Admit(id, env)
		if err == nil {
			h = nil
		} else {
			if !dag.CodeOf(err).Known() {
				t.Fatalf("%s: error without a spec code: %v", tt, err)
			}
			if after, _ := h.State().Hash(); after != before {
				t.Fatalf("%s: a refused entry changed the state", tt)
			}
		}
	})
}
