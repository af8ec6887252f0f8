package sync_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// BenchmarkDeflateBatch: a batch frame of 1 MiB of signed envelopes, a
// chain by one author (what a fresh sync's responder sends), deflated as
// the responder does and inflated and decoded as the requester does:
//
//	go test ./sync -run '^$' -bench DeflateBatch -benchtime 200x
func BenchmarkDeflateBatch(b *testing.B) {
	a := synctest.NewAuthor(1)
	space, root, rootID := a.Session("deflate")
	items := []ws.Item{{Data: root}}
	size, prev := len(root), rootID
	for i := 1; size < 1<<20-1024; i++ {
		data, id := a.Entry(space, []dag.ID{prev}, i)
		items = append(items, ws.Item{Data: data})
		size, prev = size+len(data)+8, id
	}
	f := ws.AppendBatch(nil, items)
	z := ws.DeflateFrame(nil, f)
	if z == nil {
		b.Fatal("not deflated")
	}
	b.Run("deflate", func(b *testing.B) {
		b.SetBytes(int64(len(f)))
		var buf []byte
		for range b.N {
			buf = ws.DeflateFrame(buf, f)
		}
		b.ReportMetric(float64(len(z))/float64(len(f)), "deflated/plain")
	})
	b.Run("inflate", func(b *testing.B) {
		b.SetBytes(int64(len(f)))
		for range b.N {
			got, err := ws.DecodeBatchFrame(z[0], z[1:])
			if err != nil || len(got) != len(items) {
				b.Fatal(err, len(got))
			}
		}
	})
}
