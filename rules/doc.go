// Package rules evaluates the approval rules of the 30k Protocol (§7): the
// rule kinds always_allow, designated_approvers and threshold_vote, their
// closing modes, ballot validity with supersedes chains and equivocation
// voiding, and tallies that show every share side by side (D50).
//
// The package is pure. It reads no clock, touches no disk or network,
// starts no goroutine, uses integers and exact rationals only, and never
// depends on map iteration order: the same rule, electorate, ballots and
// context give byte-identical results on every replica. Time enters as an
// explicit input (Context.At), as the checkpoint time of the caller's own
// checkpoint. (An Electorate's member index hashes keys with a random seed,
// as a Go map does; it is never iterated, so nothing observable depends on
// the seed.)
//
// # Using it
//
// A replica holding an MR does, in order:
//
//  1. Decode the rule reference the MR names with ParseRef (or build a Ref)
//     and Compile it. Compile answers rule_unknown for a kind witan does not
//     know and rule_not_supported for capital_vote, which needs a strong
//     node (witan is an eventual node).
//  2. Freeze the electorate at MR open with NewElectorate: the members of the
//     MR's electorate group as they stood in mr.open's causal past. For a
//     designated_approvers rule this is the approvers group
//     (Rule.Approvers names it).
//  3. Make one Poll per MR with NewPoll and Add every ballot.cast whose
//     signature, key and causal past the replica has already checked. Add
//     judges what §7 leaves to the rule: the MR id, membership of the
//     electorate, and supersedes chains. A ballot that can never count is
//     recorded as invalid and reported with code ballot_invalid. Adding a
//     ballot costs O(1); the session is never refolded.
//  4. Ask Poll.Result (or Poll.Tally, which is O(1)) with a Context carrying
//     the facts the rule depends on: the checkpoint time now, the time the
//     notice period started, whether the MR's fact sheet has reverts,
//     whether structure fails, whether the MR requests emergency handling.
//  5. To verify a determination, evaluate exactly the ballots it lists
//     (Evaluate, or a fresh Poll) and compare its outcome with
//     Result.IfClosed; an eventual node treats deadlines and notice as
//     advisory and records Result.Timing with the determination. When the
//     listed ballots are exactly those the MR's Poll was given, none
//     refused (Poll.Len equals their number) and the electorate is the
//     Poll's, that Poll's Result is their evaluation: no second fold is
//     needed.
//
// The order in which ballots are added never matters: a Poll's result is a
// function of the set of ballots it was given.
//
// # Contests
//
// Competing MRs grouped by contest.open are decided by ranked pairs
// (contest.go, docs/rules.md "Contests"): make one Contest per contest
// with NewContest (the options' shared rule and frozen electorate), Add
// every contest.rank whose signature and causal past the caller checked,
// and read Contest.Result: pairwise counts, every round with its locked
// pairs and winner, the winner held to its own rule against the status
// quo, fallback rounds (D71) and ranked_above_winner (D77). To verify a
// contest.determine, evaluate exactly the rankings it lists and compare
// ContestResult.IfClosed and Winner; a Contest's result is a function of
// its options and the set of rankings, never of their order.
package rules
