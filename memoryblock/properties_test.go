package memoryblock_test

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

// allKnown is a Known that can produce every block.
type allKnown struct{}

func (allKnown) Has(dag.ID) bool { return true }

func fieldSet(t *rapid.T, accepted []mb.Field, refused []mb.Refusal) map[mb.Field]string {
	seen := map[mb.Field]string{}
	for _, f := range accepted {
		if _, dup := seen[f]; dup {
			t.Fatalf("%s twice", f)
		}
		seen[f] = "accepted"
	}
	for _, r := range refused {
		if prev, dup := seen[r.Field]; dup {
			t.Fatalf("%s both %s and refused", r.Field, prev)
		}
		seen[r.Field] = "refused"
	}
	return seen
}

// The partition is exact and disjoint: every field is in exactly one half.
func TestPropPartitionExactAndDisjoint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBlock().Draw(t, "block").Seal()
		level := genLevel().Draw(t, "level")
		p := mb.AcceptWithAuthority(b, level)
		seen := fieldSet(t, p.Accepted.Fields(), p.Refused)
		if len(seen) != 7 {
			t.Fatalf("partition covers %d fields: %v", len(seen), seen)
		}
		for _, f := range mb.Fields() {
			if _, ok := seen[f]; !ok {
				t.Fatalf("%s in neither half", f)
			}
			if p.Accepted.Has(f) != (seen[f] == "accepted") {
				t.Fatalf("View.Has(%s) disagrees with Fields()", f)
			}
		}
		// AcceptBlock on a verified block with its parents answers the same
		r := mb.AcceptBlock(b, level, allKnown{})
		if !r.Verified || r.Accepted == nil || !slices.Equal(r.AcceptedFields(), p.Accepted.Fields()) || len(r.Refused) != len(p.Refused) {
			t.Fatalf("AcceptBlock %+v differs from AcceptWithAuthority %+v", r, p)
		}
	})
}

// Monotone in authority: more authority never keeps less.
func TestPropMonotoneInAuthority(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBlock().Draw(t, "block")
		l1, l2 := genLevel().Draw(t, "l1"), genLevel().Draw(t, "l2")
		if l1 > l2 {
			l1, l2 = l2, l1
		}
		lo, hi := mb.AcceptWithAuthority(b, l1), mb.AcceptWithAuthority(b, l2)
		for _, f := range lo.Accepted.Fields() {
			if !hi.Accepted.Has(f) {
				t.Fatalf("%s kept at %d, not at %d", f, l1, l2)
			}
		}
		if len(hi.Refused) > len(lo.Refused) {
			t.Fatalf("%d refused at %d, %d at %d", len(hi.Refused), l2, len(lo.Refused), l1)
		}
	})
}

func TestPropConfidenceNeverAccepted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBlock().Draw(t, "block").Seal()
		level := genLevel().Draw(t, "level")
		if d := mb.AcceptField(mb.Confidence, level); d.Allowed || d.Keeps() || d.Code != mb.CodeFieldAlwaysRefused {
			t.Fatalf("AcceptField(confidence, %d) = %+v", level, d)
		}
		r := mb.AcceptBlock(b, level, allKnown{})
		if slices.Contains(r.AcceptedFields(), mb.Confidence) || r.Accepted.Has(mb.Confidence) {
			t.Fatalf("confidence accepted at %d", level)
		}
	})
}

// Any single-field change changes the hash, presence changes included.
func TestPropSingleFieldChangeChangesHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBlock().Draw(t, "block")
		f := rapid.SampledFrom(mb.Fields()).Draw(t, "field")
		var v mb.Value
		if f == mb.Lineage {
			v = genParents().Draw(t, "lineage").Value()
		} else {
			v = genValue().Draw(t, "value")
		}
		if v == get(t, b, f) {
			t.Skip("same value")
		}
		c := set(t, b, f, v)
		if mb.BlockHash(c) == mb.BlockHash(b) {
			t.Fatalf("changing %s from %v to %v kept the hash", f, get(t, b, f), v)
		}
		if sealed := b.Seal(); mb.VerifyBlock(set(t, sealed, f, v)) == nil {
			t.Fatal("changed block still verifies")
		}
	})
}

// Rebuilding a block with a new lineage changes its hash, so a store built
// by hashing (every lineage names blocks that already exist) never holds a
// cycle.
func TestPropNewLineageNewHashNoCycle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBlock().Draw(t, "block")
		p := genParents().Draw(t, "lineage")
		if p != b.Lineage && mb.BlockHash(set(t, b, mb.Lineage, p.Value())) == mb.BlockHash(b) {
			t.Fatal("new lineage, same hash")
		}
		m, ids := genDAG(t, 0)
		for _, id := range ids {
			if h := mb.Ancestry(id, m); h.Cycle || h.Err() != nil {
				t.Fatalf("cycle in a store built by hashing: %+v", h)
			}
		}
	})
}

// genDAG builds up to 24 blocks, each naming distinct earlier blocks (or,
// with probability, ids of blocks that were never written) as lineage.
func genDAG(t *rapid.T, phantomPct int) (mb.Map, []dag.ID) {
	n := rapid.IntRange(1, 24).Draw(t, "n")
	m := mb.Map{}
	var ids []dag.ID
	for i := 0; i < n; i++ {
		var lin []dag.ID
		seen := map[dag.ID]bool{}
		for k := rapid.IntRange(0, 3).Draw(t, "k"); k > 0; k-- {
			var p dag.ID
			if len(ids) == 0 && phantomPct == 0 {
				break // a root
			}
			if len(ids) == 0 || rapid.IntRange(0, 99).Draw(t, "phantom") < phantomPct {
				p = dag.Sum([]byte{byte(rapid.IntRange(0, 7).Draw(t, "ph"))})
			} else {
				p = ids[rapid.IntRange(0, len(ids)-1).Draw(t, "p")]
			}
			if !seen[p] {
				seen[p] = true
				lin = append(lin, p)
			}
		}
		v, _ := mb.Int(int64(i))
		ids = append(ids, m.Add(mb.Block{Body: v, Lineage: mb.MustParents(lin...)}.Seal()))
	}
	return m, ids
}

// naive is the deliberately simple reference: recursive, over sets.
func naive(m mb.Map, start dag.ID) (held, missing map[dag.ID]bool, depth map[dag.ID]int) {
	held, missing, depth = map[dag.ID]bool{}, map[dag.ID]bool{}, map[dag.ID]int{}
	var visit func(id dag.ID, d int)
	visit = func(id dag.ID, d int) {
		b, ok := m[id]
		if !ok {
			missing[id] = true
			return
		}
		if old, ok := depth[id]; ok && old <= d {
			return
		}
		held[id], depth[id] = true, d
		for _, p := range b.Parents() {
			visit(p, d+1)
		}
	}
	visit(start, 0)
	return
}

// For random stores with holes, Missing is exactly the set of absent
// ancestors, Chain exactly the held ones, Depth the deepest nearest path.
func TestPropAncestryMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, ids := genDAG(t, 15)
		for _, id := range ids {
			if rapid.IntRange(0, 4).Draw(t, "hole") == 0 {
				delete(m, id)
			}
		}
		start := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "start")]
		h := mb.Ancestry(start, m)
		held, missing, depth := naive(m, start)
		asSet := func(xs []dag.ID) map[dag.ID]bool {
			s := map[dag.ID]bool{}
			for _, x := range xs {
				if s[x] {
					t.Fatalf("%s listed twice", x)
				}
				s[x] = true
			}
			return s
		}
		if got := asSet(h.Missing); !mapsEqual(got, missing) {
			t.Fatalf("missing %v, want %v", h.Missing, missing)
		}
		if got := asSet(h.Chain); !mapsEqual(got, held) {
			t.Fatalf("chain %v, want %v", h.Chain, held)
		}
		want := 0
		for _, d := range depth {
			want = max(want, d)
		}
		if h.Depth != want || h.Cycle {
			t.Fatalf("depth %d cycle %v, want %d", h.Depth, h.Cycle, want)
		}
		if len(h.Chain) > 0 && h.Chain[0] != start {
			t.Fatal("chain does not start at the start")
		}
	})
}

func mapsEqual(a, b map[dag.ID]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// Echo detection: a block that descends from one the receiver already holds
// is reported as a descendant; one that does not, is not.
func TestPropEchoDetection(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, ids := genDAG(t, 0)
		names := rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 1, 3, func(id dag.ID) dag.ID { return id }).Draw(t, "names")
		incoming := mb.Block{Subject: mb.MustText("heard elsewhere"), Lineage: mb.MustParents(names...)}.Seal()
		src := mb.Overlay(m, incoming)
		held, _, _ := naive(m, incoming.ID()) // empty: incoming is not in m
		if len(held) != 0 {
			t.Fatal("incoming already held")
		}
		reach := map[dag.ID]bool{}
		for _, n := range names {
			h, _, _ := naive(m, n)
			for id := range h {
				reach[id] = true
			}
		}
		target := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "target")]
		d := mb.IsDescendantOf(incoming.ID(), target, src)
		if d.Descendant != reach[target] {
			t.Fatalf("descendant %v, want %v", d.Descendant, reach[target])
		}
		if d.Descendant {
			if d.Chain[0] != incoming.ID() || d.Chain[len(d.Chain)-1] != target {
				t.Fatalf("chain %v", d.Chain)
			}
			for i := 0; i+1 < len(d.Chain); i++ { // every step is a real lineage edge
				b, _ := src.Block(d.Chain[i])
				if !slices.Contains(b.Parents(), d.Chain[i+1]) {
					t.Fatalf("chain step %d is not a lineage edge", i)
				}
			}
		}
		if len(d.Missing) != 0 {
			t.Fatalf("missing %v in a complete store", d.Missing)
		}
	})
}

// Encoding round trips, in both forms, and the hand-written canonical form
// equals the reference built from the definition.
func TestPropRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBlock().Draw(t, "block")
		wire := b.Encode()
		if !dag.IsCanonical(wire) {
			t.Fatalf("Encode not canonical: %s", wire)
		}
		got, err := mb.Decode(wire)
		if err != nil || got != b {
			t.Fatalf("Decode(Encode) = %v, %v", got.Encode(), err)
		}
		c := b.Canonical()
		if ref := referenceCanonical(t, b); !bytes.Equal(c, ref) {
			t.Fatalf("Canonical\n got %s\nwant %s", c, ref)
		}
		back, err := mb.DecodeCanonical(c)
		want := b.Seal()
		if err != nil || back != want {
			t.Fatalf("DecodeCanonical(Canonical) = %v, %v", back.Encode(), err)
		}
	})
}
