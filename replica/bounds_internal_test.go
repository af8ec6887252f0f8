package replica

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

// TestQuarantineModel: random refusals from a few sources against a
// model: never more than the bounds, the newest records of each source
// kept, the oldest forgotten first, pages in order.
func TestQuarantineModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		per := rapid.IntRange(1, 6).Draw(t, "per")
		all := rapid.IntRange(1, 12).Draw(t, "all")
		q := newQuarantine(per, all)
		var model []Refusal // live records, oldest first
		n := rapid.IntRange(0, 80).Draw(t, "n")
		for range n {
			src := fmt.Sprint(rapid.IntRange(0, 3).Draw(t, "src"))
			id := dag.Sum([]byte(fmt.Sprint(rapid.IntRange(0, 40).Draw(t, "id"))))
			q.add(Refusal{ID: id, Source: src, Space: "s", Code: dag.CodeBadSignature})
			if slices.ContainsFunc(model, func(r Refusal) bool { return r.ID == id }) {
				continue
			}
			model = append(model, Refusal{ID: id, Source: src})
			// The source's oldest past its bound, then the oldest of all.
			if c := countSrc(model, src); c > per {
				k := slices.IndexFunc(model, func(r Refusal) bool { return r.Source == src })
				model = slices.Delete(model, k, k+1)
			}
			for len(model) > all {
				model = model[1:]
			}
		}
		page, _ := q.page("", 0, 0)
		if len(page) != len(model) || q.stats().Held != len(model) {
			t.Fatalf("%d records kept, model %d", len(page), len(model))
		}
		for i := range model {
			if page[i].ID != model[i].ID {
				t.Fatalf("record %d is %s, model %s", i, page[i].ID, model[i].ID)
			}
		}
		for i := 1; i < len(page); i++ {
			if page[i].Seq <= page[i-1].Seq {
				t.Fatalf("pages out of order")
			}
		}
	})
}

func countSrc(m []Refusal, src string) int {
	c := 0
	for _, r := range m {
		if r.Source == src {
			c++
		}
	}
	return c
}

// TestWaitingModel: random pending entries, promotions and evictions
// against the bounds: never more per source, per space or in all, and
// what is evicted is the oldest of the bound it broke.
func TestWaitingModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		perSrc := rapid.IntRange(1, 5).Draw(t, "perSource")
		perSpace := rapid.IntRange(1, 7).Draw(t, "perSpace")
		all := rapid.IntRange(1, 10).Draw(t, "all")
		w := newWaiting(perSrc, perSpace, all)
		type rec struct{ id, space, src string }
		var model []rec // oldest first
		n := rapid.IntRange(0, 100).Draw(t, "n")
		for range n {
			if rapid.Bool().Draw(t, "promote") && len(model) > 0 {
				k := rapid.IntRange(0, len(model)-1).Draw(t, "which")
				w.remove(dag.Sum([]byte(model[k].id)))
				model = slices.Delete(model, k, k+1)
				continue
			}
			r := rec{id: fmt.Sprint(rapid.IntRange(0, 60).Draw(t, "id")), space: fmt.Sprint(rapid.IntRange(0, 2).Draw(t, "space")),
				src: fmt.Sprint(rapid.IntRange(0, 3).Draw(t, "src"))}
			if slices.ContainsFunc(model, func(x rec) bool { return x.id == r.id }) {
				continue
			}
			ev := w.add(&waitRec{id: dag.Sum([]byte(r.id)), space: r.space, source: r.src})
			model = append(model, r)
			var want []string
			evict := func(match func(rec) bool) {
				k := slices.IndexFunc(model, match)
				want = append(want, model[k].id)
				model = slices.Delete(model, k, k+1)
			}
			for cnt(model, func(x rec) bool { return x.src == r.src }) > perSrc {
				evict(func(x rec) bool { return x.src == r.src })
			}
			for cnt(model, func(x rec) bool { return x.space == r.space }) > perSpace {
				evict(func(x rec) bool { return x.space == r.space })
			}
			for len(model) > all {
				evict(func(rec) bool { return true })
			}
			if len(ev) != len(want) {
				t.Fatalf("evicted %d, model %d", len(ev), len(want))
			}
			for i := range ev {
				if ev[i] == nil || ev[i].id != dag.Sum([]byte(want[i])) {
					t.Fatalf("eviction %d is not the model's %s", i, want[i])
				}
			}
		}
		if st := w.stats(); st.Held != len(model) {
			t.Fatalf("held %d, model %d", st.Held, len(model))
		}
	})
}

func cnt[T any](s []T, f func(T) bool) int {
	c := 0
	for _, x := range s {
		if f(x) {
			c++
		}
	}
	return c
}
