// Package replica is witan's eventual 30k node: it opens a store, ingests
// signed envelopes from clients (Submit) and peers (Ingest), judges each
// against its causal past as the store applies it (dag.Batch.Admit), keeps
// the accepted ones, the waiting ones and the refused ones (the quarantine)
// in the store, derives each session's state with the pure
// state machine of replica/house, and labels what it serves with its own
// finality: provisional until one of this replica's signed checkpoints
// includes it, final_advisory after; never final (30k §5, D45).
//
// A space is one 30k session, named by the session id's string form
// ("sha256:…"). The store may hold other spaces (CAT7 memory spaces); the
// replica leaves them alone: replica/node keeps them beside the sessions.
// An embedder opens a node (replica/node), which opens the replica and
// owns the one write path; the replica does not import sync, nor sync the
// replica.
//
// # The caller's duties
//
//  1. Open with a NodeKey, and one of Store (yours to close), Dir (a Badger
//     directory) or InMemory. Open derives every stored session from
//     genesis, so startup costs one full derivation.
//  2. Hand client writes to Submit (or SubmitSigned, if you decoded the
//     envelope already) and keep the signed Receipt: a signed
//     rejection is evidence the node cannot deny. Hand everything a peer
//     sends to Ingest, in any order and with repeats: entries wait for
//     their parents, durably (Store.Missing names the parents sync must
//     fetch), and refused entries (and their descendants) are not stored:
//     the quarantine is a bounded record in memory (id, code, reason,
//     source, time), which a node also fills with the memory blocks it
//     refuses (RecordRefusal). What any peer can leave behind is bounded
//     (docs/security.md): pending entries per source, per space and in all,
//     charged to their sender (ChargePending for a node's memory blocks),
//     the oldest removed from the store, whose value-log GC the replica
//     runs in the background once GCAfterDropped bytes of them are garbage;
//     the quarantine's record per source and in all.
//  3. Supply with each envelope the objects it names (attachments): a
//     change, a branch or group object, the seed's node objects. A client's
//     submission whose objects are neither attached nor stored is refused
//     (unknown_parent); a peer's entry waits for them, pending in the store,
//     so sync must send objects with their entries.
//  4. Call Checkpoint now and then (the node decides when); it signs the
//     space's log. Deadlines and notice are advisory on an eventual node:
//     MR evaluations record the elapsed checkpoint time, never refuse on it.
//     Checkpoints, and the witnesses' cosignatures of them that
//     AddCosignature keeps (witness.go), are written to node-local spaces
//     (witan-local/…, never synced) and survive a restart.
//  5. Read what the core keeps with State (and its hash: equal on every
//     replica holding the same entries; StateJSON, its canonical JSON,
//     and Summary, the part that does not grow with the session, derive
//     and hash the state once per version of it), Group, Branches, Branch,
//     Quarantine, Heads, Log, LogSize and the checkpoints; what is derived
//     and labelled with finality (MRs, tallies, the law, reviews,
//     opinions, stats…) is replica/view's, read through ReadSession's
//     read-only Session. The core never imports the views.
//
// Every read and write that is about one session names it by its dag.ID,
// as replica/author's calls and replica/view's reads do (State, Branches,
// Group, ReadSession, Log, LogSize, the proofs, Checkpoint and the
// checkpoints, Draft…), and Sessions lists ids: the id an author got from
// the envelope that made a session is the one its reads take, with no
// string between. An id the replica holds no session of, the zero ID
// included (what a caller that ignored dag.ParseID's error holds), is an
// error wrapping ErrUnknownSpace where a read answers of a session's state
// (State, Summary, Group, Branch, ReadSession, Checkpoint…); a misspelt id
// never reaches the replica: dag.ParseID refuses it (dag.ErrInvalidID).
// What is about any space, sessions and memory spaces alike (mem:NAME), and
// belongs to sync's plumbing takes the space's string name: Quarantine,
// Refusals, RecordRefusal, ChargePending and MissingFrom, as node.Node's
// dag.Index and sync.Local methods do.
//
// A Replica is safe for concurrent use; ingest and reads are serialised.
// Concurrent submissions share store transactions (group commit), and
// share them with a peer's Ingest under way: each part of it takes the
// ballots clients submitted meanwhile into its own transaction, so one
// fsync makes both durable; every caller is answered only once its entry
// is (groupcommit.go, docs/replica.md). A peer's Ingest judges and plans
// each part while the commit of the part before it syncs, without the
// replica's lock; every read waits for such commits to land, so that no
// reader sees an entry the disk may not keep (pipeline.go).
package replica
