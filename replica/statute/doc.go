// Package statute is the 30k statute core (30k Protocol v0.13 §4 and §6):
// statute trees and node hashing, structure profiles, markers, the four
// ops and change verification, merge semantics (merge-base, derived patch,
// conflicts and resolutions, staleness, the derived merge change), the
// checks, the fact sheet, the structural diff and the law in force on a
// date.
//
// Everything here is a pure function of content-addressed objects and of
// inputs the caller passes: it imports neither Badger nor libp2p, starts no
// goroutine, reads no clock and never depends on map iteration order.
// Every replica that feeds it the same objects gets byte-identical output.
//
// # The caller's duties
//
//  1. Decode untrusted bytes with DecodeChange, DecodeNodeSpec, DecodeOp
//     and DecodeResolutions (and an MR's effective field with
//     Effective.UnmarshalJSON); they refuse anything that is not canonical
//     JSON under witan's profile, with code schema.
//  2. Load snapshots with LoadTree from node objects (each checked against
//     the hash it was fetched by), or build them with NewTree.
//  3. On branch.append, check that the change's base is the branch head's
//     snapshot and call Change.Verify: applying its ops must yield its
//     result.
//  4. On mr.open, call Open with the Change DAG (a dag.ParentSource) and a
//     Snapshots source: it finds the merge-base and derives the patch, or
//     fails with no_common_ancestor or a *ConflictError. Keep the patch.
//  5. For /checks and /facts build a Review (ReviewOf the patch, or
//     NewReview from ops) and an Env describing the session and the MR at
//     its causal point, then call RunChecks and Facts. Only a blocking
//     structure check may stop the MR.
//  6. When an approval is executed, call MergeChange with the branch's
//     current head: it re-applies the patch (a pre that no longer matches
//     is stale_mr) and returns the merge change to store and set as head.
//  7. For /law, keep a Law and Add each merge into the root, in log order,
//     with its resolved effective date; then call At.
//
// Trees are edited copy-on-write: Clone is cheap, and a merge over a large
// tree copies only the nodes it touches and their ancestors. A Tree is not
// safe for concurrent edits; after Hash, concurrent reads are safe.
package statute
