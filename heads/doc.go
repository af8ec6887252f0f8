// Package heads holds the compact summary of a space's entries that sync
// exchanges: Bloom, a keyed Bloom filter over entry ids, a salted summary
// of recent entries that lets a peer guess what the other lacks in one
// round trip. (A store keeps a space's heads itself, dag.Index.Heads; sync
// hashes its announcements itself.)
//
// The caller's duties:
//
//  1. Draw a fresh random salt (crypto/rand, MinSaltLen bytes or more) for
//     every sync session's Bloom filter, and never reuse one across peers.
//  2. Treat a Bloom filter as a hint: it has false positives, so entries a
//     peer still lacks must remain fetchable by id.
//  3. Decode filters from peers with UnmarshalBinary, which checks sizes.
//
// The package is pure: no I/O, no goroutines, no clock.
package heads
