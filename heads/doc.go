// Package heads keeps the causal frontier of a space and the compact
// summaries of it that sync exchanges.
//
// A Frontier is the exact set of heads (entries no other entry lists as a
// parent) of the entries added to it, whatever their order: it never keeps
// a stale head, even when a child arrives before its parent. A store that
// applies entries only in causal order (dag.Store) keeps heads itself;
// Frontier is for the places that see entries in arrival order, such as a
// sync session tracking what a peer has announced.
//
// Digest names a head set in 32 bytes, so two replicas can tell in one
// message whether they are already in sync. Bloom is a keyed Bloom filter
// over entry ids, a salted summary of recent entries that lets a peer
// guess what the other lacks in one round trip.
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
