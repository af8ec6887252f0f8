// Package view derives what a witan node serves of a session and labels
// it with the node's finality: merge requests with their re-evaluated
// determinations and advisories, tallies and their district breakdowns,
// the law in force, changes and reviews, contests, opinions and their
// evaluations, statistics and rankings as of a cut, estimates, the roll
// call and the Popolo export.
//
// Each answer is a function of one session's read-only state, taken from
// the write core (replica) through replica.Session, under the replica's
// lock for the time of the read; the core never imports this package.
// A Reader is bound to one replica and keeps the one cache views need
// (the records of the cuts /stats and rankings ask for).
//
// A Reader's reads name the session by its dag.ID, as replica/author's
// calls do (author.NewSession.Session, Tx.Made of a session.create): one
// spelling of a session from the envelope that makes it to the view
// that reads it.
//
// Finality (30k §5): provisional until one of this node's signed
// checkpoints includes what an answer rests on, final_advisory after;
// never final on an eventual node (30k D45).
package view

import "github.com/witan-dev/witan/replica"

// Reader derives the views of one replica's sessions. It is safe for
// concurrent use.
type Reader struct {
	rep *replica.Replica
	// cuts caches records as of cuts other than the whole log, for /stats
	// and rankings (markets.go); read and written under the replica's
	// lock (a Session is held).
	cuts cutCache
}

// New returns the Reader of rep. A node keeps one (node.Node.Views), so
// that its cache is shared by every caller.
func New(rep *replica.Replica) *Reader { return &Reader{rep: rep} }
