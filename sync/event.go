package sync

import (
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
)

// Progress is how far one pull has got, for a progress bar.
type Progress struct {
	Peer  string
	Space string
	// Round is the request being answered (1 for the first).
	Round int
	// EntriesExpected is exact once the responder's header arrived;
	// EntriesDone counts entries received so far.
	EntriesExpected, EntriesDone uint64
	// BytesExpected estimates the bytes of the entries (the responder's
	// estimate, refined from the sizes seen so far); BytesDone counts the
	// bytes received.
	BytesExpected, BytesDone uint64
}

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	// EventSyncStart: a pull from Peer for Space began.
	EventSyncStart EventKind = iota + 1
	// EventProgress: a batch arrived; Progress is filled.
	EventProgress
	// EventSyncDone: a pull ended; Stats is filled, Err set if it failed.
	EventSyncDone
	// EventQuarantined: an entry from Peer was refused; ID and Code say
	// which and why.
	EventQuarantined
	// EventPeerBanned: Peer spent its budget and is cut off Until.
	EventPeerBanned
	// EventAnnounceDropped: a malformed announcement was dropped.
	EventAnnounceDropped
	// EventPeerConnected: a peer connected (Node only).
	EventPeerConnected
)

func (k EventKind) String() string {
	switch k {
	case EventSyncStart:
		return "sync_start"
	case EventProgress:
		return "progress"
	case EventSyncDone:
		return "sync_done"
	case EventQuarantined:
		return "quarantined"
	case EventPeerBanned:
		return "peer_banned"
	case EventAnnounceDropped:
		return "announce_dropped"
	case EventPeerConnected:
		return "peer_connected"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is something an embedding program may want to show or log.
type Event struct {
	Kind     EventKind
	Peer     string
	Space    string
	Progress Progress
	Stats    Stats
	ID       dag.ID
	Code     dag.Code
	Reason   string
	Until    time.Time
	Err      error
}

// Stats is what one Pull did.
type Stats struct {
	// Rounds is the number of requests sent (round trips).
	Rounds int
	// Received counts the entries received; Accepted, Pending, Duplicate
	// and Quarantined split them by outcome.
	Received, Accepted, Pending, Duplicate, Quarantined int
	// EntryBytes is the size of the entries and objects received;
	// BytesIn and BytesOut count every byte of the stream's frames.
	EntryBytes, BytesIn, BytesOut uint64
	// Missing counts parents still missing when the pull ended.
	Missing int
}
