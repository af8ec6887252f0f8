package sync

// Head announcements: the gossip message that tells peers a space's heads.
// It is a hint, never truth: a receiver only uses it to decide whom to
// pull from and what to name as Common.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"

	"github.com/witan-dev/witan/dag"
)

// Announcement limits.
const (
	// MaxAnnouncedHeads bounds the heads an announcement names, in either
	// version (the decoder refuses more).
	MaxAnnouncedHeads = 64
	// NamedHeads is how many heads a node names in the announcements it
	// sends: its newest (last in its log). The count and digest stand for
	// the rest.
	NamedHeads = 8
	// announceVersion is the version a node sends; announceV1 is still
	// read.
	announceVersion = 2
	announceV1      = 1
)

// TopicPrefix is followed by the space's name to name its gossip topic.
const TopicPrefix = "/witan/heads/1/"

// headsDomain separates a heads digest from every other SHA-256 the
// project computes.
const headsDomain = "witan/heads-digest/1\x00"

// HeadsDigest is the digest of a set of heads: SHA-256 over headsDomain
// and the heads' 32-byte digests in ascending order. Two replicas with the
// same heads in a space have the same digest, whatever their log orders.
func HeadsDigest(heads []dag.ID) [32]byte {
	hs := slices.Clone(heads)
	slices.SortFunc(hs, dag.ID.Compare)
	hs = slices.Compact(hs)
	h := sha256.New()
	h.Write([]byte(headsDomain))
	for _, id := range hs {
		d := id.Digest()
		h.Write(d[:])
	}
	return [32]byte(h.Sum(nil))
}

// Announcement is a replica's heads in one space.
//
// Version 2 (what a node sends) carries Count, the number of the sender's
// heads, Digest, the HeadsDigest of all of them, and Heads, at most
// MaxAnnouncedHeads of them in ascending order (a node names its
// NamedHeads newest). Version 1 carried only Heads, the first 64 in
// ascending order; it is still decoded (Version 1, Count and Digest
// zero). The zero Version encodes as version 2; a zero Count with it
// encodes Heads as all the sender's heads (Count their number, Digest
// theirs, the first MaxAnnouncedHeads named).
type Announcement struct {
	Space   string
	Heads   []dag.ID
	Version uint8
	Count   uint64
	Digest  [32]byte
}

// NewAnnouncement is the version 2 announcement of heads, all of space's
// heads, naming the ones in named (the sender's newest; at most
// MaxAnnouncedHeads are kept).
func NewAnnouncement(space string, heads, named []dag.ID) Announcement {
	return announcementOf(space, heads, named, HeadsDigest(heads))
}

// announcementOf is NewAnnouncement with heads' digest d already known
// (the node has it from Announcer.Own).
func announcementOf(space string, heads, named []dag.ID, d [32]byte) Announcement {
	n := slices.Clone(named)
	slices.SortFunc(n, dag.ID.Compare)
	n = slices.Compact(n)
	if len(n) > MaxAnnouncedHeads {
		n = n[:MaxAnnouncedHeads]
	}
	return Announcement{Space: space, Heads: n, Version: announceVersion, Count: uint64(len(heads)), Digest: d}
}

// Complete reports whether the announcement names every head of its
// sender (then Heads is the sender's whole head set).
func (a Announcement) Complete() bool {
	if a.Version == announceV1 {
		return len(a.Heads) < MaxAnnouncedHeads
	}
	return a.Count == uint64(len(a.Heads))
}

// Encode returns the announcement's bytes.
func (a Announcement) Encode() []byte {
	hs := a.Heads
	if a.Version == announceV1 {
		if len(hs) > MaxAnnouncedHeads {
			hs = hs[:MaxAnnouncedHeads]
		}
		e := enc{b: []byte{announceV1}}
		e.bytes([]byte(a.Space))
		e.ids(hs)
		return e.b
	}
	if a.Count == 0 {
		a = NewAnnouncement(a.Space, hs, hs)
		hs = a.Heads
	}
	e := enc{b: []byte{announceVersion}}
	e.bytes([]byte(a.Space))
	e.uvarint(a.Count)
	e.b = append(e.b, a.Digest[:]...)
	e.ids(hs)
	return e.b
}

// DecodeAnnouncement decodes an announcement from untrusted bytes, of
// either version. Every error is a *ProtocolError with CodeMalformed.
// Besides the bounds of the wire, a version 2 announcement must name its
// heads in ascending order, count at least the heads it names (and at
// least one), and, when it names them all, carry their digest.
func DecodeAnnouncement(b []byte) (Announcement, error) {
	d := dec{b: b}
	v := d.byte1()
	if d.err == nil && v != announceV1 && v != announceVersion {
		return Announcement{}, malformed("announcement version %d", v)
	}
	a := Announcement{Version: v, Space: string(d.bytes(dag.MaxSpaceLen))}
	if v == announceVersion {
		a.Count = d.uvarint()
		if d.err == nil && len(d.b) < 32 {
			d.fail("truncated digest")
		}
		if d.err == nil {
			a.Digest = [32]byte(d.b[:32])
			d.b = d.b[32:]
		}
	}
	a.Heads = d.ids(MaxAnnouncedHeads)
	if err := d.done(); err != nil {
		return Announcement{}, err
	}
	if a.Space == "" {
		return Announcement{}, malformed("empty space")
	}
	if v == announceVersion {
		for i := 1; i < len(a.Heads); i++ {
			if a.Heads[i-1].Compare(a.Heads[i]) >= 0 {
				return Announcement{}, malformed("announced heads not in ascending order")
			}
		}
		switch {
		case a.Count == 0:
			return Announcement{}, malformed("announcement of no heads")
		case a.Count < uint64(len(a.Heads)):
			return Announcement{}, malformed("announcement counts %d heads and names %d", a.Count, len(a.Heads))
		case a.Count == uint64(len(a.Heads)):
			if dg := HeadsDigest(a.Heads); !bytes.Equal(dg[:], a.Digest[:]) {
				return Announcement{}, malformed("announcement names all its heads and carries another digest")
			}
		}
	}
	return a, nil
}

// Newest returns at most k of heads, those last in l's log (highest
// Position); heads whose position cannot be read count as oldest.
func Newest(ctx context.Context, l dag.Index, heads []dag.ID, k int) []dag.ID {
	if len(heads) <= k {
		return slices.Clone(heads)
	}
	type pos struct {
		id dag.ID
		p  uint64
	}
	ps := make([]pos, len(heads))
	for i, h := range heads {
		p, _ := l.Position(ctx, h)
		ps[i] = pos{h, p}
	}
	slices.SortStableFunc(ps, func(a, b pos) int {
		switch {
		case a.p > b.p:
			return -1
		case a.p < b.p:
			return 1
		}
		return a.id.Compare(b.id)
	})
	out := make([]dag.ID, k)
	for i := range out {
		out[i] = ps[i].id
	}
	return out
}
