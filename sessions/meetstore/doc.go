// Package meetstore is the store of the Resolution Protocol memory model
// §7.8: what a meeting leaves is kept as sealed copies that are forgotten
// by destroying keys, not by deleting files.
//
// Each item (a record, a section of a note, an event log) is filed as
// copies at levels r ∈ {1, 2, 3} with r ≤ s(u), all in one retention class
// k ∈ {1d, 7d, 30d, keep}. The pair (r, k) names a chain. Each chain holds
// one 32-byte seed per UTC day, hash-chained forward:
//
//	seed(d+1) = SHA-256("witan/meetstore/seed" ‖ seed(d))
//	key(d)    = HKDF-SHA256(seed(d), salt = chain, info = "witan/meetstore/day-key")
//
// and a copy filed for an instant of day d is sealed with AES-256-GCM under
// key(d). The store keeps only the chain's oldest live seed; the day keys
// are derived when needed and never written. At the UTC midnight that
// starts day D′ each chain forgets every day ≤ D′ − keep(r, k), with
//
//	keep(r, k) = min((3, 30, 365) days for r = (3, 2, 1), days(k))
//
// by replacing its seed with the first live day's, so a copy's lifetime
// lies in (keep − 1 d, keep]: it can be forgotten early, never late.
// Because seeds only hash forward, a destroyed day's key cannot be
// recomputed from a later one.
//
// # Forgetting on disk
//
// Badger keeps an overwritten or deleted value in its memtable WAL (.mem)
// and in older tables until they are rewritten. So a seed lives under a key
// that names its day, small values stay in the LSM tree (never the value
// log), and forgetting is three durable steps: (1) write every chain's new
// seed in one synced transaction; (2) DropPrefix the old seed keys and the
// forgotten copies, which flushes the memtable (deleting its WAL) and
// rewrites every table holding them; (3) read every file of the store's
// directory and check that no destroyed seed is left in it, compacting
// again if one is. A crash at any point leaves either the old seed visible
// (Open forgets it again) or nothing to find; Open always catches up. The
// tests read the raw files after forgetting, and kill a child process at
// each step.
//
// What this does not cover: blocks of deleted files the file system has
// not reused, and copies of the disk made before forgetting (backups,
// snapshots). docs/memory-model.md says so.
//
// # The caller's duties
//
//  1. Open the store on its own directory with a Clock (the node's; tests
//     inject one). Open forgets what the clock says is due.
//  2. Call Forget at every UTC midnight (and whenever convenient): reads
//     never return a forgotten copy in any case, but only Forget destroys
//     keys.
//  3. File with Put only what the model lets you keep: copies at r ≤ s(u)
//     and a class no longer than the record's limit (ClassFor rounds down).
//  4. Never keep plaintext elsewhere on disk.
package meetstore
