package sync

// Head announcements: the gossip message that tells peers a space's heads.
// It is a hint, never truth: a receiver only uses it to decide whom to
// pull from and what to name as Common.

import (
	"context"

	"github.com/witan-dev/witan/dag"
)

// Announcement limits.
const (
	// MaxAnnouncedHeads bounds the heads of one announcement; a space with
	// more announces the first ones (sorted), which is still a useful hint.
	MaxAnnouncedHeads = 64
	announceVersion   = 1
)

// TopicPrefix is followed by the space's name to name its gossip topic.
const TopicPrefix = "/witan/heads/1/"

// Announcement is a replica's heads in one space.
type Announcement struct {
	Space string
	Heads []dag.ID
}

// Encode returns the announcement's bytes.
func (a Announcement) Encode() []byte {
	hs := a.Heads
	if len(hs) > MaxAnnouncedHeads {
		hs = hs[:MaxAnnouncedHeads]
	}
	e := enc{b: []byte{announceVersion}}
	e.bytes([]byte(a.Space))
	e.ids(hs)
	return e.b
}

// DecodeAnnouncement decodes an announcement from untrusted bytes. Every
// error is a *ProtocolError with CodeMalformed.
func DecodeAnnouncement(b []byte) (Announcement, error) {
	d := dec{b: b}
	if v := d.byte1(); d.err == nil && v != announceVersion {
		return Announcement{}, malformed("announcement version %d", v)
	}
	a := Announcement{Space: string(d.bytes(dag.MaxSpaceLen)), Heads: d.ids(MaxAnnouncedHeads)}
	if err := d.done(); err != nil {
		return Announcement{}, err
	}
	if a.Space == "" {
		return Announcement{}, malformed("empty space")
	}
	return a, nil
}

// Wants reports whether an announcement of heads in space should make l
// pull: some head is neither held nor quarantined, or the announcement
// is full (MaxAnnouncedHeads heads: the announcer may have more than it
// carries). A replica that holds every announced head may still lack one
// that a full announcement left out, and nothing in the announcement
// tells: without the second rule it would never pull it. Node pulls on a
// full announcement only when it is not a repeat of the sender's last.
func Wants(ctx context.Context, l Local, heads []dag.ID) (bool, error) {
	for _, h := range heads {
		st, err := l.Has(ctx, h)
		if err != nil {
			return false, err
		}
		if st != dag.Absent {
			continue
		}
		if _, q, err := l.Quarantined(ctx, h); err != nil {
			return false, err
		} else if !q {
			return true, nil
		}
	}
	return len(heads) >= MaxAnnouncedHeads, nil
}
