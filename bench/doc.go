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
package bench
