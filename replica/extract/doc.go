// Package extract is the form of witan's offline evidence extracts (30k
// D45) and their verifiers: an extract of one log entry (Entry, Verify,
// VerifyWitnessed) and of a merge request with its ballots, whose tallies
// a stranger recomputes (MR, VerifyMR). The node serves them at
// GET /oth/v0/extract/{hash} (replica/httpapi); witan verify-extract
// checks a file with the network off.
//
// It reads only the file: it imports the pure packages (dag's codecs,
// replica/checkpoint, replica/house, rules) and links neither net/http,
// Badger nor libp2p (TestVerifierLinksNoServer holds it to that).
package extract
