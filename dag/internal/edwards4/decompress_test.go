package edwards4

import (
	"bytes"
	"errors"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	"golang.org/x/sys/cpu"
)

// encodingOf compresses p.
func encodingOf(p *curve.EdwardsPoint) [32]byte {
	var c curve.CompressedEdwardsY
	c.SetEdwardsPoint(p)
	return c
}

// randomPoint is a random multiple of the base point.
func randomPoint(r *rand.Rand) curve.EdwardsPoint {
	var b [32]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	var s scalar.Scalar
	if _, err := s.SetBytesModOrder(b[:]); err != nil {
		panic(err)
	}
	var p curve.EdwardsPoint
	p.MulBasepoint(curve.ED25519_BASEPOINT_TABLE, &s)
	return p
}

// torsion returns the eight points of order dividing 8: [ℓ]P is in the
// torsion subgroup for any P, computed as [ℓ-1]P + P.
func torsion(t *testing.T) []curve.EdwardsPoint {
	pts, err := torsionPoints()
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

func torsionPoints() ([]curve.EdwardsPoint, error) {
	ell := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 252), mustBig("27742317777372353535851937790883648493"))
	lm1 := bytesOf(new(big.Int).Sub(ell, big.NewInt(1)))
	var s scalar.Scalar
	if _, err := s.SetCanonicalBytes(lm1[:]); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(7, 8))
	for tries := 0; tries < 64; tries++ {
		// A point outside the prime-order subgroup: a random valid encoding.
		b := randBytes(r)
		var p curve.EdwardsPoint
		c := curve.CompressedEdwardsY(b)
		if _, err := p.SetCompressedY(&c); err != nil {
			continue
		}
		var q curve.EdwardsPoint
		q.Mul(&p, &s)
		q.Add(&q, &p)
		var q4 curve.EdwardsPoint
		q4.Add(&q, &q)
		q4.Add(&q4, &q4)
		if q4.IsIdentity() {
			continue // order below 8
		}
		pts := make([]curve.EdwardsPoint, 8)
		var acc curve.EdwardsPoint
		acc.Identity()
		for k := range pts {
			pts[k].Set(&acc)
			acc.Add(&acc, &q)
		}
		if !acc.IsIdentity() {
			return nil, errors.New("torsion point of order > 8")
		}
		return pts, nil
	}
	return nil, errors.New("no point of order 8 found")
}

func mustBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// specialEncodings: small-order points with both sign bits, their
// non-canonical y+p forms, y in [0, 19) and y+p, y = p-1, p, 2^255-1,
// 2^255-19-1 etc., each with both sign bits.
func specialEncodings(t *testing.T) [][32]byte {
	var out [][32]byte
	add := func(b [32]byte) {
		b[31] &= 0x7f
		out = append(out, b)
		b[31] |= 0x80
		out = append(out, b)
	}
	for _, p := range torsion(t) {
		add(encodingOf(&p))
	}
	one := big.NewInt(1)
	two255 := new(big.Int).Lsh(one, 255)
	for y := int64(0); y < 19; y++ {
		add(bytesOf(big.NewInt(y)))
		add(bytesOf(new(big.Int).Add(bigP, big.NewInt(y)))) // y + p < 2^255
	}
	for _, v := range []*big.Int{
		new(big.Int).Sub(bigP, one), new(big.Int).Sub(bigP, big.NewInt(2)),
		new(big.Int).Sub(two255, one), new(big.Int).Lsh(one, 254),
	} {
		add(bytesOf(v))
	}
	out = append(out, craftedEncodings()...)
	return out
}

// craftedEncodings are points whose x or x·y is tiny (the ones decompress4
// hands to voi, whose X or T may then be non-reduced) and whose x or x·y
// is tiny but for a large limb above.
func craftedEncodings() [][32]byte {
	one := big.NewInt(1)
	d := new(big.Int).ModInverse(big.NewInt(121666), bigP)
	d.Mul(d, big.NewInt(-121665)).Mod(d, bigP)
	var out [][32]byte
	emit := func(x, y *big.Int) {
		// On the curve: -x² + y² = 1 + d·x²·y².
		x2 := new(big.Int).Mul(x, x)
		y2 := new(big.Int).Mul(y, y)
		lhs := new(big.Int).Sub(y2, x2)
		rhs := new(big.Int).Mul(d, new(big.Int).Mul(x2, y2))
		rhs.Add(rhs, one)
		if new(big.Int).Sub(lhs, rhs).Mod(new(big.Int).Sub(lhs, rhs), bigP).Sign() != 0 {
			panic("crafted point off the curve")
		}
		b := bytesOf(new(big.Int).Mod(y, bigP))
		if x.Bit(0) == 1 {
			b[31] |= 0x80
		}
		out = append(out, b)
	}
	smalls := []*big.Int{}
	for k := int64(1); k < 40; k++ {
		smalls = append(smalls, big.NewInt(k), new(big.Int).Lsh(big.NewInt(k), 60), new(big.Int).Lsh(big.NewInt(k), 200))
	}
	for _, x := range smalls {
		// Tiny x: y² = (1 + x²) / (1 - d·x²).
		x2 := new(big.Int).Mul(x, x)
		num := new(big.Int).Add(one, x2)
		den := new(big.Int).Sub(one, new(big.Int).Mul(d, x2))
		den.Mod(den, bigP).ModInverse(den, bigP)
		y2 := num.Mul(num, den).Mod(num, bigP)
		if y := new(big.Int).ModSqrt(y2, bigP); y != nil {
			emit(x, y)
			emit(new(big.Int).Sub(bigP, x), y)
		}
	}
	for _, tt := range smalls {
		// Tiny t = x·y: y⁴ - (1 + d·t²)·y² - t² = 0.
		t2 := new(big.Int).Mul(tt, tt)
		bq := new(big.Int).Add(one, new(big.Int).Mul(d, t2))
		disc := new(big.Int).Mul(bq, bq)
		disc.Add(disc, new(big.Int).Lsh(t2, 2)).Mod(disc, bigP)
		sq := new(big.Int).ModSqrt(disc, bigP)
		if sq == nil {
			continue
		}
		half := new(big.Int).ModInverse(big.NewInt(2), bigP)
		for _, s := range []*big.Int{sq, new(big.Int).Neg(sq)} {
			y2 := new(big.Int).Add(bq, s)
			y2.Mul(y2, half).Mod(y2, bigP)
			y := new(big.Int).ModSqrt(y2, bigP)
			if y == nil {
				continue
			}
			x := new(big.Int).ModInverse(y, bigP)
			x.Mul(x, tt).Mod(x, bigP)
			emit(x, y)
			emit(new(big.Int).Sub(bigP, x), y)
		}
	}
	return out
}

// checkAgainstVoi decodes encs with DecompressEach and compares each
// result with voi's SetCompressedY: same verdict, and for points the same
// point, compression and memory.
func checkAgainstVoi(t *testing.T, encs [][32]byte) (valid int) {
	t.Helper()
	n := len(encs)
	in := make([][]byte, n)
	for i := range encs {
		in[i] = encs[i][:]
	}
	got := make([]curve.EdwardsPoint, n)
	ok := make([]bool, n)
	DecompressEach(got, ok, in)
	all := make([]curve.EdwardsPoint, n)
	allOK := Decompress(all, in)
	wantAll := true
	for i := range encs {
		var want curve.EdwardsPoint
		c := curve.CompressedEdwardsY(encs[i])
		_, err := want.SetCompressedY(&c)
		wantAll = wantAll && err == nil
		if ok[i] != (err == nil) {
			t.Fatalf("%x: ok = %v, voi err = %v", encs[i], ok[i], err)
		}
		if !ok[i] {
			continue
		}
		valid++
		samePoint(t, encs[i], &got[i], &want)
	}
	if allOK != wantAll {
		t.Fatalf("Decompress = %v, want %v", allOK, wantAll)
	}
	if allOK {
		for i := range encs {
			var want curve.EdwardsPoint
			c := curve.CompressedEdwardsY(encs[i])
			want.SetCompressedY(&c)
			samePoint(t, encs[i], &all[i], &want)
		}
	}
	return valid
}

func samePoint(t *testing.T, enc [32]byte, got, want *curve.EdwardsPoint) {
	t.Helper()
	if got.Equal(want) != 1 {
		t.Fatalf("%x: points differ", enc)
	}
	if encodingOf(got) != encodingOf(want) {
		t.Fatalf("%x: compressions differ", enc)
	}
	g := (*[160]byte)(unsafe.Pointer(got))
	w := (*[160]byte)(unsafe.Pointer(want))
	if !bytes.Equal(g[:], w[:]) {
		t.Fatalf("%x: memory differs:\n got %x\nwant %x", enc, g[:], w[:])
	}
}

// layout64 reports whether voi's points are laid out as this package
// writes them, checked apart from bridge: the base point decoded here and
// by voi, compared as memory. It is false with voi's 32-bit field backend
// (other architectures, or -tags force32bit on amd64).
func layout64() bool {
	if unsafe.Sizeof(curve.EdwardsPoint{}) != unsafe.Sizeof(pointLimbs{}) {
		return false
	}
	var enc [4][32]byte
	for j := range enc {
		enc[j] = encodingOf(curve.ED25519_BASEPOINT_POINT)
	}
	var out [4]pointLimbs
	if decompress4(&enc, &out)[0] != laneOK {
		return false
	}
	var want curve.EdwardsPoint
	c := curve.CompressedEdwardsY(enc[0])
	if _, err := want.SetCompressedY(&c); err != nil {
		return false
	}
	return *(*pointLimbs)(unsafe.Pointer(&want)) == out[0]
}

// The fast path is on exactly when the kernels run here and voi's layout
// is the one written; with -tags force32bit on amd64 (voi's 32-bit field,
// also 160 bytes) the bridge must refuse.
func TestBridgeChecked(t *testing.T) {
	want := hasAsm && layout64()
	if got := bridge(); got != want {
		t.Fatalf("bridge() = %v, want %v (kernels %v, 64-bit layout %v)", got, want, hasAsm, layout64())
	}
	if !want {
		t.Logf("fast path off here (kernels %v, 64-bit layout %v): every point goes to voi", hasAsm, layout64())
	}
}

// On amd64 with AVX2, without -tags purego and with voi's 64-bit layout,
// the fast path must be on: kernels in use, bridge passed, nothing forcing
// voi. TestBridgeChecked alone would pass with a fast path switched off by
// mistake (hasAsm false everywhere, say), since it derives its expectation
// from hasAsm; this test learns what the machine has on its own, from the
// architecture, the CPU and the build tag.
func TestFastPathOnWhereItCan(t *testing.T) {
	if runtime.GOARCH != "amd64" || !cpu.X86.HasAVX2 || puregoTag {
		t.Skipf("no kernels for %s (AVX2 %v, purego %v)", runtime.GOARCH, cpu.X86.HasAVX2, puregoTag)
	}
	if unsafe.Sizeof(curve.EdwardsPoint{}) != unsafe.Sizeof(pointLimbs{}) || !layout64() {
		t.Skip("voi's 32-bit field backend (-tags force32bit): its points are not written here")
	}
	if !hasAsm {
		t.Fatal("the AVX2 kernels are built and the CPU has AVX2, yet hasAsm is false")
	}
	if !bridge() {
		t.Fatal("kernels and voi's 64-bit layout are here, yet the bridge check refused the fast path")
	}
	if forceVoi {
		t.Fatal("forceVoi is set outside a test that restores it")
	}
}

func TestDecompressSpecial(t *testing.T) {
	encs := specialEncodings(t)
	if valid := checkAgainstVoi(t, encs); valid < 16 {
		t.Fatalf("only %d special encodings decoded", valid)
	}
	// Each special encoding in every lane position among random points.
	checkInEveryLane(t, encs, 4, rand.New(rand.NewPCG(9, 10)))
}

// checkInEveryLane decodes, for each of encs and each lane of a pass of
// width lanes, a batch of random points with that encoding in that lane,
// against voi.
func checkInEveryLane(t *testing.T, encs [][32]byte, lanes int, r *rand.Rand) {
	t.Helper()
	for _, e := range encs {
		for lane := 0; lane < lanes; lane++ {
			batch := make([][32]byte, lanes)
			for j := range batch {
				p := randomPoint(r)
				batch[j] = encodingOf(&p)
			}
			batch[lane] = e
			checkAgainstVoi(t, batch)
		}
	}
}

func TestDecompressRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var encs [][32]byte
	for k := 0; k < 400; k++ {
		p := randomPoint(r)
		e := encodingOf(&p)
		if k%3 == 0 {
			e[31] ^= 0x80 // the negated point
		}
		encs = append(encs, e)
		encs = append(encs, randBytes(r)) // mostly invalid
	}
	r.Shuffle(len(encs), func(i, j int) { encs[i], encs[j] = encs[j], encs[i] })
	valid := checkAgainstVoi(t, encs)
	if valid < 400 || valid == len(encs) {
		t.Fatalf("%d of %d decoded: the mix is not what the test means", valid, len(encs))
	}
	// Every batch length 1..9, so that tails take each path.
	for n := 1; n <= 9; n++ {
		checkAgainstVoi(t, encs[:n])
	}
}

func TestDecompressGenericAndFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	encs := specialEncodings(t)
	for k := 0; k < 60; k++ {
		p := randomPoint(r)
		encs = append(encs, encodingOf(&p), randBytes(r))
	}
	// The generic arithmetic through decompress4, lane by lane.
	withGeneric(func() {
		for k := 0; k+4 <= len(encs); k += 4 {
			var in [4][32]byte
			copy(in[:], encs[k:k+4])
			var out [4]pointLimbs
			st := decompress4(&in, &out)
			for j := 0; j < 4; j++ {
				var want curve.EdwardsPoint
				c := curve.CompressedEdwardsY(in[j])
				_, err := want.SetCompressedY(&c)
				if (err == nil) != (st[j] != laneInvalid) {
					t.Fatalf("generic %x: status %d, voi err %v", in[j], st[j], err)
				}
				if st[j] == laneOK && layout64() {
					var got curve.EdwardsPoint
					writePoint(&got, &out[j])
					samePoint(t, in[j], &got, &want)
				}
			}
		}
	})
	forceVoi = true
	defer func() { forceVoi = false }()
	checkAgainstVoi(t, encs)
}

func TestDecompressLengths(t *testing.T) {
	p := randomPoint(rand.New(rand.NewPCG(15, 16)))
	good := encodingOf(&p)
	in := [][]byte{good[:], good[:31], append(good[:], 0), good[:], nil}
	dst := make([]curve.EdwardsPoint, len(in))
	ok := make([]bool, len(in))
	DecompressEach(dst, ok, in)
	if want := []bool{true, false, false, true, false}; !equalBools(ok, want) {
		t.Fatalf("ok = %v want %v", ok, want)
	}
	if Decompress(dst, in) {
		t.Fatal("Decompress accepted a short encoding")
	}
	if !Decompress(dst[:1], in[:1]) {
		t.Fatal("Decompress refused a point")
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCraftedAreDelegated(t *testing.T) {
	crafted := craftedEncodings()
	if len(crafted) < 40 {
		t.Fatalf("only %d crafted points", len(crafted))
	}
	delegated := 0
	for k := 0; k+4 <= len(crafted); k += 4 {
		var in [4][32]byte
		copy(in[:], crafted[k:k+4])
		var out [4]pointLimbs
		st := decompress4(&in, &out)
		for j := range st {
			if st[j] == laneInvalid {
				t.Fatalf("%x refused", in[j])
			}
			if st[j] == laneDelegate {
				delegated++
			}
		}
	}
	// x or x·y below 2^24·2^204 puts a limb under 2^24 for all but the
	// 2^200 multiples with large other limbs: most are delegated.
	if delegated < len(crafted)/2 {
		t.Fatalf("%d of %d crafted points delegated", delegated, len(crafted))
	}
}

// withFourLanes runs f with passes four lanes wide only.
func withFourLanes(f func()) {
	bridge8()
	saved := bridge8OK
	bridge8OK = false
	defer func() { bridge8OK = saved }()
	f()
}
