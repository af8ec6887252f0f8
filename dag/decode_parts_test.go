package dag

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"
)

// plainASCII8 against the byte table: every byte value at every position
// of a word of plain bytes, and random words.
func TestPlainASCII8(t *testing.T) {
	word := func(b [8]byte) uint64 { return binary.LittleEndian.Uint64(b[:]) }
	want := func(b [8]byte) bool {
		for _, c := range b {
			if !plainASCII[c] {
				return false
			}
		}
		return true
	}
	for _, fill := range []byte{'a', ' ', '~', 0x7f, '!', '#', '[', ']'} {
		for pos := range 8 {
			for c := range 256 {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(c)
				if got := plainASCII8(word(b)); got != want(b) {
					t.Fatalf("%q: %v, want %v", b[:], got, want(b))
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	interesting := []byte{0, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xff, 'a', 0x21, 0x5b, 0x5d}
	for range 1 << 20 {
		var b [8]byte
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = interesting[r.IntN(len(interesting))]
			} else {
				b[i] = byte(r.Uint32())
			}
		}
		if got := plainASCII8(word(b)); got != want(b) {
			t.Fatalf("%q: %v, want %v", b[:], got, want(b))
		}
	}
}

// decodeB64 accepts exactly what b64 decodes to the same number of bytes,
// and gives the same bytes; decodeID accepts exactly what parseID accepts.
func TestDecodeB64AndID(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=\n\r.\x00\xff"
	for _, n := range []int{32, 64, 1, 2, 3} {
		for range 20000 {
			raw := make([]byte, n)
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			src := []byte(b64.EncodeToString(raw))
			switch r.IntN(3) { // mutate one character, or the length
			case 0:
				src[r.IntN(len(src))] = alphabet[r.IntN(len(alphabet))]
			case 1:
				src = src[:len(src)-1]
			}
			dst := make([]byte, n)
			ok := decodeB64(dst, src)
			want := make([]byte, n+3)
			m, err := b64.Decode(want, src)
			if wantOK := err == nil && m == n && len(src) == (n*8+5)/6; ok != wantOK || ok && string(dst) != string(want[:n]) {
				t.Fatalf("decodeB64(%q) = %v %x, b64: %v %d %x", src, ok, dst, err, m, want[:m])
			}
		}
	}
	hexes := "0123456789abcdefABCDEFgG:x"
	for range 100000 {
		var sum [32]byte
		for i := range sum {
			sum[i] = byte(r.Uint32())
		}
		s := []byte(IDFromDigest(sum).String())
		if r.IntN(2) == 0 {
			s[r.IntN(len(s))] = hexes[r.IntN(len(hexes))]
		}
		var id ID
		ok := decodeID(&id, s)
		want, wantOK := parseID(s)
		if ok != wantOK || id != want {
			t.Fatalf("decodeID(%s) = %v %v, parseID: %v %v", s, ok, id, wantOK, want)
		}
	}
}

// safeInteger against strconv at and around the edges of the safe range.
func TestSafeInteger(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "9007199254740991", "-9007199254740991", "9007199254740992",
		"-9007199254740992", "9999999999999999", "10000000000000000", "99999999999999999999999", "123456789012345"} {
		n, err := strconv.ParseInt(s, 10, 64)
		want := err == nil && n <= MaxSafeInteger && n >= -MaxSafeInteger
		if got := safeInteger([]byte(s)); got != want {
			t.Errorf("safeInteger(%s) = %v, want %v", s, got, want)
		}
	}
}
