package sync

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func TestSipHashVector(t *testing.T) {
	// The reference vector of the SipHash paper (appendix A): key
	// 00..0f, message 00..0e.
	key := make([]byte, 16)
	for i := range key {
		key[i] = byte(i)
	}
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	got := siphash(binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:]), msg)
	if got != 0xa129ca6149be45e5 {
		t.Fatalf("siphash = %#x", got)
	}
}

func TestFilter(t *testing.T) {
	const n = 5000
	f, err := NewFilter(bytes.NewReader(make([]byte, 16)), n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		f.Add(dag.Sum([]byte{byte(i), byte(i >> 8), 'i'}))
	}
	for i := 0; i < n; i++ {
		if !f.Has(dag.Sum([]byte{byte(i), byte(i >> 8), 'i'})) {
			t.Fatal("false negative")
		}
	}
	fp := 0
	for i := 0; i < 100_000; i++ {
		if f.Has(dag.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16), 'o'})) {
			fp++
		}
	}
	if rate := float64(fp) / 100_000; rate > 0.015 {
		t.Fatalf("false positive rate %.4f", rate)
	}
	// Another salt sets other bits: a ground id does not stay a false
	// positive.
	g, _ := NewFilter(bytes.NewReader(bytes.Repeat([]byte{1}, 16)), n)
	g.Add(dag.Sum([]byte("x")))
	f2, _ := NewFilter(bytes.NewReader(make([]byte, 16)), n)
	f2.Add(dag.Sum([]byte("x")))
	if bytes.Equal(g.Bits, f2.Bits) {
		t.Fatal("salt changes nothing")
	}
	var nilFilter *Filter
	if nilFilter.Has(dag.Sum(nil)) {
		t.Fatal("nil filter holds something")
	}
}

func TestFramesRoundTrip(t *testing.T) {
	f, _ := NewFilter(bytes.NewReader(make([]byte, 16)), 10)
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
		"zero hashes":    append(append([]byte{1, 's', 0, 0, 0, 1}, make([]byte, 16)...), 0, 1, 0),
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
