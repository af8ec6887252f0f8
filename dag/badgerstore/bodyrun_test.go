package badgerstore

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// A body run's encoding and the locations it gives, worked out by hand
// from bodyRun's comment and appendRecord's layout.
func TestBodyRunEncoding(t *testing.T) {
	r := bodyRun{first: 10, file: 2, off: 100, lens: []int{5, -3, 0, 300}}
	// file 2, off 100, 4 lengths; zigzag: 5 → 10, −3 → 5, 0 → 0,
	// 300 → 600 = 0xd8 0x04.
	want := []byte{2, 100, 4, 10, 5, 0, 0xd8, 0x04}
	if got := r.encode(); !bytes.Equal(got, want) {
		t.Fatalf("encode = %x, want %x", got, want)
	}
	back, err := decodeBodyRun(10, want)
	if err != nil || back.file != 2 || back.off != 100 || !slices.Equal(back.lens, r.lens) {
		t.Fatalf("decode = %+v, %v", back, err)
	}
	// Body 10 (5 bytes): header uvarint 5, uvarint 10 = 2 bytes, so the
	// body at 102 and the record 2+5+4 = 11 bytes, to 111. Body 11, dead,
	// 3 bytes: its record 1+1+3+4 = 9 bytes, to 120. Body 12 has no bytes.
	// Body 13 (300 bytes): header 2+1 = 3, the body at 123.
	wantLocs := []loc{{2, 102, 5}, {}, {}, {2, 123, 300}}
	if got := r.locs(); !slices.Equal(got, wantLocs) {
		t.Fatalf("locs = %v, want %v", got, wantLocs)
	}
	for seq, want := range map[uint64]loc{10: wantLocs[0], 13: wantLocs[3]} {
		if l, err := runLoc(10, r.encode(), seq); err != nil || l != want {
			t.Errorf("runLoc(%d) = %v, %v; want %v", seq, l, err, want)
		}
	}
	for _, seq := range []uint64{9, 11, 12, 14} {
		if _, err := runLoc(10, r.encode(), seq); err == nil {
			t.Errorf("runLoc(%d) accepted", seq)
		}
	}
	for _, bad := range [][]byte{nil, {2, 100, 5, 10}, {2, 100, 1, 10, 0}} {
		if _, err := decodeBodyRun(1, bad); err == nil {
			t.Errorf("decodeBodyRun(%x) accepted", bad)
		}
	}
	// A record: uvarint length, uvarint number, body, CRC-32C.
	rec, at := appendRecord(nil, 10, []byte("hello"))
	if at != 2 || len(rec) != 11 || !bytes.Equal(rec[:7], []byte{5, 10, 'h', 'e', 'l', 'l', 'o'}) {
		t.Fatalf("appendRecord = %x, %d", rec, at)
	}
	if b, err := checkRecord(10, loc{2, 102, 5}, rec); err != nil || string(b) != "hello" {
		t.Fatalf("checkRecord: %q, %v", b, err)
	}
	rec[3] ^= 1
	if _, err := checkRecord(10, loc{2, 102, 5}, rec); err == nil {
		t.Fatal("checkRecord accepted a flipped bit")
	}
}

// uvarintLen is the length binary.AppendUvarint gives, at every width.
func TestUvarintLen(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		if got, want := uvarintLen(x), len(binary.AppendUvarint(nil, x)); got != want {
			t.Errorf("uvarintLen(%d) = %d, want %d", x, got, want)
		}
	}
}
