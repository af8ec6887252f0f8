package badgerstore

import (
	"bytes"
	"slices"
	"testing"
)

// A log run's encoding, worked out by hand from encodeRun's comment: the
// count, the ids, the first body number, then zigzag differences.
func TestRunEncoding(t *testing.T) {
	ids := make([]byte, 0, 5*32)
	for i := 0; i < 5; i++ {
		ids = append(ids, bytes.Repeat([]byte{byte('a' + i)}, 32)...)
	}
	seqs := []uint64{5, 6, 7, 3, 100}
	got := encodeRun(ids, seqs)
	// 5 entries; 5; +1 → 2; +1 → 2; −4 → 7; +97 → 194 = 0xc2 0x01.
	want := append(append([]byte{5}, ids...), 5, 2, 2, 7, 0xc2, 0x01)
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeRun = %x\nwant        %x", got, want)
	}
	gotIDs, enc, err := decodeRun(got)
	if err != nil || !bytes.Equal(gotIDs, ids) {
		t.Fatalf("decodeRun: ids %x, err %v", gotIDs, err)
	}
	back, err := runSeqs(nil, enc, 5)
	if err != nil || !slices.Equal(back, seqs) {
		t.Fatalf("runSeqs = %v, %v; want %v", back, err, seqs)
	}
	for _, bad := range [][]byte{
		nil,
		{6},                            // six ids announced, none there
		append([]byte{1}, ids[:31]...), // one id cut short
	} {
		if _, _, err := decodeRun(bad); err == nil {
			t.Errorf("decodeRun(%x) accepted", bad)
		}
	}
	if _, err := runSeqs(nil, []byte{5, 2}, 3); err == nil {
		t.Error("runSeqs accepted two numbers for three")
	}
	if _, err := runSeqs(nil, []byte{5, 2, 2}, 2); err == nil {
		t.Error("runSeqs accepted a trailing number")
	}
}
