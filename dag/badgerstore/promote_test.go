package badgerstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
)

var errCut = errors.New("cut off")

// promoChain returns a chain of n entries of space "p".
func promoChain(n int) []dag.Entry { return promoChainIn("p", n) }

func promoChainIn(space string, n int) []dag.Entry {
	es := make([]dag.Entry, n)
	var parents []dag.ID
	for i := range es {
		es[i] = dagtest.NewEntry(space, 9, i, parents)
		parents = []dag.ID{es[i].ID}
	}
	return es
}

// putReversed puts es in batches of 200, children first.
func putReversed(t *testing.T, s dag.Store, es []dag.Entry) {
	t.Helper()
	for end := len(es); end > 0; end -= 200 {
		b := slices.Clone(es[max(0, end-200):end])
		slices.Reverse(b)
		if _, err := s.Put(context.Background(), dag.Batch{Entries: b}); err != nil {
			t.Fatal(err)
		}
	}
}

// A promotion cut off between two of its transactions (by a crash,
// simulated here by a hook that stops the Put) leaves a consistent store:
// a causal prefix of the chain applied, the rest pending, including the
// tip, which came in the batch with the root.
// After a reopen (or not), Unfinished names the space, a Put in another
// space leaves it alone, and the next Put in the space, whatever it carries
// (here only the root again, a duplicate), or Resume, finishes the
// promotion, judging the rest with its Admit, in causal order.
func TestPromotionCutOff(t *testing.T) {
	// Some 13 transactions: 3000 entries in 2 MiB memtables, or (-short)
	// 1200 in 1 MiB.
	n, mem := 3000, int64(2<<20)
	if testing.Short() {
		n, mem = 1200, 1<<20
	}
	c := promoChain(n)
	refused := c[n-100]
	for _, tc := range []struct {
		name  string
		cut   int         // stop before promotion transaction cut+1
		next  []dag.Entry // what the Put after the reopen carries; nil: call Resume
		bad   bool        // Admit refuses entry n-100
		open  bool        // reopen before that Put (else the same Store goes on)
		round int         // promotions planned per round (0: the default, more than n)
	}{
		{"after the batch, root again", 1, c[:1], false, true, 0},
		{"after three, Resume", 3, nil, false, true, 0},
		{"with a refusal, Resume, in rounds", 1, nil, true, true, 700},
		{"same store, root again, in rounds", 2, c[:1], true, false, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.next == nil {
				t.Skip("-short: the cases that call Resume after the cut")
			}
			ctx := context.Background()
			dir := t.TempDir()
			o := badgerstore.Options{NoSync: true, MemTableSize: mem}
			s, err := badgerstore.Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			badgerstore.SetRound(s, tc.round)
			var judged []dag.ID
			applied := map[dag.ID]bool{}
			admit := func(e dag.Entry) error {
				judged = append(judged, e.ID)
				for _, p := range e.Parents {
					if !applied[p] {
						t.Errorf("Admit(%s) before its parent %s", e.ID, p)
					}
				}
				if tc.bad && e.ID == refused.ID {
					return dag.Errorf(dag.CodeNotAuthorized, "no")
				}
				applied[e.ID] = true
				return nil
			}
			putReversed(t, s, c[1:n-1])
			txns := 0
			badgerstore.SetPromoteHook(s, func(k int) error {
				txns = k
				if k == tc.cut {
					return errCut
				}
				return nil
			})
			if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{c[n-1], c[0]}, Admit: admit}); !errors.Is(err, errCut) {
				t.Fatalf("Put of the root: %v, want the cut", err)
			}
			if txns != tc.cut {
				t.Fatalf("cut before transaction %d, want %d", txns+1, tc.cut+1)
			}
			badgerstore.SetPromoteHook(s, nil)
			if err := storetest.Check(ctx, s); err != nil {
				t.Fatalf("after the cut: %v", err)
			}
			log, _ := s.Log(ctx, "p", 0, 0)
			pending, _ := s.Pending(ctx, "p")
			quar, _ := s.Quarantine(ctx, "p")
			if len(log) == 0 || len(log) >= n-100 || len(log)+len(pending)+len(quar) != n {
				t.Fatalf("after the cut: %d applied, %d pending, %d quarantined of %d", len(log), len(pending), len(quar), n)
			}
			// The tip, refused as a descendant of the refused entry, is
			// quarantined with the batch when one plan decides the whole
			// chain; the refusal and the rest wait for the promotion. In
			// rounds, the first does not reach the refusal: the tip waits.
			tipEarly := tc.bad && tc.round == 0
			if tipEarly {
				eq(t, "quarantined after the cut", rejIDs(quar), ids(c[n-1:]))
			} else {
				eq(t, "quarantined after the cut", rejIDs(quar), nil)
			}
			eq(t, "log after the cut", log, ids(c[:len(log)]))
			if heads, _ := s.Heads(ctx, "p"); len(heads) != 1 || heads[0] != log[len(log)-1] {
				t.Fatalf("heads after the cut = %v, want the last applied", heads)
			}
			if !tipEarly {
				if st, _ := s.Has(ctx, c[n-1].ID); st != dag.Pending {
					t.Fatalf("the tip, of the batch, is %v after the cut; want pending behind its parent", st)
				}
			}
			if m, _ := s.Missing(ctx, "p"); len(m) != 0 {
				t.Fatalf("Missing after the cut = %v", m)
			}
			checkPendingCount(t, s, "p")
			cutAt := len(log)
			if tc.open {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if s, err = badgerstore.Open(dir, o); err != nil {
					t.Fatal(err)
				}
				badgerstore.SetRound(s, tc.round)
				if err := storetest.Check(ctx, s); err != nil {
					t.Fatalf("after the reopen: %v", err)
				}
			}
			// A Put in another space leaves the promotion to its own
			// space: Admit may judge only its space's entries.
			other := dagtest.NewEntry("other", 9, 0, nil)
			if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{other}, Admit: func(e dag.Entry) error {
				if e.Space != "other" {
					t.Errorf("a Put in space other judged %s of space %s", e.ID, e.Space)
				}
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			if u, err := s.Unfinished(ctx); err != nil || len(u) != 1 || u[0] != "p" {
				t.Fatalf("Unfinished = %v, %v; want [p]", u, err)
			}
			judged = judged[:0]
			var r dag.Result
			if tc.next == nil {
				r, err = s.Resume(ctx, "p", admit)
			} else {
				r, err = s.Put(ctx, dag.Batch{Entries: tc.next, Admit: admit})
			}
			if err != nil {
				t.Fatal(err)
			}
			if u, err := s.Unfinished(ctx); err != nil || len(u) != 0 {
				t.Fatalf("Unfinished after the promotion = %v, %v", u, err)
			}
			last := n
			if tc.bad {
				last = n - 100
			}
			eq(t, "Applied", r.Applied, ids(c[cutAt:last]))
			eq(t, "Duplicate", r.Duplicate, ids(tc.next))
			switch {
			case tipEarly:
				eq(t, "Quarantined", rejIDs(r.Quarantined), ids(c[last:n-1]))
			case tc.bad:
				eq(t, "Quarantined", rejIDs(r.Quarantined), ids(c[last:n]))
			case len(r.Quarantined) != 0:
				t.Errorf("Quarantined = %v", r.Quarantined)
			}
			want := ids(c[cutAt:min(last+1, n)])
			eq(t, "judged", judged, want)
			log, _ = s.Log(ctx, "p", 0, 0)
			eq(t, "log", log, ids(c[:last]))
			heads, _ := s.Heads(ctx, "p")
			eq(t, "heads", heads, ids(c[last-1:last]))
			if p, _ := s.Pending(ctx, "p"); len(p) != 0 {
				t.Errorf("%d still pending", len(p))
			}
			checkPendingCount(t, s, "p")
			if err := storetest.Check(ctx, s); err != nil {
				t.Fatal(err)
			}
			// Done: the next Put does not look for it again.
			judged = judged[:0]
			extra := dagtest.NewEntry("p", 9, n+1, ids(c[last-1:last]))
			if r, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{extra}, Admit: admit}); err != nil || len(r.Applied) != 1 || len(judged) != 1 {
				t.Fatalf("Put after the promotion: %+v, %v; judged %d", r, err, len(judged))
			}
		})
	}
}

// When Badger refuses a transaction that the estimate let through, Put
// writes the batch with only the promotions it needs, then the rest in
// transactions it halves until Badger takes them.
func TestPromotionEstimateShort(t *testing.T) {
	ctx := context.Background()
	s, err := badgerstore.Open("", badgerstore.Options{InMemory: true, MemTableSize: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 2000
	c := promoChain(n)
	putReversed(t, s, c[1:])
	badgerstore.SetLimits(s, 1<<40, 1<<40, 1<<40, 1<<40)
	txns := 1
	badgerstore.SetPromoteHook(s, func(k int) error { txns = k + 1; return nil })
	r, err := s.Put(ctx, dag.Batch{Entries: c[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if txns < 3 {
		t.Errorf("%d transactions; want the batch's and at least two halves", txns)
	}
	eq(t, "Applied", r.Applied, ids(c))
	checkPendingCount(t, s, "p")
	if heads, _ := s.Heads(ctx, "p"); len(heads) != 1 || heads[0] != c[n-1].ID {
		t.Errorf("Heads = %v", heads)
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// checkPendingCount checks the store's count of pending entries in memory
// against the pending index.
func checkPendingCount(t *testing.T, s *badgerstore.Store, space string) {
	t.Helper()
	p, err := s.Pending(context.Background(), space)
	if err != nil {
		t.Fatal(err)
	}
	if n := badgerstore.PendingCount(s, space); n != len(p) {
		t.Fatalf("the store counts %d pending entries of %q, the index holds %d", n, space, len(p))
	}
}

func ids(es []dag.Entry) []dag.ID {
	out := make([]dag.ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func rejIDs(rs []dag.Rejection) []dag.ID {
	out := make([]dag.ID, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func eq(t *testing.T, what string, got, want []dag.ID) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %d ids, want %d (first difference at %d)", what, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []dag.ID) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A Put that resumes a cut-off promotion is itself long (several
// transactions) and is cut off in turn, and so is a Resume: the marker
// stays until the end, so a Resume after a reopen still finishes the
// promotion.
func TestPromotionCutTwice(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	o := badgerstore.Options{NoSync: true, MemTableSize: 1 << 20}
	s, err := badgerstore.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1500
	c := promoChain(n)
	putReversed(t, s, c[1:])
	for round, put := range [][]dag.Entry{c[:1], nil} {
		badgerstore.SetPromoteHook(s, func(k int) error {
			if k == 2 {
				return errCut
			}
			return nil
		})
		var err error
		if put != nil {
			_, err = s.Put(ctx, dag.Batch{Entries: put})
		} else {
			_, err = s.Resume(ctx, "p", nil)
		}
		if !errors.Is(err, errCut) {
			t.Fatalf("Put %d: %v, want the cut", round, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s, err = badgerstore.Open(dir, o); err != nil {
			t.Fatal(err)
		}
		if err := storetest.Check(ctx, s); err != nil {
			t.Fatalf("after cut %d: %v", round, err)
		}
		checkPendingCount(t, s, "p")
	}
	defer s.Close()
	log, _ := s.Log(ctx, "p", 0, 0)
	if len(log) == 0 || len(log) >= n {
		t.Fatalf("%d applied after two cuts, want some but not all", len(log))
	}
	cutAt := len(log)
	if r, err := s.Put(ctx, dag.Batch{}); err != nil || len(r.Applied) != 0 {
		t.Fatalf("an empty Put, which names no space: %+v, %v", r, err)
	}
	r, err := s.Resume(ctx, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Applied", r.Applied, ids(c[cutAt:]))
	log, _ = s.Log(ctx, "p", 0, 0)
	eq(t, "log", log, ids(c))
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// Promotions cut off in two spaces: finishing one keeps the marker for the
// other, across reopens, until it is finished too.
func TestPromotionCutTwoSpaces(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	o := badgerstore.Options{NoSync: true, MemTableSize: 1 << 20}
	s, err := badgerstore.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	chains := map[string][]dag.Entry{"p": promoChainIn("p", n), "q": promoChainIn("q", n)}
	for _, sp := range []string{"p", "q"} {
		putReversed(t, s, chains[sp][1:])
		badgerstore.SetPromoteHook(s, func(int) error { return errCut })
		if _, err := s.Put(ctx, dag.Batch{Entries: chains[sp][:1]}); !errors.Is(err, errCut) {
			t.Fatalf("Put of the root of %s: %v, want the cut", sp, err)
		}
		badgerstore.SetPromoteHook(s, nil)
	}
	reopen := func(want ...string) {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s, err = badgerstore.Open(dir, o); err != nil {
			t.Fatal(err)
		}
		u, err := s.Unfinished(ctx)
		if err != nil || !slices.Equal(u, want) {
			t.Fatalf("Unfinished = %v, %v; want %v", u, err, want)
		}
		if err := storetest.Check(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	reopen("p", "q")
	if _, err := s.Put(ctx, dag.Batch{Entries: chains["p"][:1]}); err != nil {
		t.Fatal(err)
	}
	reopen("q")
	if log, _ := s.Log(ctx, "p", 0, 0); len(log) != n {
		t.Fatalf("%d of p applied", len(log))
	}
	if _, err := s.Resume(ctx, "q", nil); err != nil {
		t.Fatal(err)
	}
	reopen()
	defer s.Close()
	if log, _ := s.Log(ctx, "q", 0, 0); len(log) != n {
		t.Fatalf("%d of q applied", len(log))
	}
}
