package house_test

import (
	"runtime"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// A session's key registrations cost memory in proportion to their
// number. The House keeps a governance state after every governance
// entry, and a governance entry's ancestry; when each state copied every
// key registered before it, 3,000 registrations kept about 4.5 million
// keys (3000²/2), some 270 MB at about 60 bytes a map slot, and a late
// laptop's 10,000 made 3 GB in each replica that held them; with the keys
// in 256 shards copied on write, and an ancestry bitset per entry, 20,000
// held 153 MiB and 50,000 663 MiB, still the square. The key trie and the
// shared ancestry chunks keep it near 3 KiB a registration (60 MiB for
// 20,000, 2026-12-06): the bound leaves room for the entries' records and
// a collector's slack, and is under what the square made. Every key stays
// registered, and State lists them all.
func TestKeyRegistrationsMemoryLinear(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 3000
	}
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	txs := []ht.Tx{b.Create, roster}
	for len(txs) < n+2 {
		txs = append(txs, b.KeyRegister(ht.Member(1000+len(txs)), txs[len(txs)-1].ID))
	}
	h := house.New(b.Session, b.Objects)
	for _, tx := range txs {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
	}
	st := h.State()
	with := liveHeap()
	runtime.KeepAlive(h)
	h = nil
	held := int64(with) - int64(liveHeap())
	t.Logf("%d key registrations: the House holds %d MiB", n, held>>20)
	if limit := int64(n) * 5 << 10; held > limit {
		t.Errorf("%d key registrations: the House holds %d MiB, more than %d MiB (5 KiB each)", n, held>>20, limit>>20)
	}
	listed := map[dag.Key]bool{}
	for _, k := range st.Keys {
		listed[k] = true
	}
	for i := 2; i < len(txs); i++ {
		if k := ht.Member(1000 + i).Key(); !listed[k] {
			t.Fatalf("key %s not in the state", k)
		}
	}
	if len(st.Keys) != n || len(listed) != n {
		t.Fatalf("%d keys in the state (%d distinct), %d registered", len(st.Keys), len(listed), n)
	}
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
