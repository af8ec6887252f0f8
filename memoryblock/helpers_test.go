package memoryblock_test

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"golang.org/x/text/unicode/norm"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var _ tb = (*testing.T)(nil)
var _ tb = (*rapid.T)(nil)

// sample is the block most tests start from: every field present.
func sample(t tb, lineage ...dag.ID) mb.Block {
	t.Helper()
	b := mb.Block{
		Origin:     mb.MustText("agent:ada"),
		Subject:    mb.MustText("tide tables"),
		Body:       mb.MustText("high water at 06:10"),
		Evidence:   mb.MustText("gauge 3, photographed"),
		Confidence: mb.MustValue("80"),
		ObservedAt: mb.MustText("2026-09-21T06:10:00Z"),
		Lineage:    mb.MustParents(lineage...),
	}
	return b.Seal()
}

// set returns b with field f set to v (lineage from v's JSON), unsealed.
func set(t tb, b mb.Block, f mb.Field, v mb.Value) mb.Block {
	t.Helper()
	switch f {
	case mb.Origin:
		b.Origin = v
	case mb.Subject:
		b.Subject = v
	case mb.Body:
		b.Body = v
	case mb.Evidence:
		b.Evidence = v
	case mb.Confidence:
		b.Confidence = v
	case mb.ObservedAt:
		b.ObservedAt = v
	case mb.Lineage:
		b.Lineage = parentsOf(t, v)
	default:
		t.Fatalf("set: %q is not a field", f)
	}
	return b
}

// parentsOf converts a lineage Value back to Parents.
func parentsOf(t tb, v mb.Value) mb.Parents {
	t.Helper()
	switch v.Presence() {
	case mb.Omitted:
		return mb.Parents{}
	case mb.Null:
		return mb.NullParents()
	}
	var ss []string
	if err := json.Unmarshal(v.JSON(), &ss); err != nil {
		t.Fatalf("lineage value %s: %v", v, err)
	}
	ids := make([]dag.ID, len(ss))
	for i, s := range ss {
		ids[i] = dag.MustParseID(s)
	}
	return mb.MustParents(ids...)
}

func get(t tb, b mb.Block, f mb.Field) mb.Value {
	t.Helper()
	v, err := b.Get(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// referenceCanonical builds a block's hashed form a second way, from the
// format's definition in docs/memory-blocks.md, with encoding/json and
// dag.Canonicalize instead of the hand-written encoder.
func referenceCanonical(t tb, b mb.Block) []byte {
	t.Helper()
	arr := []any{mb.HashDomain}
	for _, f := range mb.Fields() {
		v := get(t, b, f)
		if v.IsOmitted() {
			arr = append(arr, []any{})
		} else {
			arr = append(arr, []any{json.RawMessage(v.JSON())})
		}
	}
	raw, err := json.Marshal(arr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dag.Canonicalize(raw)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Generators for rapid.

func genText() *rapid.Generator[mb.Value] {
	return rapid.Custom(func(t *rapid.T) mb.Value {
		s := norm.NFC.String(rapid.String().Draw(t, "s"))
		return mb.MustText(s)
	})
}

func genValue() *rapid.Generator[mb.Value] {
	return rapid.OneOf(
		rapid.Just(mb.Value{}),
		rapid.Just(mb.NullValue()),
		rapid.Just(mb.MustValue(`""`)),
		rapid.Just(mb.MustValue(`[]`)),
		rapid.Just(mb.MustValue(`{}`)),
		rapid.Just(mb.MustValue(`false`)),
		genText(),
		rapid.Custom(func(t *rapid.T) mb.Value {
			v, err := mb.Int(rapid.Int64Range(-dag.MaxSafeInteger, dag.MaxSafeInteger).Draw(t, "n"))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}),
		rapid.Custom(func(t *rapid.T) mb.Value {
			k := norm.NFC.String(rapid.StringN(0, 4, 16).Draw(t, "k"))
			n := rapid.IntRange(0, 3).Draw(t, "n")
			raw, _ := json.Marshal(map[string]any{k: []int{n, n + 1}, "note": "x"})
			return mb.MustValue(string(raw))
		}),
	)
}

func genID() *rapid.Generator[dag.ID] {
	return rapid.Custom(func(t *rapid.T) dag.ID {
		return dag.Sum([]byte{byte(rapid.IntRange(0, 255).Draw(t, "a")), byte(rapid.IntRange(0, 255).Draw(t, "b"))})
	})
}

func genParents() *rapid.Generator[mb.Parents] {
	return rapid.OneOf(
		rapid.Just(mb.Parents{}),
		rapid.Just(mb.NullParents()),
		rapid.Custom(func(t *rapid.T) mb.Parents {
			ids := rapid.SliceOfNDistinct(genID(), 0, 4, func(id dag.ID) dag.ID { return id }).Draw(t, "ids")
			return mb.MustParents(ids...)
		}),
	)
}

func genBlock() *rapid.Generator[mb.Block] {
	return rapid.Custom(func(t *rapid.T) mb.Block {
		b := mb.Block{
			Origin:     genValue().Draw(t, "origin"),
			Subject:    genValue().Draw(t, "subject"),
			Body:       genValue().Draw(t, "body"),
			Evidence:   genValue().Draw(t, "evidence"),
			Confidence: genValue().Draw(t, "confidence"),
			ObservedAt: genValue().Draw(t, "observed_at"),
			Lineage:    genParents().Draw(t, "lineage"),
		}
		if rapid.Bool().Draw(t, "sealed") {
			b = b.Seal()
		}
		return b
	})
}

func genLevel() *rapid.Generator[mb.Level] {
	return rapid.Custom(func(t *rapid.T) mb.Level {
		return mb.Level(rapid.OneOf(rapid.IntRange(-2, 120), rapid.SampledFrom([]int{0, 49, 50, 69, 70, 89, 90, 100, 1 << 30})).Draw(t, "level"))
	})
}
