// Package httpapi serves a witan node over HTTP: the 30k API under /oth/v0
// (30k Protocol v0.13 §5) and witan's memory-block API for agents.
//
// Local is the node's one write path over one store: the replica's
// sessions (Submit for clients, Ingest for peers) and the memory spaces of
// CAT7 blocks (PutBlock), with the notifications sync needs; it is the
// sync.Local that a sync.Node runs on. Server is the http.Handler over a
// Local. Client talks to a Server (the witan command and the examples use
// it).
//
// The Server derives nothing: states, tallies, reviews (diff, checks,
// fact sheet), snapshots, the Change DAG and the law on a date are read
// from the replica, which holds the one derivation of each session.
//
// Every answer carries "finality" (provisional or final_advisory; an
// eventual node never says final). Errors are RFC 9457 problem+json with
// the 30k code in "code"; codes the 30k list does not name (no endpoint,
// wrong method, body too large) are spelled "witan:…". A rejected but
// well-formed submission is a problem that also carries the node's signed
// rejection receipt. Signed objects (receipts, checkpoints) are served
// whole under their own member, never merged with unsigned labels.
//
// # The caller's duties
//
//  1. Open the store, open the replica on it (replica.Options.Store), and
//     make the Local with NewLocal. Every write must go through the Local
//     (not the replica or the store directly), or sync will not hear of it.
//  2. Make the Server with New and serve it where you choose. Listen on
//     loopback unless you mean to serve a network: the API has no
//     authentication (witan up refuses other addresses without -public).
//  3. Call replica.Checkpoint now and then: finality moves only with
//     checkpoints.
//  4. Close the replica, then the store, after the server has shut down.
//
// docs/http-api.md lists every endpoint with its answer.
package httpapi
