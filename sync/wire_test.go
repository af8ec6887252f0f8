package sync

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
	"pgregory.net/rapid"
)

func TestFramesRoundTrip(t *testing.T) {
	f, _ := heads.NewBloom(make([]byte, 16), 10, BitsPerID)
	f.Add(dag.Sum([]byte("a")))
	req := &Request{Space: "sp", Heads: []dag.ID{dag.Sum([]byte("h"))}, Common: []dag.ID{dag.Sum([]byte("c"))}, Want: []dag.ID{dag.Sum([]byte("w"))}, Filter: f}
	var buf bytes.Buffer
	for _, fr := range [][]byte{req.Encode(), Header{Entries: 3, Bytes: 900}.Encode(), EncodeBatch([]Item{{Data: []byte("x")}, {Data: []byte("y"), Objects: []dag.Object{dag.NewObject([]byte("o"))}}}), End{Heads: []dag.ID{dag.Sum([]byte("h"))}}.Encode(), EncodeError(CodeRefused, "later")} {
		if err := WriteFrame(&buf, fr); err != nil {
			t.Fatal(err)
		}
	}
	c := newConn(&buf)
	typ, p, err := c.read()
	if err != nil || typ != FrameRequest {
		t.Fatal(typ, err)
	}
	got, err := DecodeRequest(p)
	if err != nil || got.Space != "sp" || got.Heads[0] != req.Heads[0] || got.Want[0] != req.Want[0] || !got.Filter.Has(dag.Sum([]byte("a"))) {
		t.Fatalf("%+v %v", got, err)
	}
	typ, p, _ = c.read()
	if h, err := decodeHeader(p); typ != FrameHeader || err != nil || h.Entries != 3 || h.Bytes != 900 {
		t.Fatal(h, err)
	}
	typ, p, _ = c.read()
	if items, err := DecodeBatch(p); typ != FrameBatch || err != nil || len(items) != 2 || string(items[1].Objects[0].Data) != "o" {
		t.Fatal(items, err)
	}
	typ, p, _ = c.read()
	if e, err := decodeEnd(p); typ != FrameEnd || err != nil || len(e.Heads) != 1 {
		t.Fatal(e, err)
	}
	typ, p, _ = c.read()
	if err := decodeError(p); typ != FrameError || CodeOf(err) != CodeRefused {
		t.Fatal(err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	id := dag.Sum([]byte("x"))
	d := id.Digest()
	cases := map[string][]byte{
		"empty":          {},
		"empty space":    {0, 0, 0, 0, 0},
		"repeated id":    append(append([]byte{1, 's', 2}, append(d[:], d[:]...)...), 0, 0, 0),
		"too many ids":   append([]byte{1, 's'}, binary.AppendUvarint(nil, MaxIDs+1)...),
		"bad filter":     {1, 's', 0, 0, 0, 1},
		"short salt":     append([]byte{1, 's', 0, 0, 0, 1, 12, 1, 7, 1}, make([]byte, 9)...),
		"trailing bytes": {1, 's', 0, 0, 0, 0, 9},
		"long varint":    {0x81, 0x00, 's', 0, 0, 0, 0},
	}
	for name, in := range cases {
		if _, err := DecodeRequest(in); CodeOf(err) != CodeMalformed {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := DecodeBatch(binary.AppendUvarint(nil, MaxBatchItems+1)); CodeOf(err) != CodeMalformed {
		t.Error(err)
	}
	if _, err := DecodeAnnouncement([]byte{2, 1, 's', 0}); CodeOf(err) != CodeMalformed {
		t.Error(err)
	}
	if s := Code(999).String(); s != "unknown_code(999)" {
		t.Error(s)
	}
}

// TestBatchRoundTrip: any items (1 to MaxBatchItems, entries of any
// length, objects on any of them) encode to bytes that decode to the same
// items, and that is the only encoding that decodes to them.
func TestBatchRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		base := rapid.IntRange(0, 2000).Draw(t, "base")
		spread := rapid.IntRange(0, 300).Draw(t, "spread")
		items := make([]Item, n)
		for i := range items {
			items[i].Data = make([]byte, base+rapid.IntRange(0, spread).Draw(t, "len"))
			for j := range items[i].Data {
				items[i].Data[j] = byte(i + j)
			}
			for k := rapid.IntRange(0, 2).Draw(t, "objects"); k > 0; k-- {
				items[i].Objects = append(items[i].Objects, dag.NewObject([]byte(rapid.String().Draw(t, "object"))))
			}
		}
		f := EncodeBatch(items)
		got, err := DecodeBatch(f[1:])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d items, want %d", len(got), n)
		}
		for i := range items {
			if !bytes.Equal(got[i].Data, items[i].Data) || len(got[i].Objects) != len(items[i].Objects) {
				t.Fatalf("item %d differs", i)
			}
			for j, o := range items[i].Objects {
				if got[i].Objects[j].ID != o.ID || !bytes.Equal(got[i].Objects[j].Data, o.Data) {
					t.Fatalf("item %d object %d differs", i, j)
				}
			}
		}
		if !bytes.Equal(EncodeBatch(got), f) {
			t.Fatal("re-encodes differently")
		}
	})
}

// TestBatchLengthsArePacked: entries of nearly equal length cost a few
// bits of framing each, not a varint.
func TestBatchLengthsArePacked(t *testing.T) {
	items := make([]Item, 1000)
	size := 0
	for i := range items {
		items[i].Data = make([]byte, 410+i%7)
		size += len(items[i].Data)
	}
	f := EncodeBatch(items)
	// type, count (2), base (2), width, 1000 × 3 bits, no objects (1).
	if over := len(f) - size; over != 1+2+2+1+375+1 {
		t.Fatalf("%d bytes of framing for 1000 items", over)
	}
}

func TestDecodeBatchRefuses(t *testing.T) {
	ok := EncodeBatch([]Item{{Data: []byte("ab")}, {Data: []byte("abc"), Objects: []dag.Object{dag.NewObject([]byte("o"))}}})[1:]
	// ok = n=2, base=2, width=1, lens=0b10, with=1, gap=1, m=1, len 1 "o", "ab", "abc"
	if want := []byte{2, 2, 1, 2, 1, 1, 1, 1, 'o', 'a', 'b', 'a', 'b', 'c'}; !bytes.Equal(ok, want) {
		t.Fatalf("encoding %v, want %v", ok, want)
	}
	cases := map[string][]byte{
		"empty":             {},
		"no items":          {0},
		"too many items":    binary.AppendUvarint(nil, MaxBatchItems+1),
		"base not least":    {2, 1, 2, 2, 0, 'x', 'a', 'b', 'a', 'b', 'c'},
		"width too wide":    {2, 2, 2, 2, 0, 'a', 'b', 'a', 'b', 'c'},
		"width over limit":  {1, 0, 24, 0, 0, 0, 0},
		"padding bits":      {2, 2, 1, 6, 0, 'a', 'b', 'a', 'b', 'c'},
		"short data":        {2, 2, 1, 2, 0, 'a', 'b', 'a', 'b'},
		"trailing data":     {2, 2, 1, 2, 0, 'a', 'b', 'a', 'b', 'c', 'd'},
		"object item past":  {2, 2, 1, 2, 1, 2, 1, 1, 'o', 'a', 'b', 'a', 'b', 'c'},
		"zero objects":      {2, 2, 1, 2, 1, 1, 0, 'a', 'b', 'a', 'b', 'c'},
		"more object items": {2, 2, 1, 2, 3, 0, 1, 1, 'o', 'a', 'b', 'a', 'b', 'c'},
		"truncated lengths": {9, 2, 7},
	}
	for name, in := range cases {
		if _, err := DecodeBatch(in); CodeOf(err) != CodeMalformed {
			t.Errorf("%s: %v", name, err)
		}
	}
}
