package sync

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
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
