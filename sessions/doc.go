// Package sessions is the Resolution Protocol memory model as a pure,
// deterministic session engine: what may be kept of what was said, at which
// level, for how long, and who may change that.
//
// The engine follows the model of resolution-protocol-memory-model.md
// (RP 0.2, memory model 0.1) section by section: pseudonymous identities per
// session (§2; the model numbers them per engine run, D4), intents parsed by
// ordered per-locale phrase rules and the eye (§3), the applied level
// A(x) = base(x) ∧ c ∧ κ(x), and 0 for a voice over capacity (§4),
// provisional room raises under an objection window (§5), filing and
// forgetting spans (§6), the retention staircase (§7), and the end of a
// session with its note (§8).
// Where this package decides something the model leaves open, or differs
// from the reference code, docs/deviations.md says so under "## sessions";
// docs/memory-model.md explains the model in prose.
//
// In the manner of etcd's raft, the engine does no I/O, reads no clock,
// starts no goroutine and uses no floats: events go in through Engine.Step,
// and what happened comes out as a list of Outcomes, with Engine.State for
// the rest. Stepping the same events into an engine with the same profile
// and the same entropy gives the same outcomes and state, always.
//
// Units: instants are Time, integer milliseconds since an epoch the caller
// fixes (Unix milliseconds UTC if the note's dates matter); durations are
// time.Duration; confidence is Permille, thousandths (θ = 0.8 is 800).
//
// # The caller's duties
//
//  1. Build an engine with New, passing a profile (LoadProfile; nil means
//     goldfish-v01) and an entropy source for session IDs
//     (crypto/rand.Reader in production; DeterministicEntropy in tests).
//  2. Step every event in the order the binding observed it, never going
//     back in time: Speech when a span of a voice's speech is filed (with
//     its transcript if intents should be heard), Press for the eye,
//     Request for intents from a screen, a preference or an exchange, End
//     when the binding stops (Goldfish is switched off).
//  3. Step a Tick at least once a second while a session is open, so that
//     an objection window closes on time and a silent session ends (after
//     G of silence, dated last + G). A window is confirmed only at a t
//     with t − opened > W, strictly: an objection at exactly opened + W
//     still counts (Inv 5.5).
//  4. Act on the outcomes, in order: store each Filed segment's stamped and
//     held levels, replace them with a Restamped outcome's, and show the
//     results of Decided intents (the ring). Neither level ever rises on a
//     segment (a held level is dropped when its window is confirmed);
//     Engine.Segment looks a segment up by its Seq.
//  5. While a window is open, build artefacts from Engine.Usable or
//     Engine.Readable, which use the held level (Inv 5.4); never from a
//     Filed stamp alone.
//  6. On SessionEnded, keep the Closure's records (with their final levels
//     and frozen limits), write the note with WriteNote if the binding has
//     one, and prune each record once Record.Expired says so. Read a record
//     at NoTime if the clock cannot be trusted: it reads as level 0.
//  7. Never put a label in anything you output: the engine's outputs carry
//     pseudonyms only, and a label identifies a person.
package sessions
