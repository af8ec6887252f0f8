package dag

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
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

// CheckTimestamp's shortcut (plainUTC) accepts only what time.Parse
// accepts: every month and day around the edges of months and leap years,
// every hour, minute and second at and past their ends, fractions, and
// single-character changes of valid times.
func TestPlainUTC(t *testing.T) {
	parses := func(ts string) bool {
		_, err := time.Parse(time.RFC3339Nano, ts)
		return err == nil
	}
	check := func(ts string) {
		t.Helper()
		if plainUTC(ts) && !parses(ts) {
			t.Fatalf("plainUTC(%q) but time.Parse refuses it", ts)
		}
		if got, want := CheckTimestamp(ts) == nil, parses(ts) && ts[len(ts)-1] == 'Z' && len(ts) >= 20; got != want {
			t.Fatalf("CheckTimestamp(%q) accepts: %v, want %v", ts, got, want)
		}
	}
	accepted := 0
	for _, year := range []int{0, 1, 4, 100, 400, 1900, 2000, 2024, 2026, 2100, 9999} {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				ts := fmt.Sprintf("%04d-%02d-%02dT12:34:56Z", year, month, day)
				check(ts)
				if plainUTC(ts) {
					accepted++
				}
			}
		}
	}
	for h := 0; h <= 25; h++ {
		for m := 0; m <= 61; m++ {
			for _, s := range []int{0, 59, 60, 61, 99} {
				check(fmt.Sprintf("2026-02-28T%02d:%02d:%02dZ", h, m, s))
			}
		}
	}
	for _, ts := range []string{"2026-09-21T12:00:00.Z", "2026-09-21T12:00:00.5Z", "2026-09-21T12:00:00.123456789Z",
		"2026-09-21T12:00:00.1234567890123Z", "2026-09-21T12:00:00,5Z", "2026-09-21T12:00:00.5xZ", "2026-09-21T12:00:00ZZ",
		"2026-09-21t12:00:00Z", "2026-09-21T12:00:00+00:00", "+026-09-21T12:00:00Z", "-026-09-21T12:00:00Z", "2026-9-21T12:00:00Z"} {
		check(ts)
	}
	r := rand.New(rand.NewPCG(5, 6))
	chars := "0123456789-T:.Z+ zt/"
	for range 200000 {
		b := []byte("2024-02-29T23:59:59.999Z")
		for range 1 + r.IntN(2) {
			b[r.IntN(len(b))] = chars[r.IntN(len(chars))]
		}
		check(string(b))
	}
	if accepted < 11*12*28 {
		t.Fatalf("plainUTC accepted only %d dates", accepted)
	}
}

// hex8 against lowerHex: every byte value at every position of a word of
// hex digits.
func TestHex8(t *testing.T) {
	for _, fill := range []string{"01234567", "89abcdef", "fedcba98", "00000000", "ffffffff"} {
		for pos := range 8 {
			for c := range 256 {
				b := []byte(fill)
				b[pos] = byte(c)
				got, ok := hex8(binary.LittleEndian.Uint64(b))
				var want [4]byte
				wantOK := true
				for i := range want {
					hi, ok1 := lowerHex(b[2*i])
					lo, ok2 := lowerHex(b[2*i+1])
					wantOK = wantOK && ok1 && ok2
					want[i] = hi<<4 | lo
				}
				if ok != wantOK || ok && got != binary.LittleEndian.Uint32(want[:]) {
					t.Fatalf("hex8(%q) = %08x %v, want %x %v", b, got, ok, want, wantOK)
				}
			}
		}
	}
}
