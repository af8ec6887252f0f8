// Package msm multiplies many Ed25519 points by many scalars and sums the
// products, Σ sᵢ·Pᵢ, eight lanes at a time with AVX-512 IFMA: the check of
// a batch of signatures (dag's BatchVerifier), with the answer
// curve25519-voi's MultiscalarMulVartime and IsSmallOrder give.
//
// # What
//
// The bucket method with windows of 8 bits and signed digits, each in
// [−128, 127]: window w of every point goes to that window's 128 buckets
// by its digit's magnitude, negated where the digit is negative (a cached
// point's Y+X and Y−X trade places and its 2d·T changes sign), bucket 0
// taking the zeros and never summed; the window's sum is Σ d·bucket[d],
// formed with two running sums from the top bucket down, and the windows
// are then joined by doublings (Horner). Signed digits halve the buckets,
// so a window's sums cost half what unsigned bytes' 255 buckets did. A full
// scalar is recoded (each byte plus the carry from the one below, less 256
// from 128 on); a batch's zᵢ come as Shorts, sixteen random bytes taken as
// signed digits, which need no recoding and never carry into a seventeenth
// window (dag's grouped draws them so). Eight windows go through one pass
// together, window 8k+j in lane j: adding a point to its buckets is one
// eight-lane addition, the point broadcast to every lane and each lane's
// bucket read and written by its own digit. A bucket keeps each lane's
// point in one run of 192 bytes, so that the eight lanes' buckets are read
// as eight runs and turned into limb vectors by 8×8 transposes (and back),
// where gathering them limb by limb touched twenty cache lines a lane. A
// point joins the passes up to its highest nonzero digit: a batch's zᵢ two,
// the keys' and the base point's 253-bit coefficients four. A pass costs
// its buckets' sums (about 0.06 ms) however few points it takes, so the
// upper halves of at most 40 full scalars (a batch by one author has one
// key and the base point) go to voi instead (BenchmarkHighHalves), and
// fewer than 72 points go to voi altogether (BenchmarkCrossover).
//
// A Short is taken as the integer it is (it may be negative), where voi
// would take it modulo the group order L: the two sums differ by multiples
// of L·Pᵢ, points of small order, so whether [8]·sum is the identity, the
// answer IsSmallOrderSum gives, is the same either way. voiSmallOrder, the
// path for few points, gives a Short z to voi as |z| on Pᵢ or on −Pᵢ, a
// 128-bit scalar, and so forms the same sum as the passes.
//
// The kernels keep their field elements in a stack frame aligned to 64
// bytes, so that every slot is whole cache lines: a 64-byte store split
// across two lines is not forwarded to the load that follows it, and with
// the frame as Go left it (8-byte aligned) the same kernels took a fifth
// longer (BenchmarkSum 2.39–2.54 → 1.86–1.99 µs a signature with signed
// digits, 2026-12-07).
//
// A field element is five limbs of radix 2^51, voi's own layout, and eight
// of them sit limb by limb in five Z registers (fe8). A product of limbs
// below 2^52 is formed with VPMADD52LUQ and VPMADD52HUQ (the low and high 52
// bits of a 104-bit product), the high half, worth 2·2^51, doubled into the
// next column; columns past 2^255 fold back times 19. Every result is
// carried until each limb is below 2^52 again: products by their chain,
// sums and differences (a + 4p − b) by the same chain, so that any result
// is a valid input of any operation (fe.go states the bounds; the kernels
// do what fe.go does, step for step, and give the same field elements). Points are
// in extended coordinates, added to cached ones (Y+X, Y−X, 2Z, 2d·T) by the
// unified formula of Hisil, Wong, Carter and Dawson, complete on Ed25519:
// the identity, doublings and small-order points need no special case.
//
// Why: in a fresh sync of 100k ballots by 10,000 members, voi's
// multiplication was a fifth of the receiver's CPU (each batch of 1,024
// signatures multiplies 1,024 Rᵢ by 128-bit scalars and some 1,000 keys by
// full ones). BenchmarkSum (that batch, `go test ./dag/internal/msm -run
// '^$' -bench 'Sum$'`): voi 4.9–5.1 µs a signature; these kernels with
// unsigned digits 2.2–2.4 µs (3.0 µs when the buckets were gathered limb by
// limb), with signed digits and the aligned frame 1.86–1.99 µs; a batch of
// 256 by one key (BenchmarkCrossover), 2.10–2.20 → 1.30–1.41 µs (2026-12-07).
// An addition whose point has Z = 1 (seven products instead of eight) was
// tried and measured no faster: the kernels are bound by the µops of
// ports 0 and 5 as a whole, not by the products' latency.
//
// # Why unsafe
//
// voi's EdwardsPoint has no accessor for its coordinates, and converting
// through encodings would cost an inversion a point. So fromVoi reads the
// point's memory as four coordinates of five uint64 limbs (voi's 64-bit
// field backend on amd64), carried before use. Nothing is written into a
// voi point: the result is checked here, in this package's own arithmetic.
//
// # The guard and the fallback
//
// Enabled is true only where the CPU has AVX512F and AVX512IFMA
// (golang.org/x/sys/cpu) and a check done once (bridge) passed: voi's point
// is 160 bytes, the points of the bridge's set read through fromVoi
// compress to voi's encodings, and a multiplication of that set (multiples
// of the base point, the identity, points of order 2 and 4, repeats; zero,
// one, 128-bit and full scalars; Shorts with every digit −128, every digit
// 127 and others) equals voi's, each Short taken as the integer it is. Otherwise IsSmallOrderSum
// multiplies with voi: never a different answer, only no speed-up (voi's
// 32-bit field, -tags force32bit on amd64, makes points as large, and the
// bridge refuses them). TestFastPathOnWhereItCan fails where the CPU has
// the instructions and voi its 64-bit layout, and the path is off all the
// same. accumGeneric and sumsGeneric are the kernels in Go, lane by lane:
// the reference TestKernelsMatchGeneric compares the kernels' coordinates
// with, and the code on other CPUs for the tests' sake (IsSmallOrderSum
// does not call it: it would be slower than voi's).
//
// The package is pure: no I/O, no clock, no goroutines.
package msm
