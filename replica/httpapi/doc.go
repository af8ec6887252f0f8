// Package httpapi serves a witan node over HTTP: the 30k API under /oth/v0
// (30k Protocol v0.13 §5) and witan's memory-block API for agents.
//
// The Server is a door: it translates HTTP to calls on a *node.Node
// (replica/node) and their answers back. The node owns the one store, the
// one write path (Submit, PutBlock) and the memory spaces; the Server keeps
// no state of its own but a cache of session labels. Client talks to a
// Server (the witan command uses it).
//
// The Server derives nothing: states are read from the replica (the
// write core, which holds the one derivation of each session); tallies,
// reviews (diff, checks, fact sheet), snapshots, the Change DAG and the
// law on a date from its views (replica/view, node.Views); extracts are
// built and checked with replica/extract.
//
// Every answer carries "finality" (provisional or final_advisory; an
// eventual node never says final). Errors are RFC 9457 problem+json with
// the 30k code in "code"; codes the 30k list does not name (no endpoint,
// wrong method, body too large) are spelled "witan:…". A rejected but
// well-formed submission is a problem that also carries the node's signed
// rejection receipt. Signed objects (receipts, checkpoints) are served
// whole under their own member, never merged with unsigned labels.
// GET /forks lists the forks the node found when it held its peers to
// their checkpoints (S10; forks.go), each with both signed checkpoints.
//
// # The caller's duties
//
//  1. Open the node (node.Open). Every write must go through the node (not
//     its replica or store directly), or sync will not hear of it.
//  2. Make the Server with New and serve it where you choose. Listen on
//     loopback unless you mean to serve a network: the API has no
//     authentication (witan up refuses other addresses without -public).
//  3. Call replica.Checkpoint now and then: finality moves only with
//     checkpoints (GET /events tells its clients when one is signed).
//  4. Call StopEvents when the http.Server shuts down
//     (http.Server.RegisterOnShutdown): event streams never finish by
//     themselves, and Shutdown waits for every request.
//  5. Close the node after the server has shut down.
//
// docs/http-api.md lists every endpoint with its answer.
package httpapi
