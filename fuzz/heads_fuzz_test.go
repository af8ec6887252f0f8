package fuzz

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
)

// FuzzHeadsBloom: a Bloom filter from a peer either fails with
// heads.ErrBloom or decodes to a filter that re-encodes to the same bytes,
// answers Has without panicking, and keeps every id added to it.
func FuzzHeadsBloom(f *testing.F) {
	b, _ := heads.NewBloom([]byte("0123456789abcdef"), 50, 10)
	b.Add(dag.Sum([]byte("x")))
	enc, _ := b.MarshalBinary()
	f.Add(enc)
	f.Add([]byte{1, 6, 16})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		var got heads.Bloom
		if err := got.UnmarshalBinary(in); err != nil {
			return
		}
		out, _ := got.MarshalBinary()
		if !bytes.Equal(out, in) {
			t.Fatalf("re-encoding differs")
		}
		got.Has(dag.Sum(in))
		id := dag.Sum([]byte("added"))
		got.Add(id)
		if !got.Has(id) {
			t.Fatalf("false negative after Add")
		}
	})
}
