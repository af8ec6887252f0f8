// Package bench compares witan's sync with what a user would pick instead,
// Automerge's sync protocol (github.com/automerge/automerge-go, SyncState).
// It is its own Go module because automerge-go needs cgo and a prebuilt
// library: the witan library itself never depends on either.
//
// Run, for example:
//
//	cd bench && go test -run '^$' -bench . -benchtime 1x
//
// WITAN_BENCH_1M=1 adds the 1M-entry sizes.
//
// BenchmarkProductFreshSync is the product path: two real nodes
// (replica/node, Badger on disk, libp2p on loopback), a fresh one pulling a
// 30k session of 100k signed ballots from the other and admitting each
// through the replica and its House, against automerge-go syncing as many
// changes in the same iteration; it reports both times and their ratio
// (WITAN_PRODUCT_BALLOTS, WITAN_PRODUCT_MEMBERS size it).
//
// BenchmarkUpSubmitHTTP is the write path as a user runs it: `witan up`
// (built from this tree, Badger on disk with fsync) and a load generator
// (replica/httpapi/httpload) of WITAN_UP_CLIENTS concurrent clients (200 by
// default) posting signed ballots to POST /transactions; it reports
// submissions/s, p50/p95/p99 latency and the node process's CPU per
// submission.
//
// BenchmarkFreshSync runs both sides of a sync in this process, beside
// Automerge; cpu-s is the process's CPU time for the sync, which compares
// runs on a loaded machine better than wall time. BenchmarkFreshSyncChild
// runs the requester in a child process (this test binary again, told so by
// WITAN_BENCH_REQUESTER) and reports its own peak RSS (VmHWM), split into
// anonymous and file-backed memory at the end, its Go heap, and its CPU
// time. For experiments, the child reads WITAN_BENCH_INDEX_CACHE_MIB (a
// Badger index cache), WITAN_BENCH_MEMTABLE_MIB and
// WITAN_BENCH_BLOCKCACHE_MIB (Badger's sizes), WITAN_BENCH_MEMLIMIT_MIB (a
// Go memory limit), WITAN_BENCH_CPUPROFILE and WITAN_BENCH_HEAPPROFILE
// (files to write).
package bench
