// Package badgerstore is the dag.Store kept in Badger v4: on disk by
// default, in memory with Options{InMemory: true}.
//
// Every Put commits its batch in one Badger transaction: entries, objects,
// the parent/child index, heads, the pending set and log positions, so a
// crash never leaves an entry stored but unindexed, or indexed but absent.
// The pending entries the batch makes ready are promoted in the same
// transaction, unless they are more than one transaction holds (a DAG
// ingested children first, then its root): then the rest follow in further
// transactions, each a causal prefix, each leaving a consistent store, and
// Put returns when all are applied. A crash between them is finished by
// the next Put in the space after Open, or by Resume (see Unfinished).
// Each transaction is durable before Put returns (Options.NoSync trades
// that for speed; then call Sync before acknowledging): on disk, its
// bodies are appended to a body file and made durable with fdatasync,
// then Badger commits the transaction with SyncWrites on, which returns
// once Badger's log of it is synced and makes it visible to readers only
// then. Every record of the store stays in Badger's tree (ValueThreshold
// is the largest Badger takes; a longer record fails its transaction);
// only an object that long goes to Badger's value log, synced with its
// commit. A failed fdatasync of a body file fails the Put and every write
// after it (ErrSync), and the next Open cuts the unacknowledged bytes off
// and appends to a new body file. The power-loss tests (powerloss_test.go,
// on a LazyFS disk) cut the power during ingest, memtable flushes and
// compactions, GC, and after a failed fdatasync, and find every
// acknowledged entry whole. Store format 12.
//
// PutAsync pipelines commits: it plans and writes a batch's transaction
// and starts its commit, returning a func that waits for it (Put is both).
// The next Put or PutAsync plans on top of it meanwhile, reading what the
// running commit wrote from that transaction's record, while its bodies
// are fdatasynced and Badger syncs it. Commits land one at a time, in
// order, each once the one before succeeded; nothing is acknowledged or
// visible to readers before its commit returned; a failed commit fails
// what was planned on it and every later write until the store is
// reopened (txn.go, docs/storage.md). PutStart is PutAsync with the
// batch's Result returned at once, for a caller that acts on it before the
// commit landed and shows nothing of it until then (the replica's writer).
//
// On disk, entry bodies live in witan's own body files (bodyfile.go),
// packed (ids, keys and signatures as bytes rather than text, exactly
// reversible): each Put appends its bodies with one write and makes them
// durable with fdatasync before the Badger transaction that locates them
// (one body run per transaction) commits, so that Badger, whose value log
// is written through a costly mapping, holds keys and small values only,
// and compactions never move an entry. A body is written once, whatever
// the entry's status: promoting a pending entry deletes only its few-byte
// status record, so arrival order does not change the bytes on disk (Close
// compacts level 0, dropping what promotions deleted). A body is numbered
// by the store, and the log run of the transaction that applied an entry
// names its id and body number, so that no body repeats the id. An applied
// entry's status (space, log position, body number and run) is held in
// memory, 65–76 bytes an entry, which Open rebuilds from the log runs:
// a record per entry in the tree, keyed by its random id, was most of the
// work Badger did for a write (applied.go). Open truncates what a
// crash left past the body files' committed end; GC moves the live bodies
// out of body files at least half dead and deletes them, then runs
// Badger's value-log GC. In memory, bodies stay in Badger under their
// numbers. The children index is keyed by log positions, so that its keys
// are short and arrive nearly in order. The key layout, the packing and
// the promotion are described in docs/storage.md. Open refuses a store
// written in another key layout with ErrFormat.
//
// The caller's duties:
//
//  1. Open one Store per directory; Badger locks the directory.
//  2. Check entries before putting them: the store trusts Entry.ID and
//     does not verify signatures or schemas.
//  3. Keep batches to what one Badger transaction holds (some thousands
//     of entries with the default MemTableSize); a bigger batch fails with
//     badger.ErrTxnTooBig, wrapped, and writes nothing. (What a batch
//     promotes does not count: it is split as needed.)
//  4. Pass a space's Batch.Admit on every Put of its entries (or call
//     Resume for each space Unfinished lists after Open): after a crash
//     in the middle of a long promotion, the next Put in the space judges
//     what was left with its own Admit.
//  5. Close the store; Close waits for a Put in progress.
package badgerstore
