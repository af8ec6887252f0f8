// Package opinion is the pure evaluator of the 30k opinion layer (30k
// Protocol v0.13 §8 up to "Resolutions", D15-D25, D28, D32, D37, D52, D60):
// the strict decoder of an opinion.publish body, the author and disclosure
// rules, verified quotes, findings, corrections, formalizations, and the
// closed registry of assertions evaluated to holds, fails or undetermined.
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
//  2. Judge the author with CheckAuthor, giving the Standing of the signer
//     in the opinion's causal past (roster, observers, group admins). It
//     judges a complaint too (D39, D79, complaint.go): its protocol rule,
//     its addressees against Standing.IsObserver, its receipts' signatures.
//  3. Judge the content with Check, giving a Record that answers only
//     from the opinion's causal past: a snapshot, an opinion or an object
//     that is not there must read as absent, so that every replica
//     accepts the same opinions.
//  4. Evaluate quotes and assertions against the current record with
//     Evaluate; map each Result's Deps and Open to a finality (an
//     eventual node: final_advisory only once every dependency is in one
//     of its checkpoints and nothing depends on an undecided MR).
//
// Opinions are never counted in binding evaluation: nothing here is read
// by rules or by a tally.
package opinion
