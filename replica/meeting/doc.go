// Package meeting makes the Resolution Protocol engine (package sessions) a
// feature of a witan node: meetings started with a profile, fed what a
// device hears, read back by age, and kept in the §7.8 store
// (sessions/meetstore) that forgets by destroying keys.
//
// A meeting is node-local and never synced: nothing of it enters the DAG.
// While it is open, everything of it (the engine, the transcripts, the
// event log) is in RAM only. When its session ends (End, or G of silence
// noticed by a tick or a later event), the note of §8.3 is written and the
// records, the note's sections, the event log (§7.9, with any voice that
// said "erase me" already scrubbed, Def 2.6) and the meeting's metadata go
// to the store as sealed copies: a record stamped s as copies at 1…min(s, 3)
// in the class its limit rounds down to; each note section at its own
// level; the log and the metadata at level 1 in the room's class, so the
// log never outlives the schedule's last step.
//
// Reads by age use Def 7.4: a record reads at X_u(t), shown from its copy
// at min(X_u(t), 3); an artefact at level ℓ uses only records readable at ℓ
// (§8.2). Answers never carry a label, a voice ID of the binding, or a
// statement time (Inv 2.4, 2.5); pseudonyms appear in an open meeting's
// state and in records read at level 3 or more.
//
// # The caller's duties
//
//  1. Open a meetstore.Store on its own directory and pass it with the
//     node's clock to New; call Store.Forget at every UTC midnight.
//  2. Feed each meeting's events in the order the device observed them,
//     and a tick at least once a second while it is open (the objection
//     window and the session gap run on ticks).
//  3. Mount Handler under the node's API base; publish a note's Outcomes
//     only on an explicit call (PublishOutcomes): a published block syncs,
//     and this node alone can no longer forget it.
package meeting
