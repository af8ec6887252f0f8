// Package author builds signed 30k envelopes for embedders: one typed
// constructor per transaction kind the node accepts (session.create, the
// group, branch and MR kinds, ballots, determinations, key.register,
// key.rotate with its registrar cosig, the contest kinds),
// each filling what the author should not have to: the ids (the session
// of a session.create, the group and branch objects, the change, the MR),
// the parents (the node's current heads of the session unless given) and
// the timestamp (from an injected clock), and signing with a dag.Signer.
//
// witan submit seals its JSON drafts with the same code (Author.Seal), and
// replica/house/housetest builds its test sessions on it. Constructors are
// grouped one file per family (session.go, group.go, branch.go, mr.go,
// contest.go, key.go, and rules.go for rule references); a new family of
// kinds adds a file. class.go is the classroom's steps built on them:
// StartClass from a template, Enrol, and PlanAmendment / PlanClose, which
// work out what Amend and Determine will sign (the diff and the MR's id;
// the determination the rule allows) before anything is signed.
//
// The short path to a vote: Author.NewSession makes a session's create,
// roster and registrar in one call, with a majority merge rule on the root
// and the rules' texts attached (newsession.go); an MR under its Rule and
// ballots follow. With Options.Groups (a node's Replica) an MR that lists
// no Members gets its electorate's members from the node.
//
// The author builds envelopes; it does not judge them: an envelope the
// house would refuse (a ballot outside the electorate, a change whose
// base is not the branch head) is built and signed, and the node's
// receipt says why it is refused.
package author
