// Package node is a witan node as a library: one store, the replica's 30k
// sessions on it, the memory spaces of CAT7 blocks beside them, and the one
// write path through which every change enters (Submit for a client's
// envelope, Ingest for what a peer sends, PutBlock for a memory block), so
// that subscribers (sync, an embedder) hear of every change.
//
// A Node is the sync.Local a sync.Node runs on, and the thing the HTTP API
// (replica/httpapi) is a door to. It sits above both replica and sync,
// which do not import each other; httpapi and cmd/witan sit above it
// (docs/architecture.md, "The node").
//
// # The caller's duties
//
//  1. Open with exactly one of Options.Store (yours to close, after the
//     node), Dir (a Badger directory) or InMemory; a node that keeps its
//     entries needs its NodeKey, the same at every open (LoadOrCreateKey
//     keeps one in a file; Open refuses a store first opened with another
//     key). Options.Replica sets the replica's bounds. Open derives every
//     stored session from genesis.
//  2. Write only through the node (Submit, Ingest, PutBlock), never to its
//     replica or store directly, or subscribers will not hear of it. Keep
//     a Submit's signed Receipt: a signed rejection is evidence, and
//     Receipt.Err turns it into a Go error (replica.Rejection).
//  3. Read derived state through Views (MRs, tallies, the law…) and the
//     replica's own reads through Replica (state, heads, log, proofs).
//     Name spaces as sync does: a session id, or mem:NAME (CheckSpace).
//  4. Call Replica().Checkpoint now and then: finality moves only with
//     checkpoints.
//  5. Close the node once nothing uses it.
//
// Peers are held to their history (30k S10): after each pull of a session
// from a peer — over libp2p (sync, /witan/checkpoint/1) or over HTTP
// (PullHTTP) — the node checks the peer's latest checkpoint against the
// last one it verified of that peer with one code path (peercheck.go),
// reports fork_detected when the peer rewrote its history, and co-signs a
// checkpoint that holds as a witness; with sync running it also does so
// every Options.WitnessEvery for the sessions its connected peers
// announce, since a checkpoint of entries already pulled brings no pull. As a sync.CheckpointServer it serves
// its own checkpoints and keeps its peers' cosignatures (Options.Witnesses
// names the only witnesses it keeps, when set). What it verified of each
// peer, and the forks it found with both checkpoints as evidence (Forks),
// are kept in node-local spaces of its store (peerrecords.go), so a
// restart forgets neither.
//
// With Options.MeetingsDir the node also runs meetings (Meetings, package
// replica/meeting): node-local, kept in a store of their own
// (sessions/meetstore) that forgets by destroying keys after every UTC
// midnight, and never synced; only an explicit PublishOutcomes puts
// anything of a meeting in a memory space.
//
// A Node is safe for concurrent use.
package node
