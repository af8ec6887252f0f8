// Package examples holds runnable programs, one per directory, each
// started with "go run ./examples/NAME" from the module root. Each runs on
// loopback, ends by itself, and has a test that checks its outcome.
//
//	embed      the smallest program that embeds a replica
//	agents     two offline agents write CAT7 memory blocks, meet, sync, and
//	           read each other's blocks at different authority levels
//	classroom  a teacher and student laptops run an education session, vote
//	           on an MR, watch the tally become final_advisory everywhere,
//	           then purge the session at the end of term
//	meeting    the roadmap meeting of the memory model (§8.4) replayed over
//	           a node's HTTP API in English and Spanish: the note, three
//	           days of forgetting, and publishing the Outcomes
//
// The sessions are synthetic (simulation: true). Not for use in real
// elections or governance.
package examples
