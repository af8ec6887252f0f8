package heads_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
	"pgregory.net/rapid"
)

var salt = []byte("0123456789abcdef")

func TestBloomNoFalseNegatives(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SliceOfN(rapid.Byte(), heads.MinSaltLen, heads.MaxSaltLen).Draw(t, "salt")
		n := rapid.IntRange(1, 200).Draw(t, "n")
		b, err := heads.NewBloom(s, n, rapid.IntRange(1, 20).Draw(t, "bits"))
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]dag.ID, n)
		for i := range ids {
			ids[i] = dag.Sum(fmt.Appendf(nil, "%d", i))
			b.Add(ids[i])
		}
		enc, _ := b.MarshalBinary()
		var back heads.Bloom
		if err := back.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !b.Has(id) || !back.Has(id) {
				t.Fatalf("false negative for %s", id)
			}
		}
	})
}

func TestBloomFalsePositiveRate(t *testing.T) {
	const n = 2000
	b, err := heads.NewBloom(salt, n, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		b.Add(dag.Sum(fmt.Appendf(nil, "in %d", i)))
	}
	fp := 0
	for i := 0; i < 20*n; i++ {
		if b.Has(dag.Sum(fmt.Appendf(nil, "out %d", i))) {
			fp++
		}
	}
	// 10 bits per id and k = 6 give about 0.84 %; allow 2 %.
	if fp > 20*n*2/100 {
		t.Errorf("%d false positives in %d, more than 2 %%", fp, 20*n)
	}
	if fp == 0 {
		t.Errorf("no false positives at all in %d tries: the filter is not a Bloom filter of this size", 20*n)
	}
}

func TestBloomSaltChangesBits(t *testing.T) {
	b1, _ := heads.NewBloom(salt, 100, 10)
	b2, _ := heads.NewBloom([]byte("fedcba9876543210"), 100, 10)
	id := dag.Sum([]byte("x"))
	b1.Add(id)
	b2.Add(id)
	e1, _ := b1.MarshalBinary()
	e2, _ := b2.MarshalBinary()
	if bytes.Equal(e1[3+len(salt):], e2[3+len(salt):]) {
		t.Error("two salts set the same bits")
	}
}

func TestBloomLimits(t *testing.T) {
	for _, tc := range []struct {
		salt    []byte
		n, bits int
	}{
		{salt[:15], 10, 10}, {make([]byte, 65), 10, 10}, {salt, 0, 10}, {salt, 10, 0},
		{salt, 10, 65}, {salt, heads.MaxBloomBits, 2},
	} {
		if _, err := heads.NewBloom(tc.salt, tc.n, tc.bits); !errors.Is(err, heads.ErrBloom) {
			t.Errorf("NewBloom(salt %d, %d, %d): err = %v", len(tc.salt), tc.n, tc.bits, err)
		}
	}
	good, _ := heads.NewBloom(salt, 10, 10)
	enc, _ := good.MarshalBinary()
	bad := map[string][]byte{
		"empty":       nil,
		"version":     append([]byte{2}, enc[1:]...),
		"k=0":         append([]byte{1, 0}, enc[2:]...),
		"k too big":   append([]byte{1, 33}, enc[2:]...),
		"short salt":  append([]byte{1, 6, 15}, enc[3:]...),
		"no bits":     enc[:3+len(salt)],
		"short salt2": enc[:10],
	}
	for name, b := range bad {
		var f heads.Bloom
		if err := f.UnmarshalBinary(b); !errors.Is(err, heads.ErrBloom) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	var f heads.Bloom
	if err := f.UnmarshalBinary(enc); err != nil || f.Hashes() != good.Hashes() || f.Bits() != good.Bits() || !bytes.Equal(f.Salt(), salt) {
		t.Errorf("round trip: %v, k=%d bits=%d", err, f.Hashes(), f.Bits())
	}
}
