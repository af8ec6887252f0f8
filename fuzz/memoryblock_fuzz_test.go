package fuzz

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

func memoryBlockSeeds() [][]byte {
	root := mb.Block{
		Origin:     mb.MustText("agent:ada"),
		Subject:    mb.MustText("tide tables"),
		Body:       mb.MustValue(`{"text":"high water","tags":["tide",1,null]}`),
		Evidence:   mb.NullValue(),
		Confidence: mb.MustValue("80"),
		ObservedAt: mb.MustText("2026-09-21T06:10:00Z"),
		Lineage:    mb.MustParents(),
	}.Seal()
	child := mb.Block{Subject: mb.MustText(""), Lineage: mb.MustParents(root.ID(), dag.Sum([]byte("x")))}.Seal()
	return [][]byte{
		root.Encode(), child.Encode(), root.Canonical(), child.Canonical(),
		[]byte(`{}`), []byte(`{"lineage":null,"hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}`),
		[]byte(`{"mood":"calm"}`), []byte(`{"confidence":0.8}`), []byte(`["witan/cat7/v1",[],[],[],[],[],[],[]]`),
	}
}

// FuzzMemoryBlockDecode: any bytes either fail with BLOCK_UNKNOWN_FIELD or
// BLOCK_MALFORMED, or decode to a block whose wire and hashed forms both
// round-trip and whose acceptance is an exact partition.
func FuzzMemoryBlockDecode(f *testing.F) {
	for _, s := range memoryBlockSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := mb.Decode(in)
		if err != nil {
			if c := mb.CodeOf(err); c != mb.CodeBlockMalformed && c != mb.CodeBlockUnknownField {
				t.Fatalf("error with code %q: %v", c, err)
			}
			return
		}
		wire := b.Encode()
		if !dag.IsCanonical(wire) {
			t.Fatalf("Encode is not canonical: %s", wire)
		}
		again, err := mb.Decode(wire)
		if err != nil || again != b {
			t.Fatalf("wire form does not round-trip: %v", err)
		}
		c := b.Canonical()
		back, err := mb.DecodeCanonical(c)
		if err != nil || back != b.Seal() || dag.Sum(c) != b.ID() {
			t.Fatalf("hashed form does not round-trip: %v", err)
		}
		r := mb.AcceptBlock(b.Seal(), 50, mb.SetOf(b.Parents()...))
		if !r.Verified || r.Accepted == nil || len(r.AcceptedFields())+len(r.Refused) != 7 {
			t.Fatalf("partition of a verified block with its parents: %+v", r)
		}
	})
}

// FuzzMemoryBlockDecodeCanonical: any bytes either fail with
// BLOCK_MALFORMED or are exactly the hashed form of the block they decode
// to, which then verifies.
func FuzzMemoryBlockDecodeCanonical(f *testing.F) {
	for _, s := range memoryBlockSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := mb.DecodeCanonical(in)
		if err != nil {
			if c := mb.CodeOf(err); c != mb.CodeBlockMalformed {
				t.Fatalf("error with code %q: %v", c, err)
			}
			return
		}
		if !bytes.Equal(b.Canonical(), in) {
			t.Fatalf("decoded block re-encodes differently:\n in %s\nout %s", in, b.Canonical())
		}
		if err := mb.VerifyBlock(b); err != nil {
			t.Fatal(err)
		}
	})
}
