// Package dag is witan's content-addressed causal DAG: the codecs every
// replica must agree on byte for byte, and the interfaces and algorithms of
// the store that holds the DAG.
//
// This root package is pure: it imports neither Badger nor libp2p, starts
// no goroutine and reads no clock (a test runs go list -deps to keep it so).
// The Badger store lives in dag/badgerstore, the conformance suite every
// store passes in dag/storetest, and rapid generators for users' own
// property tests in dag/dagtest.
//
// # What is here
//
//   - ID: the SHA-256 of canonical bytes, printed "sha256:<64 lowercase
//     hex>" and convertible both ways to a CIDv1 (codec json, sha2-256).
//   - Canonicalize: RFC 8785 (JCS) under the profile of 30k §4: NFC text,
//     integers only, no duplicate keys, valid UTF-8, no lone surrogates.
//     Every refusal is a *ProtocolError with code schema.
//   - Key and Signer: Ed25519 keys written "ed25519:<base64url>";
//     signatures over a domain ("oth/0.10\n" for envelopes,
//     "oth/0.10-receipt\n" for receipts) followed by the JCS of the object
//     without "sig". Verify and BatchVerifier share one rule, ZIP-215, so
//     batching never changes what is accepted.
//   - Envelope: the only write format of 30k §4, decoded strictly.
//   - Node and NodeHash: statute node hashing (node_hash of 30k §4).
//   - Code and ProtocolError: the error codes of 30k §5.
//   - KeyCache: public keys expanded once, for replicas that verify many
//     signatures by the same members.
//   - Store: small interfaces (Getter, Haser, ObjectGetter, Putter, Index)
//     that a backend composes; PlanBatch, the causal bookkeeping every
//     backend shares (pending entries, promotion, the Admit hook that
//     validates an entry at the moment it is applied, quarantine); MemStore.
//   - Causal algorithms over any ParentSource, all iterative: TopoOrder
//     (parents first, smallest id among the ready), IsAncestor, Ancestors,
//     CommonAncestors, MergeBases and MergeBase, Frontier, MissingParents.
//
// # The caller's duties
//
//  1. Decode untrusted bytes only with the decoders here (DecodeEnvelope,
//     or DecodeSigned on an ingest path, ParseID, ParseKey, Canonicalize);
//     never hash bytes that have not been canonicalized.
//  2. Check an envelope's signature (VerifySignature, or a BatchVerifier
//     for many: AddSigned takes a DecodeSigned result without encoding the
//     signed message again) before anything else looks at it; a failure is
//     bad_signature.
//  3. Judge an envelope's authorisation only against its causal past (the
//     replica does this); DecodeEnvelope checks only what needs no context.
//  4. Compare IDs with == and order them with Compare; the zero ID is
//     invalid everywhere.
package dag
