// Package sync keeps replicas of witan's spaces converging over libp2p:
// head announcements on gossipsub, and /witan/sync/2, a stream protocol
// that brings a fresh replica up to date in one round trip whatever the
// height of the DAG, and a divergent one in one round trip with overhead
// proportional to the divergence. docs/sync-protocol.md specifies the
// frames, the error codes and the algorithm.
//
// # Layers
//
//   - Local is what sync needs from the replica: the store's reads and
//     Ingest, which validates everything a peer sends exactly like a local
//     submission. The node (replica/node) implements it; sync/synctest has a
//     small real one (a dag.Store plus envelope validation and quarantine).
//     A Local that is also a LogScanner serves a space's log in one pass
//     (ScanLog: pages read ahead, dag/badgerstore in one read view while the
//     requester keeps up); one that is a LogReader, in runs read in one go
//     (LogEntries); any other, one Get per entry. A Local that is a
//     Preparer is handed each batch as the requester receives it, to check
//     its signatures while the batch before is ingested.
//   - Engine runs the protocol over any stream (Pull as requester, Serve as
//     responder), keeps each peer's budget for invalid data and unresolved
//     parents, cuts off peers that spend it (time from an injected Clock),
//     and reports Progress and Events (as they happen to a caller's ctx,
//     WithProgress, or to every watcher, WatchProgress).
//   - Node is the libp2p shell: one host (TCP and QUIC, Noise and TLS as
//     libp2p provides), configured peers redialled, optional mDNS, one
//     gossipsub topic per space (Config.ContentIDs names announcements by
//     their content, so the same heads from many peers are one message),
//     and a scheduler
//     that pulls from a peer when it connects or announces a head this
//     replica lacks (an announcement carries the count and digest of all
//     the sender's heads and names its newest: Announcer, trickle.go,
//     pulls once per digest this replica does not cover and never from a
//     peer in sync, and skips announcements peers already made, as Trickle
//     does), over /witan/sync/2/deflate (batches deflated, except to a
//     requester on loopback: Config.DeflateLoopback) where the peer
//     speaks it, else /witan/sync/2. A space this replica holds
//     nothing of comes first from up to four peers that offer it at once,
//     each sending disjoint runs of its log by position over
//     /witan/sync/2/ranges (multipull.go; Config.SerialCatchUp pulls it
//     from one peer at a time instead), then the ordinary pulls fetch
//     what is still missing. Available
//     lists the spaces connected peers announce (their subscriptions).
//     What peers can make a Node hold is bounded: inbound sync streams are
//     served in slots (slots.go; a peer with none takes the oldest slot of
//     the peer holding most, a stream with none is answered busy) with one
//     deadline per frame, and gossip is rate-limited per connected peer,
//     admits subscriptions only to joined spaces and to those a peer
//     offers (a bounded number per peer), and remembers a bounded
//     set of senders (gossip.go). Only what a peer sent is charged to it:
//     a busy answer, a reset or a deadline is charged to nobody.
//     When Local is a CheckpointServer, Node also serves
//     /witan/checkpoint/1 (checkpoint.go): a peer's latest signed
//     checkpoint with a consistency proof, and cosignatures sent back;
//     PeerCheckpoint and SendCosignature are its requester side, and
//     Config.AfterPull the hook after each automatic pull where the
//     caller (replica/node) checks them. sync only carries the bytes.
//   - Config.Discovery takes a Node beyond the LAN (discovery.go,
//     reach.go): witan's own Kademlia DHT with provider records keyed by
//     a hash of each space id the caller's policy allows, AutoNAT,
//     circuit relay v2 and DCUtR hole punching; a pull from a peer reached
//     only through a relay waits for a direct connection, then runs over
//     the relay and resumes after the relay's limit cuts it. Relay is what
//     witan relay runs: a relay and DHT server. docs/networking.md.
//   - sync/simnet runs the same Engine in process with seeded faults, for
//     property tests.
//
// # The caller's duties
//
//  1. Implement Local so that Ingest refuses exactly what a local
//     submission would, and remembers refused ids (Quarantined): sync
//     trusts nothing a peer sends, but it is Ingest that judges.
//  2. Call Local's Subscribe callbacks after every applied change, so that
//     Node announces new heads.
//  3. Start a Node (NewNode) with the spaces to follow, or a Manual one and
//     call SyncWith; Close it when done.
//  4. Treat announcements as hints: a lost one only delays sync, and
//     nothing is believed until Ingest has checked it.
package sync
