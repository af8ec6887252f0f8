// Package harness drives a 30k node (witan or any other implementation
// that speaks /oth/v0) as a black box through the scenarios of 30k
// Protocol v0.13 §10, checks that every node it is given converges on
// the same root snapshot, measures the §10 metrics, and writes a
// conformance report (conformance-report.json) and a readable summary.
// `witan harness` is its command line.
//
// The package imports only the Go standard library, on purpose: it must
// not trust the implementation it measures to compute what it checks. It
// has its own RFC 8785 canonicalization (jcs.go), its own Ed25519
// signing and envelope sealing (sign.go), its own statute node hashing
// and change ids (statute.go), its own RFC 9162 Merkle root (sign.go) and
// inclusion proofs (extract.go), all written from the spec's words. A bug shared with witan's dag or
// statute packages therefore shows up as a failed check instead of
// passing silently. A test (deps_test.go) keeps the import list to the
// standard library. It lives under cmd/witan because it is a tool that
// ships with the witan binary, not part of the replica library an
// embedder links.
//
// Time: every envelope's ts comes from the harness's own clock, one
// second apart from a fixed start. On a witan node, rules that wait for
// time read witnessed time (the largest member ts in an entry's causal
// past, docs/deviations.md), so the harness ages keys and reaches
// expiries by moving that clock forward and having a member publish
// (run.advance, Session.age).
//
// Links (link.go): the harness reaches nodes only over /oth/v0, so to
// partition them (S9) it owns the links between them: each is a reverse
// proxy the operator points a node's peer sync at, and the harness cuts
// and heals it.
//
// Rosters, keys and voting blocs are synthetic and derived from a seed
// (30k §3: simulation only): the same seed gives the same envelopes, so
// a run can be repeated. Everything the harness writes is about
// programmed voters, never real legislators. Not for use in real
// elections or governance.
package harness
