package dag

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	"golang.org/x/text/unicode/norm"
)

// MaxSafeInteger is the largest magnitude a number may have in witan's
// profile of canonical JSON: 2^53-1, the range in which every JSON
// implementation reads an integer exactly (RFC 8785 §3.2.2.3, I-JSON).
const MaxSafeInteger = 1<<53 - 1

// MaxDepth bounds how deeply arrays and objects may nest in input we accept.
// It keeps the scanner's explicit stack, and every decoder after it, small.
const MaxDepth = 64

// ErrNotCanonical is wrapped by the schema errors of Canonicalize and
// CheckCanonical.
var ErrNotCanonical = errors.New("dag: not canonical json")

// Canonicalize returns the RFC 8785 (JCS) form of the JSON text b under
// witan's profile of 30k §4:
//
//   - b is one JSON value, valid UTF-8, with no lone surrogate escapes;
//   - no object has a duplicate key (after unescaping);
//   - every string, key or value, is Unicode NFC;
//   - every number is an integer written without fraction or exponent, with
//     magnitude at most MaxSafeInteger, and not "-0";
//   - nesting is at most MaxDepth.
//
// Anything else is a *ProtocolError with code schema. The canonical bytes
// themselves come from github.com/gowebpki/jcs, except that input the
// checker finds already canonical is returned as it is (the result then
// shares b's memory): the common case on ingest costs one pass.
func Canonicalize(b []byte) ([]byte, error) {
	return canonicalize(b, profileWitan)
}

func canonicalize(b []byte, p profile) ([]byte, error) {
	canon, err := check(b, p)
	if err != nil {
		return nil, err
	}
	if canon {
		return b, nil
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, schemaErr("jcs: %v", err)
	}
	return out, nil
}

// CanonicalizeRFC8785 is Canonicalize without witan's profile: any JSON
// number is allowed (and serialised as ES6 does) and strings need not be NFC.
// Duplicate keys, invalid UTF-8 and lone surrogates are still refused. It
// exists for the RFC 8785 reference data and for foreign documents; entries
// and objects use Canonicalize.
func CanonicalizeRFC8785(b []byte) ([]byte, error) {
	return canonicalize(b, profileRFC8785)
}

// IsCanonical reports whether b is already exactly its own canonical form
// under witan's profile. It is the fast path of ingest: bytes that arrive
// canonical are hashed as they are.
func IsCanonical(b []byte) bool {
	canon, err := check(b, profileWitan)
	return err == nil && canon
}

// Marshal encodes v with encoding/json and returns its canonical form. v's
// strings must already be valid UTF-8 and NFC (encoding/json would silently
// replace invalid UTF-8; Canonicalize then refuses non-NFC text).
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, schemaErr("marshal: %v", err)
	}
	return Canonicalize(raw)
}

// HashJSON returns the canonical form of v and its ID, the SHA-256 of those
// bytes: how every JSON object of 30k §4 is named.
func HashJSON(v any) (ID, []byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return ID{}, nil, err
	}
	return Sum(b), b, nil
}

func schemaErr(format string, args ...any) error {
	return &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf(format, args...), Err: ErrNotCanonical}
}

type profile int

const (
	profileRFC8785 profile = iota
	profileWitan
)

// scanner is a strict, non-recursive JSON checker. encoding/json cannot be
// used for this: it accepts duplicate keys and silently replaces invalid
// UTF-8 and lone surrogates.
//
// While it checks, it also decides whether b is already canonical: no white
// space, members in UTF-16 code-unit order, only the escapes RFC 8785 writes,
// numbers in their shortest form.
type scanner struct {
	b     []byte
	i     int
	prof  profile
	buf   []byte // scratch for unescaped strings
	canon bool
	// all makes every object frame keep all its keys. Without it a frame
	// keeps only its last key, which is enough while keys are sorted
	// (strictly increasing keys cannot repeat); the first key out of order
	// stops the scan with errUnsorted, and check scans again with all set.
	// Canonical input, the common case, is then checked without
	// allocating.
	all bool
}

// errUnsorted stops a scan without all at the first key out of order.
var errUnsorted = errors.New("dag: keys out of order")

type frame struct {
	object  bool
	sorted  bool // every key so far was greater than the one before
	hasLast bool
	last    []byte   // the last key (without all)
	keys    [][]byte // the keys so far, for duplicate detection (with all)
	set     map[string]struct{}
}

// addKey records k and reports whether it was new. k must stay unchanged
// for the life of the frame. Without all, a key out of order is
// errUnsorted.
func (s *scanner) addKey(f *frame, k []byte) (bool, error) {
	if !s.all {
		if f.hasLast && compareUTF16(f.last, k) >= 0 {
			return false, errUnsorted
		}
		f.last, f.hasLast = k, true
		return true, nil
	}
	return f.addKey(k), nil
}

// addKey records k and reports whether it was new. k must stay unchanged
// for the life of the frame.
func (f *frame) addKey(k []byte) bool {
	if f.sorted && (len(f.keys) == 0 || compareUTF16(f.keys[len(f.keys)-1], k) < 0) {
		if f.keys == nil {
			f.keys = make([][]byte, 0, 8)
		}
		f.keys = append(f.keys, k) // strictly increasing: cannot be a duplicate
		return true
	}
	f.sorted = false
	if f.set == nil {
		f.set = make(map[string]struct{}, len(f.keys)+1)
		for _, x := range f.keys {
			f.set[string(x)] = struct{}{}
		}
	}
	if _, dup := f.set[string(k)]; dup {
		return false
	}
	f.set[string(k)] = struct{}{}
	f.keys = append(f.keys, k)
	return true
}

// compareUTF16 compares UTF-8 strings by UTF-16 code units, the order
// RFC 8785 sorts members in. It differs from byte order only between
// supplementary characters and U+E000..U+FFFF, so it compares bytes and
// looks at runes only where the strings first differ.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b)
	}
	for i > 0 && a[i]&0xC0 == 0x80 { // back to the start of the rune
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmpUnit(ra) - cmpUnit(rb)
}

// cmpUnit maps a rune to a value whose order is that of its first UTF-16
// code unit (ties between two supplementary runes are broken by the rune).
func cmpUnit(r rune) int {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return int(hi)<<21 | int(r)
	}
	return int(r) << 21
}

func check(b []byte, p profile) (canonical bool, err error) {
	s := scanner{b: b, prof: p, canon: true}
	err = s.run()
	if err == errUnsorted { // not canonical; scan again to find duplicates
		s = scanner{b: b, prof: p, canon: true, all: true}
		err = s.run()
	}
	return s.canon && err == nil, err
}

func (s *scanner) errf(format string, args ...any) error {
	return schemaErr("at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.canon = false
		default:
			return
		}
	}
}

// run checks that s.b is exactly one JSON value, with white space around
// it allowed.
func (s *scanner) run() error {
	if err := s.value(0); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.errf("trailing data after the value")
	}
	return nil
}

// value checks one JSON value at s.i (after white space) and leaves s.i
// just after it. outer is the number of arrays and objects the value is
// nested in, which count towards MaxDepth.
func (s *scanner) value(outer int) error {
	var stackBuf [8]frame
	stack := stackBuf[:0]
	s.ws()
	// want: what the grammar expects next.
	// 0 value, 1 key or '}' (first), 2 ',' or close, 3 value or ']' (first)
	want := 0
	for {
		if want == 2 && len(stack) == 0 {
			return nil
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.errf("unexpected end of input")
		}
		c := s.b[s.i]
		switch want {
		case 1, 4: // object: key (or '}' if first)
			if want == 1 && c == '}' {
				s.i++
				stack = stack[:len(stack)-1]
				want = 2
				break
			}
			if c != '"' {
				return s.errf("expected object key")
			}
			key, escaped, err := s.strBytes()
			if err != nil {
				return err
			}
			if escaped { // key aliases the scratch buffer
				key = append([]byte(nil), key...)
			}
			top := &stack[len(stack)-1]
			if isNew, err := s.addKey(top, key); err != nil {
				return err
			} else if !isNew {
				return s.errf("duplicate key %q", key)
			}
			if !top.sorted {
				s.canon = false
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return s.errf("expected ':'")
			}
			s.i++
			want = 0
			continue
		case 2: // after a value inside a container
			top := stack[len(stack)-1]
			switch {
			case c == ',':
				s.i++
				if top.object {
					want = 4
				} else {
					want = 0
				}
			case c == '}' && top.object, c == ']' && !top.object:
				s.i++
				stack = stack[:len(stack)-1]
				want = 2
			default:
				return s.errf("expected ',' or close")
			}
			continue
		case 3: // first element of an array or ']'
			if c == ']' {
				s.i++
				stack = stack[:len(stack)-1]
				want = 2
				continue
			}
			want = 0
		}
		if want != 0 {
			continue
		}
		// a value
		switch {
		case c == '{' || c == '[':
			if outer+len(stack) >= MaxDepth {
				return s.errf("nesting deeper than %d", MaxDepth)
			}
			s.i++
			if c == '{' {
				stack = append(stack, frame{object: true, sorted: true})
				want = 1
			} else {
				stack = append(stack, frame{})
				want = 3
			}
			continue
		case c == '"':
			if _, _, err := s.strBytes(); err != nil {
				return err
			}
		case c == 't':
			if err := s.lit("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.lit("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.lit("null"); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if err := s.num(); err != nil {
				return err
			}
		default:
			return s.errf("unexpected character %q", c)
		}
		want = 2
	}
}

func (s *scanner) lit(w string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return s.errf("invalid literal")
	}
	s.i += len(w)
	return nil
}

func (s *scanner) num() error {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return s.errf("bad number")
	}
	switch {
	case s.b[s.i] == '0':
		s.i++
	case s.b[s.i] >= '1' && s.b[s.i] <= '9':
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return s.errf("bad number")
	}
	integer := true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		integer = false
		s.i++
		n := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == n {
			return s.errf("bad number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		integer = false
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		n := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == n {
			return s.errf("bad number")
		}
	}
	if s.prof != profileWitan {
		if !integer || string(s.b[start:s.i]) == "-0" {
			s.canon = false // let jcs write the ES6 form
		}
		return nil
	}
	text := s.b[start:s.i]
	if !integer {
		return schemaErr("number %s is not an integer (30k uses integers only)", text)
	}
	if string(text) == "-0" {
		return schemaErr("number -0 is not allowed")
	}
	if !safeInteger(text) {
		return schemaErr("integer %s is outside ±(2^53-1)", text)
	}
	return nil
}

// safeInteger reports whether text, an integer in JSON's grammar (no
// leading zero), has magnitude at most MaxSafeInteger. It reads the digits
// itself rather than through strconv so that the common case does not
// copy text into a string.
func safeInteger(text []byte) bool {
	if text[0] == '-' {
		text = text[1:]
	}
	if len(text) > len("9007199254740991") { // MaxSafeInteger
		return false
	}
	var n uint64
	for _, c := range text {
		n = n*10 + uint64(c-'0')
	}
	return n <= MaxSafeInteger
}

// strBytes scans a string at s.i and returns its unescaped value without
// copying: a slice of the input when the string has no escape, else of the
// scanner's scratch buffer (escaped is then true, and the value is valid
// only until the next call).
func (s *scanner) strBytes() (v []byte, escaped bool, err error) {
	s.i++ // opening quote
	start := s.i
	b, i := s.b, s.i
	for i+8 <= len(b) && plainASCII8(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && plainASCII[b[i]] {
		i++
	}
	s.i = i
	if i < len(b) && b[i] == '"' {
		// The common case: printable ASCII without escapes, which is NFC
		// and needs no copy.
		s.i++
		return b[start:i], false, nil
	}
	s.buf = append(s.buf[:0], b[start:i]...)
	escaped = false
	for {
		if s.i >= len(s.b) {
			return nil, false, s.errf("unterminated string")
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			v = s.buf
			if !escaped {
				v = s.b[start : s.i-1]
			}
			if s.prof == profileWitan && !norm.NFC.IsNormal(v) {
				return nil, false, schemaErr("string %q is not Unicode NFC", truncate(string(v)))
			}
			return v, escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return nil, false, s.errf("unterminated escape")
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\':
				s.buf = append(s.buf, e)
			case '/':
				s.buf = append(s.buf, e)
				s.canon = false
			case 'b':
				s.buf = append(s.buf, '\b')
			case 'f':
				s.buf = append(s.buf, '\f')
			case 'n':
				s.buf = append(s.buf, '\n')
			case 'r':
				s.buf = append(s.buf, '\r')
			case 't':
				s.buf = append(s.buf, '\t')
			case 'u':
				at := s.i
				r, err := s.hex4()
				if err != nil {
					return nil, false, err
				}
				if !canonicalUEscape(r, s.b[at:at+4]) {
					s.canon = false
				}
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 || s.i+6 > len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
						return nil, false, s.errf("lone surrogate \\u%04x", r)
					}
					s.i += 2
					r2, err := s.hex4()
					if err != nil {
						return nil, false, err
					}
					d := utf16.DecodeRune(r, r2)
					if d == utf8.RuneError {
						return nil, false, s.errf("lone surrogate \\u%04x", r)
					}
					r = d
				}
				s.buf = utf8.AppendRune(s.buf, r)
			default:
				return nil, false, s.errf("invalid escape \\%c", e)
			}
		case c < 0x20:
			return nil, false, s.errf("control character in string")
		case c < utf8.RuneSelf:
			s.buf = append(s.buf, c)
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, false, s.errf("invalid UTF-8")
			}
			s.buf = append(s.buf, s.b[s.i:s.i+n]...)
			s.i += n
		}
	}
}

// plainASCII marks the bytes a string holds as they are: printable ASCII
// other than '"' and '\\'.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainASCII8 reports whether the eight bytes of x (little-endian) are all
// plainASCII. A byte at or above 0x80 shows in x&highs. When there is none,
// x - 0x20*ones sets the high bit of some byte exactly when some byte is
// below 0x20: the lowest such byte borrows and is flagged, and a byte at or
// above 0x20 below it neither borrows nor is flagged (bytes above a
// flagged one may be flagged too, which changes no answer). Likewise
// q - ones flags a zero byte of q = x^('"'*ones), that is a '"' in x, and
// bs - ones a '\\'.
func plainASCII8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	q := x ^ '"'*ones
	bs := x ^ '\\'*ones
	t := (x - 0x20*ones) | (q - ones) | (bs - ones)
	return (t|x)&highs == 0
}

// canonicalUEscape reports whether RFC 8785 writes rune r as the \u escape
// esc: only control characters without a short escape, in lower-case hex.
func canonicalUEscape(r rune, esc []byte) bool {
	switch r {
	case '\b', '\t', '\n', '\f', '\r':
		return false
	}
	if r >= 0x20 {
		return false
	}
	for _, c := range esc {
		if c >= 'A' && c <= 'F' {
			return false
		}
	}
	return true
}

func (s *scanner) hex4() (rune, error) {
	if s.i+4 > len(s.b) {
		return 0, s.errf("short \\u escape")
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, s.errf("bad \\u escape")
		}
	}
	s.i += 4
	return r, nil
}

// AppendString appends s as a JSON string in its RFC 8785 form: only '"',
// '\\' and control characters are escaped (the short escapes where JSON has
// them, else \u00xx in lower case); everything else is written as UTF-8. s
// must be valid UTF-8. It is the building block of hand-rolled canonical
// encoders on hot paths (NodeHash); a test keeps it equal to jcs.
func AppendString(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xf])
		}
	}
	return append(dst, '"')
}
