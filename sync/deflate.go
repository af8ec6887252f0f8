package sync

// Deflated batches: a responder whose requester asked for them (the stream
// is of ProtocolDeflateID) sends each batch frame's payload compressed
// with DEFLATE (RFC 1951, at BestSpeed), as a frame of type
// FrameBatchDeflate, when that is shorter. Envelopes are JSON of hex ids,
// keys and signatures: about half their bytes go. On a shared channel
// (a classroom's Wi-Fi) a late replica's catch-up is bounded by the air
// its batches take, so that half is half its wait.
//
// The codec is github.com/klauspost/compress/flate (already in the module
// graph through Badger), a drop-in for compress/flate that writes and
// reads the same format: it deflated a 1 MiB batch of envelopes 2.2× as
// fast and inflated it 1.3× as fast (BenchmarkDeflateBatch), and a peer
// using either package reads the other's frames
// (TestDeflateInteroperatesWithStdlib).

import (
	"bytes"
	"io"
	gosync "sync"

	"github.com/klauspost/compress/flate"
)

// ProtocolDeflateID is /witan/sync/2 with deflated batches: the same
// frames, plus FrameBatchDeflate from the responder. Node asks for it
// first and falls back to ProtocolID for a peer that does not speak it,
// and serves both.
const ProtocolDeflateID = "/witan/sync/2/deflate"

// FrameBatchDeflate is a batch frame whose payload (what follows
// FrameBatch in a batch frame) is DEFLATE-compressed. Its payload
// inflates to at most MaxFrame bytes, or it is malformed.
const FrameBatchDeflate byte = 0x05

// deflater is what a stream may offer to say that its requester takes
// deflated batches: Node's streams of ProtocolDeflateID do.
type deflater interface{ DeflateBatches() bool }

// isBatch reports whether a frame of type typ carries a batch.
func isBatch(typ byte) bool { return typ == FrameBatch || typ == FrameBatchDeflate }

// flateWriters and flateReaders are pooled: a compressor holds about
// 1 MiB of tables, and a responder compresses one batch at a time, so the
// pool holds about as many as batches are being compressed at once.
var (
	flateWriters = gosync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed) // the level is valid
		return w
	}}
	flateReaders gosync.Pool
)

// deflateFrame returns the FrameBatchDeflate frame of the batch frame f
// (FrameBatch first), appended to dst, or nil when it is not shorter.
func deflateFrame(dst, f []byte) []byte {
	buf := bytes.NewBuffer(append(dst[:0], FrameBatchDeflate))
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(buf)
	if _, err := w.Write(f[1:]); err != nil {
		return nil
	}
	if err := w.Close(); err != nil {
		return nil
	}
	if buf.Len() >= len(f) {
		return nil
	}
	return buf.Bytes()
}

// inflateBatch returns the batch payload that p, a FrameBatchDeflate
// frame's payload, compresses: malformed if p is not DEFLATE or inflates
// past MaxFrame.
func inflateBatch(p []byte) ([]byte, error) {
	src := bytes.NewReader(p)
	r, _ := flateReaders.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	defer flateReaders.Put(r)
	var out bytes.Buffer
	out.Grow(min(4*len(p), MaxFrame))
	n, err := out.ReadFrom(io.LimitReader(r, MaxFrame))
	if err != nil {
		// Corrupt or cut short: the bytes came from the peer.
		return nil, malformed("deflated batch: %v", err)
	}
	if n == MaxFrame {
		var one [1]byte
		if m, _ := r.Read(one[:]); m > 0 {
			return nil, malformed("deflated batch inflates past %d bytes", MaxFrame)
		}
	}
	return out.Bytes(), nil
}

// decodeBatchFrame decodes the items of a batch frame of either type.
func decodeBatchFrame(typ byte, p []byte) ([]Item, error) {
	if typ == FrameBatchDeflate {
		var err error
		if p, err = inflateBatch(p); err != nil {
			return nil, err
		}
	}
	return DecodeBatch(p)
}
