// Package house is the pure state machine of a 30k session (30k Protocol
// v0.13 §4, §6, §7, §9): the strict decoders of every L1 transaction body,
// the judgement of each entry against the state of its causal past, and
// the derived state — groups, branches, merge requests with their polls,
// determinations re-evaluated over exactly their listed ballots, executed
// merges derived through replica/statute — with a canonical JSON form and a
// state hash.
//
// It imports neither Badger nor libp2p, starts no goroutine, reads no clock
// and never depends on map iteration order: the State of a House is a
// function of the SET of admitted entries, so replicas holding the same
// entries converge (docs/replica.md).
//
// # How validation stays cheap and order-free
//
// Ballots and opinions (opinion.publish, judged by the pure
// replica/opinion; opinion.go) change nothing that decides the validity of
// other entries' authorisation; every other L1 type (session.create,
// group.*, branch.*, mr.open, mr.determine, key.register) is a governance
// entry. Opinions never reach a poll. Every entry also carries its
// witnessed time (open point 12), what key aging is measured in. Each entry carries its governance
// frontier: the maximal governance entries of its causal past. The state
// after a governance entry is the state at its own past plus that entry
// (incremental); a frontier of several entries (concurrent governance) is
// folded from scratch once, in deterministic topological order with ties
// broken by tx id, and memoised. A ballot is then judged in O(1) against
// its MR's electorate, frozen at mr.open, and folded into the MR's poll
// (rules.Poll) without refolding anything.
//
// Registers that concurrent entries may write are multi-value registers:
// the maximal writes are kept, and more than one is a named flag —
// group_conflict, group_update_conflict, branch_name_conflict,
// concurrent_append, concurrent_open, contradictory_determination — never a
// silent pick (docs/replica.md, docs/deviations.md).
//
// # What admission decides from the causal past (causal_checks.go)
//
// Besides authorisation, admission decides from the entry and its causal
// past only: whether a merge MR into the root reverts text (D41, fed to the
// rule's reversion threshold), whether each sha256 reference in its
// merged text is published in the session (D56; Published answers /checks
// with the same record), that rule texts and the district table resolve
// and that the table has only region and density (D72), and that an
// approval of a fiscal MR has an estimate in its causal past (D53).
//
// # The caller's duties
//
//  1. Make one House per session with New, giving it the objects bodies
//     refer to (Objects: the store plus a batch's attachments).
//  2. Check each envelope's signature (dag) before Admit; Admit does not.
//  3. Admit entries in a causal order (parents first), each once; an entry
//     whose parent was refused must be refused too, without calling Admit.
//     Admit returns a *dag.ProtocolError for an invalid entry and changes
//     nothing; any other error is the caller's.
//  4. Read State (and Hash), Summary (State's scalars, group ids and
//     expiries, the rest counted), MR, Tally and Evaluate. Derive does the full
//     derivation from a set of entries; it equals the incremental one.
//
// Contests (contest.open, contest.rank, contest.determine) and variants
// live in contest.go, the witnessed time that the time rules read in
// witness.go, and the emergency expiry change of D49 in expiry.go; the
// shared files reach them through small hooks marked "contest hook" and
// "timing hook" (docs/deviations.md, "Time on an eventual node"). Key
// rotation (key.rotate, §7 (a) with rotations) lives in rotate.go, reached
// through hooks marked "rotation hook" (docs/deviations.md, "Key
// rotation"). Restricted branches (commitments, branch.reveal,
// unrevealed_source) live in restricted.go, reached through hooks marked
// "restricted hook" (docs/restricted-branches.md).
//
// A House is not safe for concurrent use.
package house
