// Package edwards4 decompresses Ed25519 points four or eight at a time,
// with the exact results of curve25519-voi's
// (*curve.EdwardsPoint).SetCompressedY.
//
// # What
//
// Decompressing a point is dominated by one exponentiation to (p-5)/8 in
// GF(2^255-19): about 250 squarings. The R of each signature in a batch is
// independent of the others, so four of them go through the exponentiation
// together: Fe4 holds four field elements in "vertical" layout, limb i of
// the four lanes side by side (one 256-bit vector), ten limbs in radix
// 2^25.5, so that one AVX2 VPMULUDQ forms a 32×32→64-bit limb product in
// all four lanes and no shuffles are needed. The kernels (fe4_amd64.s) are
// written by gen.go (go generate); fe4.go holds the same arithmetic in
// plain Go, the reference the kernels are tested against limb for limb and
// the arithmetic on other architectures.
//
// Where the CPU has AVX-512 (AVX512F), two quads share their
// exponentiation: Fe8 holds eight lanes, limb i of all eight in one 512-bit
// vector, and the same generated arithmetic runs on Z registers. What makes
// it faster is less the width than the registers: with thirty-two of them
// the square keeps every scaled copy of its limbs in a register, where the
// AVX2 square reads them from the stack (2.4 µs for 100 squarings of eight
// lanes against 3.9 µs for two quads; a decompression 1.35 µs against
// 2.2–2.5 µs per point, BenchmarkDecompress, 2026-12-06). The steps before
// and after the exponentiation run on each quad as before (decompress8).
//
// What the AVX2 kernels keep on the stack sits in a frame aligned to 64
// bytes (gen.go's alignFrame), each slot within one cache line: a slot
// split across two lines is not forwarded from its store to the load after
// it. The four-lane decompression, which spills most, went from 2.13–2.18
// to 1.69–1.78 µs a point with it (BenchmarkDecompress/edwards4-four-lanes,
// 2026-12-07); the AVX-512 kernels, which keep their limbs in registers,
// measured no gain from it and keep Go's frame.
//
// Decompress and DecompressEach follow voi's algorithm step by step (see
// decompress4): y from the low 255 bits, non-canonical y accepted, u = y²-1,
// v = d·y²+1, r = u·(u·v)^((p-5)/8), accepted iff v·r² = ±u, the even
// root, negated for the sign bit, T = X·Y. Lengths other than 32 are
// refused, as CompressedEdwardsY.SetBytes refuses them.
//
// # Why unsafe
//
// voi's EdwardsPoint has no public constructor from coordinates, and
// going through its SetCompressedY would redo the exponentiation this
// package exists to share. So the limbs are written straight into the
// point's memory: with voi's 64-bit field backend (amd64) an EdwardsPoint
// is X, Y, Z, T, each five uint64 limbs of 51 bits, 160 bytes. The limbs
// written are the ones voi itself would hold: Y the raw bits of the
// encoding, Z = 1, X and T fully reduced, which is what voi's multiplication
// and weak reduction leave except when a reduced limb is tiny; lanes where
// that could happen (x = 0, crafted points with a 51-bit limb of X or X·Y
// below 2^24) are decoded by voi itself instead (see decompress4).
//
// # The guard and the fallback
//
// The limbs are written only after a check done once (bridge): the AVX2
// kernels are present (golang.org/x/sys/cpu), unsafe.Sizeof of the point is
// 160 bytes, and on a set of known encodings (the base point and multiples,
// the points of order 4 with both signs, non-canonical and invalid
// encodings) this package's points equal voi's by Equal, by compression
// and byte for byte in memory, and the verdicts agree. If any of that
// fails (another voi version or field backend: voi's 32-bit field, chosen
// on amd64 by -tags force32bit, also makes 160-byte points, and the check
// refuses it; another architecture; no AVX2) every point goes to voi's
// SetCompressedY: never a different
// answer, only no speed-up. The eight-lane passes run only after a second
// check (bridge8): the AVX-512 kernels are present and decompress8 gives
// decompress4's verdicts and limbs, lane for lane, on the same encodings;
// otherwise passes stay four lanes wide. TestFastPathOnWhereItCan and
// TestEightLanesWhereTheyCan fail where the CPU has the instructions and a
// path is off all the same. Without the kernels the plain-Go four-lane
// code would be slower than voi's own, so it is not used for decoding.
//
// The package is pure: no I/O, no clock, no goroutines.
package edwards4
