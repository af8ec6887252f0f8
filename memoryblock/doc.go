// Package memoryblock implements CAT7 memory blocks: the records offline
// agents keep their memory in and sync when they meet. It is pure: no I/O,
// no clock, no goroutines, no floating point in any decision.
//
// A Block has seven fields, in an order that is part of its hash: origin,
// subject, body, evidence, confidence, observed_at, lineage (Fields). Each
// field is omitted, null or present (Presence), and the three never stand
// in for one another. Three fields are inherited (InheritedFields: where a
// block came from and when it was seen) and a receiver never chooses them;
// the other four are receiver-choosable (ReceiverChoosableFields), each with
// its own rule. The two lists partition the seven.
//
// The block hash (BlockHash) is the SHA-256 of a canonical serialization of
// the seven fields in order (Block.Canonical); it is the block's id as a DAG
// entry (a dag.ID), and the block's lineage (Block.Parents) are its DAG
// parents; Block.Entry and DecodeEntry convert to and from dag.Entry. Since the hash covers the lineage, a cycle would need a hash
// preimage: honest stores cannot hold one. docs/memory-blocks.md is the
// wire format, with vectors.
//
// What a receiver keeps is decided per field (AcceptField): subject and
// body cost level 0, evidence costs 50 (the floor of the captain band), and
// confidence is refused at every level, as an invariant, not a threshold.
// AcceptBlock returns a partition of the fields into accepted and refused,
// never a filtered copy, and refuses outright a block whose hash does not
// verify or whose lineage names an ancestor the receiver cannot produce.
//
// # The caller's duties
//
//  1. Decode untrusted bytes with Decode (wire form) or DecodeCanonical
//     (the hashed form); never build a Block from unchecked JSON by hand.
//  2. Call AcceptBlock, not AcceptWithAuthority, on a block from elsewhere:
//     it verifies the hash and the lineage before it partitions.
//  3. Pass AcceptBlock the set of blocks you can actually produce. A block
//     refused with BLOCK_MISSING_PARENT may be retried once its ancestors
//     arrive; never keep it with its lineage emptied ("re-rooted").
//  4. Show a reader only Result.Accepted, and test for a field with
//     View.Has or Value.Presence, never by a zero value: an omitted field
//     is a permission decision, an empty one is content.
//  5. Keep a store keyed by BlockHash. Ancestry and IsDescendantOf trust
//     the keys; they report (Cycle, History.Err) and survive a store that
//     lies, but they cannot tell which of its answers are lies.
//  6. Do not put a load-bearing fact in evidence when everyone must read
//     it, and do not expect confidence to travel: no receiver keeps it.
package memoryblock
