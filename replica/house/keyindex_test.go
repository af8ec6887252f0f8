package house_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// A session's key registrations cost memory in proportion to their
// number. The House keeps a governance state after every governance
// entry; when each state copied every key registered before it, 3,000
// registrations kept about 4.5 million keys (3000²/2), some 270 MB at
// about 60 bytes a map slot, and a late laptop's 10,000 made 3 GB in each
// replica that held them. Shared key shards keep it near 3 KiB a
// registration: under 48 MB with room for the entries' own records.
// Every key stays registered, and State lists them all.
func TestKeyRegistrationsMemoryLinear(t *testing.T) {
	const n = 3000
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	txs := []ht.Tx{b.Create, roster}
	for len(txs) < n+2 {
		txs = append(txs, b.KeyRegister(ht.Member(1000+len(txs)), txs[len(txs)-1].ID))
	}
	before := liveHeap()
	h := house.New(b.Session, b.Objects)
	for _, tx := range txs {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
	}
	grew := int64(liveHeap()) - int64(before)
	t.Logf("%d key registrations: live heap +%d MiB", n, grew>>20)
	if grew > 48<<20 {
		t.Errorf("%d key registrations hold %d MiB, more than 48 MiB", n, grew>>20)
	}
	st := h.State()
	var want []dag.Key
	for i := 2; i < len(txs); i++ {
		want = append(want, ht.Member(1000+i).Key())
	}
	for _, k := range want {
		if !slices.Contains(st.Keys, k) {
			t.Fatalf("key %s not in the state", k)
		}
	}
	if len(st.Keys) != len(want) {
		t.Fatalf("%d keys in the state, %d registered", len(st.Keys), len(want))
	}
	runtime.KeepAlive(h)
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
