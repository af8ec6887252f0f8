// Package sha8 computes SHA-512 digests of eight messages at once with
// AVX-512, one message a lane: the kᵢ = SHA-512(Rᵢ ‖ A ‖ mᵢ) of a batch of
// Ed25519 signatures, the same digests crypto/sha512 gives.
//
// # What
//
// The compression function runs on eight 64-bit lanes of Z registers
// (sha8_amd64.s, written by gen.go): each lane's message is copied, with
// its padding, into a buffer of its own, the eight buffers as long as the
// longest; a block's sixteen words are read from the eight buffers as two
// 8×8 transposes and byte-swapped; a lane whose message has fewer blocks
// keeps its state (the final additions are masked by the lanes still
// running). Messages longer than 8 KiB are hashed one by one, so that a
// long one does not make seven others wait for its blocks.
//
// Why: in a fresh sync of 100k envelopes the digests took 1.3 µs an
// envelope of the receiver's 17 µs (crypto/sha512, one block at a time
// with AVX2).
//
// # The guard and the fallback
//
// Enabled is true only where the CPU has AVX512F and AVX512BW
// (golang.org/x/sys/cpu) and the bridge, run once, got crypto/sha512's
// digests for messages of the lengths around every block boundary of the
// padding, in lanes of different lengths together. Otherwise Sums hashes
// with crypto/sha512. TestFastPathOnWhereItCan fails where the CPU has
// the instructions and the path is off all the same.
//
// The package is pure: no I/O, no clock, no goroutines.
package sha8
