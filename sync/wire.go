package sync

// This file is the wire format of /witan/sync/2 (docs/sync-protocol.md):
// length-prefixed frames, their payloads, and the typed error codes.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
)

// ProtocolID is the libp2p protocol of the reconciliation stream.
const ProtocolID = "/witan/sync/2"

// Wire limits. A frame that breaks one is malformed and ends the stream.
const (
	// MaxFrame bounds one frame (type byte and payload).
	MaxFrame = 4 << 20
	// MaxIDs bounds each id list of a request (heads, common, want) and of
	// an end frame.
	MaxIDs = 4096
	// MaxFilterBytes bounds a request's encoded Bloom filter.
	MaxFilterBytes = 3 + heads.MaxSaltLen + heads.MaxBloomBits/8
	// MaxBatchItems bounds the items of one batch frame.
	MaxBatchItems = 4096
	// MaxItemObjects bounds the objects travelling with one item: one
	// entry's (dag.MaxEntryObjects).
	MaxItemObjects = dag.MaxEntryObjects
)

// Frame types: the first byte of a frame's body.
const (
	FrameRequest byte = 0x01
	FrameHeader  byte = 0x02
	FrameBatch   byte = 0x03
	FrameEnd     byte = 0x04
	FrameError   byte = 0x7f
)

// Code is an error code on the sync wire. Codes are a closed table; a code
// this version does not know is shown as such and treated as CodeInternal.
type Code uint16

// The sync error codes (docs/sync-protocol.md, "Error codes").
const (
	// CodeMalformed: a frame did not decode or broke a limit.
	CodeMalformed Code = 1
	// CodeUnexpected: a frame of a type not allowed at that point.
	CodeUnexpected Code = 2
	// CodeRefused: the peer is cut off (its budget is spent); retry later.
	CodeRefused Code = 3
	// CodeInternal: the responder failed locally (store error).
	CodeInternal Code = 4
	// CodeTooLarge: the request asks for more than the responder serves
	// in one go (a walk past MaxWalk entries).
	CodeTooLarge Code = 5
	// CodeBusy: the responder has no stream slot free for this peer now
	// (Limits); retry in a moment. Sent as the stream's first frame, before
	// any request is read. It says nothing against either side: neither
	// charges it.
	CodeBusy Code = 6
)

var codeNames = map[Code]string{
	CodeMalformed:  "malformed",
	CodeUnexpected: "unexpected",
	CodeRefused:    "refused",
	CodeInternal:   "internal",
	CodeTooLarge:   "too_large",
	CodeBusy:       "busy",
}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("unknown_code(%d)", uint16(c))
}

// ProtocolError is a sync error that crosses the wire: sent by a peer in an
// error frame, or raised locally for what a peer sent.
type ProtocolError struct {
	Code   Code
	Detail string
	// Remote is true for an error the peer sent in an error frame (a
	// complaint about us), false for one raised about what the peer sent.
	Remote bool
}

func (e *ProtocolError) Error() string {
	if e.Detail == "" {
		return "sync: " + e.Code.String()
	}
	return "sync: " + e.Code.String() + ": " + e.Detail
}

func malformed(format string, args ...any) error {
	return &ProtocolError{Code: CodeMalformed, Detail: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of the first *ProtocolError in err's chain, or 0.
func CodeOf(err error) Code {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return 0
}

// Request asks a peer for the entries of Space that the requester lacks.
type Request struct {
	Space string
	// Heads are the requester's heads in Space.
	Heads []dag.ID
	// Common are entries the requester holds and believes the responder
	// holds (the heads it last saw from that peer): everything below them
	// is known to both.
	Common []dag.ID
	// Want, when not empty, asks for these entries (and whatever of their
	// ancestry the requester lacks) instead of everything new.
	Want []dag.ID
	// Filter summarises the requester's entries that are not below Common
	// (a heads.Bloom keyed with a salt drawn for this request); nil when it
	// has none.
	Filter *heads.Bloom
}

// filterHas reports whether f may hold id; a nil filter holds nothing.
func filterHas(f *heads.Bloom, id dag.ID) bool { return f != nil && f.Has(id) }

// Header opens a response: what the responder is about to send.
type Header struct {
	// Entries is the number of entries that follow, exactly.
	Entries uint64
	// Bytes estimates their size in bytes; 0 when unknown.
	Bytes uint64
}

// End closes a response.
type End struct {
	// Heads are the responder's heads in the space.
	Heads []dag.ID
	// NotFound lists wanted ids the responder does not hold.
	NotFound []dag.ID
}

// enc builds a payload.
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) ids(ids []dag.ID) {
	e.uvarint(uint64(len(ids)))
	for _, id := range ids {
		d := id.Digest()
		e.b = append(e.b, d[:]...)
	}
}

// dec reads a payload; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = malformed(format, args...)
	}
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	if n != len(binary.AppendUvarint(nil, v)) {
		// One encoding per value: what decodes re-encodes to itself.
		d.fail("non-minimal varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) bytes(max int) []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) || n > uint64(max) {
		d.fail("byte string of %d bytes (limit %d, %d left)", n, max, len(d.b))
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) ids(max int) []dag.ID {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(max) || n*32 > uint64(len(d.b)) {
		d.fail("%d ids (limit %d)", n, max)
		return nil
	}
	out := make([]dag.ID, n)
	seen := make(map[dag.ID]struct{}, n)
	for i := range out {
		out[i] = dag.IDFromDigest([32]byte(d.b[:32]))
		d.b = d.b[32:]
		if _, dup := seen[out[i]]; dup {
			d.fail("id %s repeated", out[i])
			return nil
		}
		seen[out[i]] = struct{}{}
	}
	return out
}

func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

// Encode returns the request as a frame body (type byte first).
func (r *Request) Encode() []byte {
	e := enc{b: []byte{FrameRequest}}
	e.bytes([]byte(r.Space))
	e.ids(r.Heads)
	e.ids(r.Common)
	e.ids(r.Want)
	if r.Filter == nil {
		e.b = append(e.b, 0)
	} else {
		e.b = append(e.b, 1)
		f, _ := r.Filter.MarshalBinary() // never fails
		e.bytes(f)
	}
	return e.b
}

// DecodeRequest decodes a request frame's payload (without its type byte)
// from untrusted bytes. Every error is a *ProtocolError with CodeMalformed.
func DecodeRequest(p []byte) (*Request, error) {
	d := dec{b: p}
	r := &Request{}
	sp := d.bytes(dag.MaxSpaceLen)
	r.Space = string(sp)
	r.Heads = d.ids(MaxIDs)
	r.Common = d.ids(MaxIDs)
	r.Want = d.ids(MaxIDs)
	switch d.byte1() {
	case 0:
	case 1:
		raw := d.bytes(MaxFilterBytes)
		if d.err == nil {
			f := &heads.Bloom{}
			if err := f.UnmarshalBinary(raw); err != nil {
				d.fail("filter: %v", err)
			}
			r.Filter = f
		}
	default:
		d.fail("bad filter flag")
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	if r.Space == "" {
		return nil, malformed("empty space")
	}
	return r, nil
}

// Encode returns the header as a frame body.
func (h Header) Encode() []byte {
	e := enc{b: []byte{FrameHeader}}
	e.uvarint(h.Entries)
	e.uvarint(h.Bytes)
	return e.b
}

func decodeHeader(p []byte) (Header, error) {
	d := dec{b: p}
	h := Header{Entries: d.uvarint(), Bytes: d.uvarint()}
	return h, d.done()
}

// Encode returns the end frame body.
func (x End) Encode() []byte {
	e := enc{b: []byte{FrameEnd}}
	e.ids(x.Heads)
	e.ids(x.NotFound)
	return e.b
}

func decodeEnd(p []byte) (End, error) {
	d := dec{b: p}
	x := End{Heads: d.ids(MaxIDs), NotFound: d.ids(MaxIDs)}
	return x, d.done()
}

// EncodeError returns an error frame body.
func EncodeError(c Code, detail string) []byte {
	if len(detail) > 1024 {
		detail = detail[:1024]
	}
	e := enc{b: []byte{FrameError}}
	e.uvarint(uint64(c))
	e.bytes([]byte(detail))
	return e.b
}

func decodeError(p []byte) error {
	d := dec{b: p}
	c := d.uvarint()
	detail := d.bytes(1024)
	if err := d.done(); err != nil {
		return err
	}
	if c > 0xffff {
		c = uint64(CodeInternal)
	}
	return &ProtocolError{Code: Code(c), Detail: "peer: " + string(detail), Remote: true}
}

// EncodeBatch returns a batch frame body holding items (at least one, at
// most MaxBatchItems, each entry shorter than MaxFrame).
//
// Entry lengths are bit-packed against the shortest one: entries of one
// space differ in length by a few bytes, so a length costs a few bits
// rather than a two-byte varint. Items with objects are listed apart, by
// the gap from the previous such item.
func EncodeBatch(items []Item) []byte { return AppendBatch(nil, items) }

// AppendBatch appends the batch frame body of items to dst (see
// EncodeBatch), growing dst once to the size it needs: a responder reuses
// one buffer for all its batches.
func AppendBatch(dst []byte, items []Item) []byte {
	size := 1 + 3*binary.MaxVarintLen64 + 1 + (len(items)*64+7)/8
	for _, it := range items {
		size += len(it.Data)
		if len(it.Objects) > 0 {
			size += 2 * binary.MaxVarintLen64
			for _, o := range it.Objects {
				size += binary.MaxVarintLen64 + len(o.Data)
			}
		}
	}
	e := enc{b: append(slices.Grow(dst, size), FrameBatch)}
	e.uvarint(uint64(len(items)))
	if len(items) == 0 {
		return e.b
	}
	base := len(items[0].Data)
	hi := base
	for _, it := range items {
		base, hi = min(base, len(it.Data)), max(hi, len(it.Data))
	}
	width := bits.Len64(uint64(hi - base))
	e.uvarint(uint64(base))
	e.b = append(e.b, byte(width))
	e.b = packBits(e.b, items, base, width)
	with := 0
	for _, it := range items {
		if len(it.Objects) > 0 {
			with++
		}
	}
	e.uvarint(uint64(with))
	prev := -1
	for i, it := range items {
		if len(it.Objects) == 0 {
			continue
		}
		e.uvarint(uint64(i - prev - 1))
		prev = i
		e.uvarint(uint64(len(it.Objects)))
		for _, o := range it.Objects {
			e.bytes(o.Data)
		}
	}
	for _, it := range items {
		e.b = append(e.b, it.Data...)
	}
	return e.b
}

// packBits appends len(items[i].Data)-base for every item in width bits
// each, least significant bit first, the last byte padded with zeros.
func packBits(b []byte, items []Item, base, width int) []byte {
	var acc uint64
	n := 0
	for _, it := range items {
		acc |= uint64(len(it.Data)-base) << n
		n += width
		for n >= 8 {
			b = append(b, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	if n > 0 {
		b = append(b, byte(acc))
	}
	return b
}

// maxWidth bounds the bits of a packed length: entries are shorter than a
// frame.
const maxWidth = 23

// DecodeBatch decodes a batch frame's payload (without its type byte) from
// untrusted bytes. Object ids are recomputed from their data. Every byte
// string has one encoding: the base is the shortest length, the width the
// fewest bits that hold the longest, padding bits are zero, and an item
// listed with objects has at least one.
func DecodeBatch(p []byte) ([]Item, error) {
	d := dec{b: p}
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > MaxBatchItems) {
		return nil, malformed("batch of %d items (want 1 to %d)", n, MaxBatchItems)
	}
	base := d.uvarint()
	width := int(d.byte1())
	if d.err != nil {
		return nil, d.err
	}
	if width > maxWidth || base > uint64(len(d.b)) {
		return nil, malformed("length base %d, width %d", base, width)
	}
	packed := (int(n)*width + 7) / 8
	if packed > len(d.b) {
		return nil, malformed("truncated lengths")
	}
	lens := make([]uint64, n)
	var acc uint64
	have, j := 0, 0
	var lo, hi uint64 = 1 << 63, 0
	for i := range lens {
		for have < width {
			acc |= uint64(d.b[j]) << have
			j++
			have += 8
		}
		v := acc & (1<<width - 1)
		acc >>= width
		have -= width
		lens[i] = base + v
		lo, hi = min(lo, v), max(hi, v)
	}
	if acc != 0 {
		return nil, malformed("nonzero padding bits")
	}
	d.b = d.b[packed:]
	if lo != 0 || bits.Len64(hi) != width {
		return nil, malformed("lengths not packed against their least (base %d, width %d)", base, width)
	}
	items := make([]Item, n)
	with := d.uvarint()
	if d.err == nil && with > n {
		return nil, malformed("%d items with objects in a batch of %d", with, n)
	}
	next := uint64(0)
	for k := uint64(0); k < with && d.err == nil; k++ {
		i := next + d.uvarint()
		if d.err != nil {
			break
		}
		if i >= n {
			return nil, malformed("object item %d in a batch of %d", i, n)
		}
		next = i + 1
		m := d.uvarint()
		if d.err == nil && (m == 0 || m > MaxItemObjects) {
			return nil, malformed("item with %d objects (want 1 to %d)", m, MaxItemObjects)
		}
		objs := make([]dag.Object, 0, min(m, uint64(len(d.b))))
		for range m {
			data := d.bytes(MaxFrame)
			if d.err != nil {
				break
			}
			objs = append(objs, dag.NewObject(data))
		}
		items[i].Objects = objs
	}
	if d.err != nil {
		return nil, d.err
	}
	for i, l := range lens {
		if l > uint64(len(d.b)) {
			return nil, malformed("item of %d bytes, %d left", l, len(d.b))
		}
		items[i].Data = d.b[:l:l]
		d.b = d.b[l:]
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return items, nil
}

// WriteFrame writes one frame: the body's length as a uvarint, then the
// body (type byte first), as Encode and EncodeBatch return it.
func WriteFrame(w io.Writer, body []byte) error {
	c := &conn{w: bufio.NewWriter(w)}
	if err := c.write(body); err != nil {
		return err
	}
	return c.flush()
}

// conn frames a stream and counts its bytes.
type conn struct {
	r      *bufio.Reader
	w      *bufio.Writer
	in     atomic.Uint64 // read by Pull while a reader goroutine may still add
	out    uint64
	scope  memoryScope // nil when the stream offers none
	frames framer      // nil when the stream offers none
	// deflate: the requester takes FrameBatchDeflate (deflater).
	deflate bool
	// ranges: the requester may send FrameLogRequest (ranger).
	ranges bool
}

// framer is what a stream may offer to bound each frame in time: the
// framing calls FrameRead before reading a frame (its length included)
// and FrameWrite before writing one, and the stream gives the whole frame
// one deadline from then. A peer that trickles a byte now and then does
// not push it back (Node's streams; docs/sync-protocol.md).
type framer interface {
	FrameRead()
	FrameWrite()
}

func newConn(rw io.ReadWriter) *conn {
	c := &conn{r: bufio.NewReaderSize(rw, 64<<10), w: bufio.NewWriterSize(rw, 64<<10)}
	if s, ok := rw.(interface{ MemoryScope() memoryScope }); ok {
		c.scope = s.MemoryScope()
	}
	if f, ok := rw.(framer); ok {
		c.frames = f
	}
	if d, ok := rw.(deflater); ok {
		c.deflate = d.DeflateBatches()
	}
	if r, ok := rw.(ranger); ok {
		c.ranges = r.LogRanges()
	}
	return c
}

// write writes one frame (type byte first in f).
func (c *conn) write(f []byte) error {
	if c.frames != nil {
		c.frames.FrameWrite()
	}
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(f)))
	if _, err := c.w.Write(hdr[:n]); err != nil {
		return err
	}
	_, err := c.w.Write(f)
	c.out += uint64(n + len(f))
	return err
}

func (c *conn) flush() error { return c.w.Flush() }

// frameChunk is the most a frame's buffer starts with, unless the peer has
// already sent as many bytes on the stream: the buffer grows (doubling) as
// the frame's bytes arrive, so a peer that announces a large frame and
// sends a few bytes costs a few bytes, not the frame.
const frameChunk = 16 << 10

// firstGrowth is how many bytes a frame of size bytes gets at once, given
// the bytes of whole frames already read on the stream: the whole frame
// when the peer has sent at least that much before it (what a stalled
// frame holds is then at most what the peer sent, as with doubling), else
// frameChunk at most.
func firstGrowth(size int, sent uint64) int {
	if uint64(size) <= sent {
		return size
	}
	return min(size, frameChunk)
}

// memoryScope is what a stream may offer to account for the memory its
// frames take while they arrive: libp2p's network.StreamScope does, and
// its resource manager then bounds it per peer and per protocol. A
// reservation that fails ends the stream as malformed.
type memoryScope interface {
	ReserveMemory(size int, prio uint8) error
	ReleaseMemory(size int)
}

// read reads one frame and returns its type and payload. io.EOF means the
// peer closed the stream cleanly between frames.
//
// The payload's buffer is grown as bytes arrive, never allocated at the
// announced length up front unless the peer has already sent as many
// bytes on the stream in whole frames (firstGrowth: then it is allocated
// at its length, so that a long sync's frames are neither grown nor
// copied), and, when the stream has a memory scope, the growth is
// reserved there while the frame is incomplete (released once it is read,
// or the read fails): half-open frames are what a hostile peer could hold
// on to, and the resource manager bounds them.
//
// Only what the peer sent is malformed: an error of the stream itself (a
// reset, a deadline) and a reservation the resource manager refuses are
// returned as they are, and charged to nobody.
func (c *conn) read() (byte, []byte, error) {
	if c.frames != nil {
		c.frames.FrameRead()
	}
	n, err := c.frameLen()
	if err != nil {
		return 0, nil, err
	}
	if n == 0 || n > MaxFrame {
		return 0, nil, malformed("frame of %d bytes (limit %d)", n, MaxFrame)
	}
	reserved := 0
	defer func() {
		if reserved > 0 {
			c.scope.ReleaseMemory(reserved)
		}
	}()
	size := int(n)
	var buf []byte
	for len(buf) < size {
		if len(buf) == cap(buf) {
			grow := min(size-len(buf), max(cap(buf), frameChunk))
			if buf == nil {
				grow = firstGrowth(size, c.in.Load())
			}
			if c.scope != nil {
				if err := c.scope.ReserveMemory(grow, reservePriority); err != nil {
					return 0, nil, fmt.Errorf("sync: frame of %d bytes: no memory for it now: %w", n, err)
				}
				reserved += grow
			}
			nb := make([]byte, len(buf), len(buf)+grow)
			copy(nb, buf)
			buf = nb
		}
		m, err := c.r.Read(buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+m]
		if err != nil && len(buf) < size {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, err
		}
	}
	c.in.Add(uint64(len(binary.AppendUvarint(nil, n))) + n)
	return buf[0], buf[1:], nil
}

// frameLen reads a frame's length: io.EOF before its first byte (a clean
// end between frames), the stream's own error as it is, malformed only for
// bytes that are not a length.
func (c *conn) frameLen() (uint64, error) {
	var n uint64
	for i := 0; ; i++ {
		b, err := c.r.ReadByte()
		if err != nil {
			if i > 0 && errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if i == binary.MaxVarintLen64-1 && b > 1 {
			return 0, malformed("frame length: varint overflows 64 bits")
		}
		n |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return n, nil
		}
	}
}

// reservePriority is the priority of a frame's reservation in libp2p's
// resource manager (network.ReservationPriorityMedium): it fails once the
// scope is 60 % full, so frames never starve the transport's own buffers.
const reservePriority = 152
