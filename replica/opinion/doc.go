// Package opinion is the pure evaluator of the 30k opinion layer (30k
// Protocol v0.13 §8 up to "Resolutions", D15-D25, D28, D32, D37, D52, D60):
// the strict decoder of an opinion.publish body, the author and disclosure
// rules, verified quotes, findings, corrections, formalizations, and the
// closed registry of assertions evaluated to holds, fails or undetermined;
// and §8 "Resolutions, forecasts, and rankings" (D31, D34, D35, D50):
// resolution specs and Resolve over the listed nodes' reports, forecasts,
// the closed metric registry (Stat) and rankings (EvaluateRanking) over a
// StatsRecord the caller builds as of a cut (docs/markets.md);
// and, of the members beyond the first part (members.go), cost estimates (D53, D69,
// D75: estimate.go, judged with CheckEstimate against an EstimateContext
// the caller reads from the opinion's causal past), affiliation
// attestations (D76: attest.go, Affiliations derives attested_by),
// jurisdiction choices (D73: jchoice.go), feasibility (D70:
// feasibility.go) and translations (D63: translate.go). The caller also
// runs CheckParts after Check.
//
// It imports neither Badger nor libp2p, starts no goroutine and reads no
// clock: every judgement is a function of the opinion and of what the
// caller says about the opinion's causal past (Record, Standing) or about
// the current record (Facts). replica/house calls it at each opinion's
// causal point; replica calls Evaluate for GET /opinions/{id}/evaluation.
//
// # The caller's duties
//
//  1. Decode the body with Decode (schema errors carry code schema).
//
//  2. Judge the author with CheckAuthor, giving the Standing of the signer
//     in the opinion's causal past (roster, observers, group admins),
//     then CheckSession with the session's simulation flag (D54). It
//     judges a complaint too (D39, D79, complaint.go): its protocol rule,
//     its addressees against Standing.IsObserver, its receipts' signatures.
//
//  3. Judge the content with Check, giving a Record that answers only
//     from the opinion's causal past: a snapshot, an opinion or an object
//     that is not there must read as absent, so that every replica
//     accepts the same opinions.
//
//  4. Evaluate quotes and assertions against the current record with
//     Evaluate; map each Result's Deps and Open to a finality (an
//     eventual node: final_advisory only once every dependency is in one
//     of its checkpoints and nothing depends on an undecided MR).
//
//  5. For a resolution, gather a Report from each listed node (this
//     node's from EvaluateMarkets; others' over the network, which is the
//     caller's) and call Resolve. For a ranking or /stats, describe the
//     record as of the cut in a StatsRecord.
//
// Opinions are never counted in binding evaluation: nothing here is read
// by rules or by a tally, and nothing aggregates forecasts.
package opinion
