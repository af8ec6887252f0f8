// Package storetest is the conformance suite for dag.Store backends.
//
// A backend's test calls Run with a function that returns a fresh, empty
// store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) dag.Store { return dag.NewMemStore() })
//	}
//
// Run checks what the dag.Store interfaces promise: what "not found"
// returns, atomic batches, duplicates and conflicts, the pending set and
// transitive promotion (also of a 10 000-long chain put children first,
// more than a Badger transaction holds; 3000 with -short), heads, children, log positions, objects, that the
// store neither keeps nor hands out the caller's slices, ErrClosed after
// Close, the Batch.Admit hook (quarantine with descendants, hold back,
// internal failure), and (with rapid) that any DAG inserted in any order,
// with duplicates and in any batches, ends in the same state as insertion
// in causal order, with or without a deterministic Admit; and that after
// every Put the store agrees with dagtest.Reference, a naive model that
// shares no code with dag.PlanBatch (which every backend runs, so one
// backend cannot be the other's reference).
//
// Check verifies a store's indexes against its entries; crash tests call it
// after every reopen.
package storetest
