// Package dagtest helps users and backends test code built on package dag
// with property tests (pgregory.net/rapid).
//
// DAGs generates random DAGs of one space whose entries carry canonical
// JSON data and content ids; Arrivals shuffles and repeats their entries
// as a replica might receive them from several peers; Batches cuts an
// arrival sequence into batches for dag.Store.Put. The Naive* functions are
// deliberately brute-force references for the causal algorithms (heads,
// ancestry, merge-base, witan's topological order) to check fast code
// against; keep the DAGs small when using them. Reference is the same for
// a whole dag.Store: a map of entries and a loop repeated until nothing
// changes, the model that dag/storetest compares every backend with; and
// NaiveDecode for signed envelopes, the reference that dag's tests and the
// fuzz targets hold dag.DecodeSigned against.
//
// Generators for keys and signed envelopes live beside these, in the same
// package.
package dagtest
