package badgerstore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// Entry data is stored packed: the canonical JSON of envelopes and memory
// blocks is mostly ids, keys and signatures written as text (an id is 73
// bytes of `"sha256:<hex>"` for 32 bytes of hash), and entry bodies are
// kept in the body files (bodyfile.go), which do not compress. Packing writes each such
// string as one token byte and its binary value; unpacking writes the text
// back. The transform is exact for every input (FuzzBadgerPack):
//
//   - Data holding any byte below 0x20 is stored as it is, after the header
//     packRaw. Canonical JSON never holds one (RFC 8785 escapes control
//     characters in strings, and has no whitespace), so these bytes are
//     free to be tokens.
//   - Otherwise, after the header packJSON, bytes of 0x20 and above stand
//     for themselves, and
//     tokID (32 bytes follow) stands for `"sha256:` + 64 lowercase hex + `"`,
//     tokKey (32 bytes) for `"ed25519:` + 43 base64url + `"`,
//     tokSig (64 bytes) for `"` + 86 base64url + `"` after `"sig":`.
//     A string is tokenised only when its text is exactly the one the bytes
//     encode to (lowercase hex; base64url without padding and with zero
//     trailing bits), so that unpacking gives the same bytes back.
const (
	packRaw  = 0x00
	packJSON = 0x01

	tokID  = 0x01
	tokKey = 0x02
	tokSig = 0x03
)

var b64 = base64.RawURLEncoding.Strict()

var (
	idPrefix  = []byte(`"sha256:`)
	keyPrefix = []byte(`"ed25519:`)
	sigKey    = []byte(`"sig":`)
)

const (
	idText  = 8 + 64 + 1 // `"sha256:` hex `"`
	keyText = 9 + 43 + 1 // `"ed25519:` base64url `"`
	sigText = 1 + 86 + 1 // `"` base64url `"`
)

// packedSize bounds the size of pack's output for data.
func packedSize(data []byte) int { return 1 + len(data) }

// pack appends the packed form of data to dst.
func pack(dst, data []byte) []byte {
	if hasControl(data) {
		return append(append(dst, packRaw), data...)
	}
	dst = append(dst, packJSON)
	last := 0 // data[last:] is not yet in dst
	for i := 0; ; {
		j := nextQuote(data, i)
		if j < 0 {
			break
		}
		// Only a quote before an s or an e (an id, a key) or after a
		// colon (a signature) can start a token: most quotes (a key's,
		// a string's closing one) are passed over here.
		if j+1 < len(data) && (data[j+1] == 's' || data[j+1] == 'e' || j > 0 && data[j-1] == ':') {
			if n := packToken(&dst, data, j, last); n > 0 {
				i, last = j+n, j+n
				continue
			}
		}
		i = j + 1
	}
	return append(dst, data[last:]...)
}

// nextQuote returns the index of the first quote in data from i, or -1.
// Most strings of an envelope are short (its keys, small values): the
// first bytes are looked at here, the rest left to bytes.IndexByte, whose
// call costs more than a short string.
func nextQuote(data []byte, i int) int {
	for end := min(i+16, len(data)); i < end; i++ {
		if data[i] == '"' {
			return i
		}
	}
	if i >= len(data) {
		return -1
	}
	if j := bytes.IndexByte(data[i:], '"'); j >= 0 {
		return i + j
	}
	return -1
}

// packToken tokenises the string starting at data[j] (a quote) if it is
// one of the three kinds: it appends data[last:j] and the token to *dst and
// returns the length of the text replaced; 0 if the string is not one.
func packToken(dst *[]byte, data []byte, j, last int) int {
	rest := data[j:]
	var tok byte
	var text int
	var raw [64]byte
	switch {
	case len(rest) >= idText && bytes.HasPrefix(rest, idPrefix) && rest[idText-1] == '"':
		if !decodeLowerHex(raw[:32], rest[len(idPrefix):idText-1]) {
			return 0
		}
		tok, text = tokID, idText
	case len(rest) >= keyText && bytes.HasPrefix(rest, keyPrefix) && rest[keyText-1] == '"':
		if n, err := b64.Decode(raw[:32], rest[len(keyPrefix):keyText-1]); err != nil || n != 32 {
			return 0
		}
		tok, text = tokKey, keyText
	case len(rest) >= sigText && rest[sigText-1] == '"' && j >= len(sigKey) && bytes.Equal(data[j-len(sigKey):j], sigKey):
		if n, err := b64.Decode(raw[:64], rest[1:sigText-1]); err != nil || n != 64 {
			return 0
		}
		tok, text = tokSig, sigText
	default:
		return 0
	}
	*dst = append(append(append(*dst, data[last:j]...), tok), raw[:tokens[tok].size]...)
	return text
}

// hasControl reports whether b holds a byte below 0x20, eight bytes at a
// time: for a word w, (w - 0x20…20) &^ w & 0x80…80 is non-zero exactly
// when some byte of w is below 0x20 (the test is exact for bounds up to
// 0x80).
func hasControl(b []byte) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if (w-lo)&^w&hi != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return true
		}
	}
	return false
}

// hexVal maps a lowercase hex digit to its value and every other byte to
// 0xff.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// decodeLowerHex decodes h, 2·len(dst) lowercase hex digits, into dst; false
// if h holds anything else (an upper-case digit would not come back the
// same from hex.AppendEncode).
func decodeLowerHex(dst, h []byte) bool {
	h = h[:2*len(dst)]
	var bad byte
	for i := range dst {
		pair := h[2*i : 2*i+2 : 2*i+2]
		a, b := hexVal[pair[0]], hexVal[pair[1]]
		bad |= a | b
		dst[i] = a<<4 | b&0x0f
	}
	return bad&0xf0 == 0
}

var errPacked = errors.New("badgerstore: malformed packed entry data")

// tokens describes each token: the text before its value, the size of its
// value, the length of the whole text it stands for, and how the value is
// written as text. (Every text ends with a quote.)
var tokens = [...]struct {
	prefix     []byte
	size, text int
	encode     func(dst, b []byte) []byte
}{
	tokID:  {idPrefix, 32, idText, hex.AppendEncode},
	tokKey: {keyPrefix, 32, keyText, b64.AppendEncode},
	tokSig: {[]byte{'"'}, 64, sigText, b64.AppendEncode},
}

// unpack appends the data that p, pack's output, stands for to dst.
func unpack(dst, p []byte) ([]byte, error) {
	if len(p) == 0 {
		return nil, errPacked
	}
	switch p[0] {
	case packRaw:
		return append(dst, p[1:]...), nil
	case packJSON:
	default:
		return nil, errPacked
	}
	p = p[1:]
	for len(p) > 0 {
		k := 0
		for k < len(p) && p[k] >= 0x20 {
			k++
		}
		dst = append(dst, p[:k]...)
		p = p[k:]
		if len(p) == 0 {
			break
		}
		t := p[0]
		if t == 0 || int(t) >= len(tokens) {
			return nil, errPacked
		}
		tk := tokens[t]
		if len(p) < 1+tk.size {
			return nil, errPacked
		}
		dst = append(dst, tk.prefix...)
		dst = tk.encode(dst, p[1:1+tk.size])
		dst = append(dst, '"')
		p = p[1+tk.size:]
	}
	return dst, nil
}

// unpackedSize returns the size of the data p stands for, without
// unpacking it.
func unpackedSize(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	if p[0] != packJSON {
		return len(p) - 1
	}
	n := 0
	for i := 1; i < len(p); {
		if t := p[i]; t > 0 && int(t) < len(tokens) {
			n, i = n+tokens[t].text, i+1+tokens[t].size
			continue
		}
		n, i = n+1, i+1
	}
	return n
}
