// Package classroom serves witan's classroom page: a plain HTML, CSS and
// JavaScript page, embedded in the binary, that shows a node's sessions
// live (over GET /oth/v0/events) and lets a student vote and a teacher
// checkpoint from a browser. witan up serves it at "/", in front of the
// /oth/v0 API.
//
// The page reads only the public API. Its writes are this package's own
// endpoints under /classroom/v0; each is signed on this node with the
// member key it holds (Options.Voter), never with a key the page sees:
//
//   - POST /classroom/v0/vote {session, mr, choice}: the node signs a
//     ballot.cast with the voter's key (Options.Voter, which lives on the
//     student's own node), superseding the voter's previous ballot on that
//     MR, submits it through the node's one write path and answers with
//     the signed receipt and the envelope.
//   - POST /classroom/v0/checkpoint {session}: the node signs a checkpoint,
//     which turns everything it covers final_advisory.
//   - POST /classroom/v0/start {label}: a class from the template
//     (author.StartClass): a short seed statute, the rules filled in and
//     their texts attached, the key the roster's first member and admin.
//   - POST /classroom/v0/enrol {session, code, name}: the key of a
//     student's code (EnrolCode: the key, and the laptop's libp2p peer id)
//     joins the roster (a group.update); the name goes only into the
//     node-local address book (Options.Names), never into an envelope.
//   - POST /classroom/v0/join {session}: join a session a peer announces.
//   - POST /classroom/v0/propose {session, nid, text, summary, sign, mr}:
//     without sign, the plan of the amendment (author.PlanAmendment: the
//     diff, the MR's id) and nothing signed; with sign, the drafting
//     group, branch, change and MR are signed only if the MR's id is still
//     mr, the one the page showed (else stale_mr).
//   - POST /classroom/v0/close {session, mr, sign, outcome, ballots}:
//     without sign, the determination the MR's rule allows over every
//     ballot on it in this node's log (author.PlanClose); with sign, it is
//     signed only if it still has that outcome over that many ballots.
//   - GET /classroom/v0/peers?session=: connected peers and how far each is
//     behind this node's log, from the heads this node has seen each hold:
//     announced, answered a pull with, or sent it (a laptop that caught up
//     from this one is listed at once, though its own announcements of
//     the same heads are mostly suppressed). A peer not known to hold this
//     node's heads is asked, by a pull in the background (at most once
//     every 5 s per peer, four at once): the next request lists it from
//     its answer.
//   - GET /classroom/v0/names: the address book.
//
// # The caller's duties
//
//  1. Make the Handler with New over the node and the API handler, and
//     serve it where you serve the API. Set ReadOnly when the listener is
//     not on loopback: a page served to a network never writes.
//  2. Writes are refused unless the request comes from loopback, names a
//     loopback host (a DNS-rebinding page cannot), carries the page's CSRF
//     token (X-Witan-CSRF, embedded in the page, new each process) and, if
//     the browser sends Origin, comes from the page's own origin.
//  3. Keep the voter's key file readable only by its owner (witan keygen
//     writes it so); the page never sees the key, only its public half.
//     The address book file is written with mode 0600 too.
//
// Not for use in real elections or governance: every view says so, and
// says "simulation" for a simulated session (D54).
package classroom
