package sync

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	ma "github.com/multiformats/go-multiaddr"
)

// A deflated batch frame inflates to the batch it was made from; one
// that would not be shorter is not made.
func TestDeflateFrameRoundTrip(t *testing.T) {
	var items []Item
	for i := range 200 {
		items = append(items, Item{Data: fmt.Appendf(nil, `{"parents":["%064x"],"body":{"n":%d},"sig":"%0128x"}`, i, i, i*7919)})
	}
	f := AppendBatch(nil, items)
	z := deflateFrame(nil, f)
	if z == nil || z[0] != FrameBatchDeflate {
		t.Fatalf("a batch of JSON was not deflated: %v", z == nil)
	}
	if len(z) >= len(f)/2 {
		t.Errorf("deflated %d bytes to %d: the hex runs alone should halve it", len(f), len(z))
	}
	got, err := decodeBatchFrame(z[0], z[1:])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(items) {
		t.Fatalf("%d items back, sent %d", len(got), len(items))
	}
	for i := range items {
		if !bytes.Equal(got[i].Data, items[i].Data) {
			t.Fatalf("item %d: %q, sent %q", i, got[i].Data, items[i].Data)
		}
	}
	// Random bytes do not shrink: the plain frame goes.
	noise := make([]byte, 4096)
	rand.NewChaCha8([32]byte{1}).Read(noise) //nolint:errcheck // never fails
	if z := deflateFrame(nil, AppendBatch(nil, []Item{{Data: noise}})); z != nil {
		t.Errorf("4096 random bytes were 'deflated' to %d bytes", len(z))
	}
}

// The codec is klauspost/compress/flate: a batch deflated by the
// standard library's compress/flate (a peer built otherwise) is decoded,
// and the standard library inflates what deflateFrame writes, to the same
// bytes.
func TestDeflateInteroperatesWithStdlib(t *testing.T) {
	var items []Item
	for i := range 300 {
		items = append(items, Item{Data: fmt.Appendf(nil, `{"parents":["sha256:%064x"],"body":{"n":%d},"sig":"%0128x"}`, i*104729, i, i*7919)})
	}
	f := AppendBatch(nil, items)
	var std bytes.Buffer
	w, err := flate.NewWriter(&std, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(f[1:]) //nolint:errcheck // a bytes.Buffer takes everything
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := decodeBatchFrame(FrameBatchDeflate, std.Bytes())
	if err != nil || len(got) != len(items) {
		t.Fatalf("a stdlib-deflated batch: %d items, %v", len(got), err)
	}
	for i := range items {
		if !bytes.Equal(got[i].Data, items[i].Data) {
			t.Fatalf("item %d: %q, sent %q", i, got[i].Data, items[i].Data)
		}
	}
	z := deflateFrame(nil, f)
	if z == nil {
		t.Fatal("not deflated")
	}
	plain, err := io.ReadAll(flate.NewReader(bytes.NewReader(z[1:])))
	if err != nil || !bytes.Equal(plain, f[1:]) {
		t.Fatalf("stdlib inflated deflateFrame's output to %d bytes (%v), want the %d of the batch", len(plain), err, len(f)-1)
	}
}

// What a peer sends as a deflated batch is malformed when it is not
// DEFLATE, is cut short, or inflates past MaxFrame (a small frame that
// would make the requester hold far more than a frame).
func TestInflateBatchRefuses(t *testing.T) {
	var bomb bytes.Buffer
	w, _ := flate.NewWriter(&bomb, flate.BestCompression)
	w.Write(make([]byte, MaxFrame+1)) //nolint:errcheck // a bytes.Buffer
	w.Close()
	if bomb.Len() > 64<<10 {
		t.Fatalf("the bomb is %d bytes", bomb.Len())
	}
	good := deflateFrame(nil, AppendBatch(nil, []Item{{Data: bytes.Repeat([]byte(`{"a":"b"}`), 100)}}))
	for name, p := range map[string][]byte{
		"not deflate": []byte("{\"this is\":\"json\"}"),
		"cut short":   good[1 : len(good)/2],
		"bomb":        bomb.Bytes(),
	} {
		_, err := decodeBatchFrame(FrameBatchDeflate, p)
		if CodeOf(err) != CodeMalformed {
			t.Errorf("%s: %v, want malformed", name, err)
		}
	}
	// Exactly MaxFrame bytes inflate (then fail as a batch, not as
	// deflate: the limit is the frame's).
	var full bytes.Buffer
	w.Reset(&full)
	w.Write(make([]byte, MaxFrame)) //nolint:errcheck // a bytes.Buffer
	w.Close()
	p, err := inflateBatch(full.Bytes())
	if err != nil || len(p) != MaxFrame {
		t.Errorf("a payload of MaxFrame bytes: %d bytes, %v", len(p), err)
	}
}

// Whatever a peer sends as a deflated batch, decoding it either fails with
// a malformed error or gives items that encode back to a batch decoding to
// the same items: the inflater (klauspost/compress/flate) never panics and
// never yields more than a frame.
func FuzzInflateBatch(f *testing.F) {
	var items []Item
	for i := range 50 {
		items = append(items, Item{Data: fmt.Appendf(nil, `{"body":{"n":%d},"sig":"%0128x"}`, i, i*31)})
	}
	z := deflateFrame(nil, AppendBatch(nil, items))
	f.Add(z[1:])
	f.Add(z[1 : len(z)/2])
	f.Add([]byte{0x01, 0x00, 0x00, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		got, err := decodeBatchFrame(FrameBatchDeflate, p)
		if err != nil {
			if CodeOf(err) != CodeMalformed {
				t.Fatalf("error %v is not malformed", err)
			}
			return
		}
		again, err := DecodeBatch(AppendBatch(nil, got)[1:])
		if err != nil || len(again) != len(got) {
			t.Fatalf("re-encoded batch: %d items, %v; had %d", len(again), err, len(got))
		}
		for i := range got {
			if !bytes.Equal(again[i].Data, got[i].Data) {
				t.Fatalf("item %d changed", i)
			}
		}
	})
}

// A responder deflates for a requester anywhere but on loopback, and for
// one reached through a relay even when the relay is on loopback: those
// bytes cross the relay's link and count against its limits.
func TestDeflatesForAddress(t *testing.T) {
	n := &Node{}
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"/ip4/127.0.0.1/tcp/4001", false},
		{"/ip6/::1/udp/4001/quic-v1", false},
		{"/ip4/10.1.0.7/udp/4001/quic-v1", true},
		{"/ip4/192.168.1.20/tcp/4001", true},
		{"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWM8CjbndAhQe11JE2hT8pGcj7e93mrYkUPcMg4eef3BKG/p2p-circuit", true},
	} {
		a, err := ma.NewMultiaddr(c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.deflatesFor(a); got != c.want {
			t.Errorf("%s: deflates %v, want %v", c.addr, got, c.want)
		}
	}
	n.cfg.DeflateLoopback = true
	if a, _ := ma.NewMultiaddr("/ip4/127.0.0.1/tcp/4001"); !n.deflatesFor(a) {
		t.Error("DeflateLoopback: loopback not deflated")
	}
}
