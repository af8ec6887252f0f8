// Package badgerstore is the dag.Store kept in Badger v4: on disk by
// default, in memory with Options{InMemory: true}.
//
// Every Put commits in one Badger transaction: entries, objects, the
// parent/child index, heads, the pending set and log positions, so a crash
// never leaves an entry stored but unindexed, or indexed but absent. The
// transaction is synced to disk before Put returns (Options.NoSync trades
// that for speed; then call Sync before acknowledging). The key layout is
// described in docs/storage.md.
//
// The caller's duties:
//
//  1. Open one Store per directory; Badger locks the directory.
//  2. Check entries before putting them: the store trusts Entry.ID and
//     does not verify signatures or schemas.
//  3. Keep batches to what one Badger transaction holds (some thousands
//     of entries with the default MemTableSize); a bigger batch fails with
//     badger.ErrTxnTooBig, wrapped, and writes nothing.
//  4. Close the store; Close waits for a Put in progress.
package badgerstore
