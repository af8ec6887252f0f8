package replica_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/view"
)

// One Ingest call of more than MaxIngestPart envelopes is judged in parts,
// and the next part is verified while the one before it is admitted. A key
// that part 1 registers or rotates in signs envelopes of part 2; whether
// that key may sign is judged at admission, in causal order, so the
// outcomes are those of the same envelopes ingested one per call.

// fillParts appends chained key.register entries of non-members to txs
// until it holds n-1 entries, so that the next entry is the last of the
// call's first part; it returns the head.
func fillParts(t *testing.T, b *ht.Builder, txs *[]ht.Tx, n int) dag.ID {
	t.Helper()
	last := (*txs)[len(*txs)-1].ID
	for i := 0; len(*txs) < n-1; i++ {
		tx := b.KeyRegister(ht.Member(100+i), last)
		*txs = append(*txs, tx)
		last = tx.ID
	}
	return last
}

// ingestBoth ingests txs in one call and, into another replica, one
// envelope per call; it checks that the outcomes and heads agree and that
// txs[MaxIngestPart-1] ends the call's first part, and returns the
// one-call replica and its outcomes.
func ingestBoth(t *testing.T, b *ht.Builder, txs []ht.Tx) (*replica.Replica, []replica.Outcome) {
	t.Helper()
	ctx := context.Background()
	subs := make([]replica.Submission, len(txs))
	size := 0
	for i, tx := range txs {
		subs[i] = replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach}
		if i < replica.MaxIngestPart {
			size += len(tx.Bytes)
			for _, a := range tx.Attach {
				size += len(a)
			}
		}
	}
	if len(txs) <= replica.MaxIngestPart || size > replica.MaxIngestPartBytes {
		t.Fatalf("%d envelopes, %d bytes in the first %d: not two parts split at MaxIngestPart", len(txs), size, replica.MaxIngestPart)
	}
	open := func(i int) *replica.Replica {
		r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(t, i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	one := open(0)
	outs, err := one.Ingest(ctx, subs)
	if err != nil {
		t.Fatal(err)
	}
	each := open(1)
	for i, s := range subs {
		o, err := each.Ingest(ctx, []replica.Submission{s})
		if err != nil {
			t.Fatal(err)
		}
		if o[0] != outs[i] {
			t.Fatalf("envelope %d (%s): one call %+v, one per call %+v", i, txs[i].Env.Type, outs[i], o[0])
		}
	}
	h1, err := one.Heads(ctx, b.Session)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := each.Heads(ctx, b.Session)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h1, h2) {
		t.Fatalf("heads: one call %v, one per call %v", h1, h2)
	}
	return one, outs
}

func TestIngestPartsKeyRegister(t *testing.T) {
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	txs := []ht.Tx{b.Create, roster}
	last := fillParts(t, b, &txs, replica.MaxIngestPart)
	reg := b.KeyRegister(ht.Member(10), last) // the last of part 1
	txs = append(txs, reg)
	// Part 2: a member's entry a day later ages the key (witnessed time);
	// the registered non-member publishes; an unregistered one may not.
	b.Advance(24 * time.Hour)
	aged := b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k", nil), reg.ID)
	adv := b.Opinion(ht.Member(10), ht.OpinionBody("advisor", "spec", "30k", nil), aged.ID)
	unreg := b.Opinion(ht.Member(12), ht.OpinionBody("advisor", "spec", "30k", nil), aged.ID)
	txs = append(txs, aged, adv, unreg)
	if txs[replica.MaxIngestPart-1].ID != reg.ID {
		t.Fatal("the key.register does not end part 1")
	}
	_, outs := ingestBoth(t, b, txs)
	for i, o := range outs {
		want, code := replica.Accepted, dag.Code("")
		if txs[i].ID == unreg.ID {
			want, code = replica.Quarantined, dag.CodeKeyTooNew
		}
		if o.Status != want || o.Code != code {
			t.Fatalf("envelope %d (%s): %+v, want %s %q", i, txs[i].Env.Type, o, want, code)
		}
	}
}

func TestIngestPartsKeyRotate(t *testing.T) {
	b := ht.New(ht.Options{})
	txs := []ht.Tx{b.Create}
	add := func(tx ht.Tx) dag.ID { txs = append(txs, tx); return tx.ID }
	last := add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID))
	last = add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	last = add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	last = add(b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	app, c := b.Append(ht.Member(2), "draft", b.Genesis, nil, last)
	last = add(app)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, last)
	add(open)
	last = fillParts(t, b, &txs, replica.MaxIngestPart)
	newKey := ht.Member(33)
	rot := b.KeyRotate(newKey, ht.Member(3).Key(), dag.ID{}, ht.Member(0), last) // the last of part 1
	add(rot)
	// Part 2: member 3 approves with its new key; a rejection signed by
	// its old key after the rotation is admitted and ignored (§7 (a)), so
	// member 3 is not voided; member 0 approves.
	fresh := b.Ballot(newKey, mr, "approve", dag.ID{}, rot.ID)
	old := b.Ballot(ht.Member(3), mr, "reject", dag.ID{}, fresh.ID)
	m0 := b.Ballot(ht.Member(0), mr, "approve", dag.ID{}, old.ID)
	txs = append(txs, fresh, old, m0)
	if txs[replica.MaxIngestPart-1].ID != rot.ID {
		t.Fatal("the key.rotate does not end part 1")
	}
	r, outs := ingestBoth(t, b, txs)
	for i, o := range outs {
		if o.Status != replica.Accepted {
			t.Fatalf("envelope %d (%s): %+v", i, txs[i].Env.Type, o)
		}
	}
	tl, err := view.New(r).Tally(context.Background(), b.Session, mr)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: approvals by member 0 and member 3 (new key); the old key's
	// rejection is not counted and voids no one.
	if got := tl.Result.Tally; got.Approve != 2 || got.Reject != 0 || got.Void != 0 {
		t.Fatalf("tally A=%d R=%d V=%d, want A=2 R=0 V=0", got.Approve, got.Reject, got.Void)
	}
}
