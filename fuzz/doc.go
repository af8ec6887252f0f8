// Package fuzz holds witan's go test -fuzz targets: one for every decoder
// that reads untrusted bytes (envelopes, canonical JSON, ids, memory
// blocks, statute objects, the session grammar). Each target has a seed
// corpus under testdata/fuzz/<Target>/, so a plain `go test ./fuzz` runs
// the seeds as regression tests and CI runs a short `-fuzz` smoke of each.
//
// Run one for longer with, for example:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzDecodeEnvelope$' -fuzztime 5m
package fuzz
