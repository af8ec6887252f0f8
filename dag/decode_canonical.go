package dag

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
)

// The ingest path's decoder. Peers send envelopes in canonical form, and a
// canonical envelope is one fixed sequence of bytes with holes: its eight
// members in RFC 8785 order, no white space, its ids, key and signature in
// their only spelling. decodeCanonical reads that sequence in one pass,
// checking the general grammar only inside the body, and gives up at the
// first byte that does not fit; DecodeSigned then runs the general decoder
// (decodeGeneral), which accepts any spelling and says what is wrong. So
// decodeCanonical never refuses anything and never words an error: it only
// has to accept nothing that decodeGeneral refuses, and return exactly what
// decodeGeneral would. The differential tests (TestPropDecodeSigned,
// FuzzDecodeEnvelope) hold the two against a reference decoder.

// envelopeBlock is an Envelope together with room for its signature and
// for the parents of most envelopes, so that one allocation holds them (ts,
// a string, is the only other).
type envelopeBlock struct {
	env     Envelope
	sig     [64]byte
	parents [2]ID
}

// The fixed parts of a canonical envelope, in order.
const (
	cAuthor  = `{"author":"`
	cBody    = `","body":`
	cParents = `,"parents":[`
	cSession = `],"session":"`
	cSig     = `","sig":"`
	cTS      = `","ts":"`
	cType    = `","type":"`
	cV       = `","v":"` + ProtocolVersion + `"}`
)

// idLen is the length of an id's string form, "sha256:" and 64 hex digits.
const idLen = len(Prefix) + 64

// decodeCanonical decodes b if it is a canonical, valid envelope, and
// reports false otherwise (b may still be valid: decodeGeneral decides).
func decodeCanonical(b []byte) (SignedEnvelope, bool) {
	p, ok := lit(b, 0, cAuthor)
	if !ok || p+len(KeyPrefix)+43 > len(b) {
		return SignedEnvelope{}, false
	}
	var author Key
	if string(b[p:p+len(KeyPrefix)]) != KeyPrefix || !decodeB64(author.pub[:], b[p+len(KeyPrefix):p+len(KeyPrefix)+43]) {
		return SignedEnvelope{}, false
	}
	author.ok = true
	if p, ok = lit(b, p+len(KeyPrefix)+43, cBody); !ok || p >= len(b) || b[p] != '{' {
		return SignedEnvelope{}, false
	}
	// The body is the one part with no fixed shape: the general checker reads
	// it, one level deep (MaxDepth counts the envelope), and must find it
	// canonical.
	s := scanner{b: b, i: p, prof: profileWitan, canon: true}
	if err := s.value(1); err != nil || !s.canon {
		return SignedEnvelope{}, false
	}
	body := b[p:s.i]
	if p, ok = lit(b, s.i, cParents); !ok {
		return SignedEnvelope{}, false
	}
	// Count the parents first (each is a quoted id and a separator), so that
	// they are parsed straight into their final place.
	first, n := p, 0
	if p < len(b) && b[p] != ']' {
		for {
			if p+idLen+2 >= len(b) || b[p] != '"' || b[p+idLen+1] != '"' {
				return SignedEnvelope{}, false
			}
			p += idLen + 2
			n++
			if b[p] == ']' {
				break
			}
			if b[p] != ',' {
				return SignedEnvelope{}, false
			}
			p++
		}
	}
	blk := new(envelopeBlock)
	e := &blk.env
	parents := blk.parents[:]
	if n > len(blk.parents) {
		parents = make([]ID, n)
	}
	e.Parents = parents[:n:n] // not nil when empty, as decodeGeneral
	for i := range e.Parents {
		q := first + i*(idLen+3) + 1 // each parent is `"id",`
		if !decodeID(&e.Parents[i], b[q:q+idLen]) {
			return SignedEnvelope{}, false
		}
	}
	if p, ok = lit(b, p, cSession); !ok || p+idLen > len(b) || !decodeID(&e.Session, b[p:p+idLen]) {
		return SignedEnvelope{}, false
	}
	sig := p + idLen + len(cSig) - 1 // the opening quote of the signature
	if p, ok = lit(b, p+idLen, cSig); !ok || p+86 > len(b) || !decodeB64(blk.sig[:], b[p:p+86]) {
		return SignedEnvelope{}, false
	}
	cut := [2]int{sig - len(`,"sig":`), p + 87} // the comma before "sig", to the closing quote
	if p, ok = lit(b, p+86, cTS); !ok {
		return SignedEnvelope{}, false
	}
	ts := p
	for p < len(b) && plainASCII[b[p]] {
		p++
	}
	tsRaw := b[ts:p]
	if p, ok = lit(b, p, cType); !ok {
		return SignedEnvelope{}, false
	}
	typ := p
	for p < len(b) && plainASCII[b[p]] {
		p++
	}
	for _, k := range txTypes {
		if string(k) == string(b[typ:p]) {
			e.Type = k
		}
	}
	if p, ok = lit(b, p, cV); !ok || p != len(b) || e.Type == "" {
		return SignedEnvelope{}, false
	}
	e.V = ProtocolVersion
	e.Author = author
	e.Body = json.RawMessage(body)
	e.TS = string(tsRaw)
	e.Sig = blk.sig[:64:64]
	if e.check(false) != nil {
		return SignedEnvelope{}, false
	}
	return SignedEnvelope{Envelope: e, Canonical: b, ID: Sum(b), cut: cut}, true
}

// lit reports whether b has the text t at p, and the position after it.
func lit(b []byte, p int, t string) (int, bool) {
	if p+len(t) > len(b) || string(b[p:p+len(t)]) != t {
		return p, false
	}
	return p + len(t), true
}

// decodeID parses s, exactly idLen bytes, as an id's only spelling into
// id, as parseID does, eight hex digits at a time.
func decodeID(id *ID, s []byte) bool {
	if string(s[:len(Prefix)]) != Prefix {
		return false
	}
	h := s[len(Prefix) : len(Prefix)+64]
	for i := 0; i < 64; i += 8 {
		v, ok := hex8(binary.LittleEndian.Uint64(h[i:]))
		if !ok {
			*id = ID{}
			return false
		}
		binary.LittleEndian.PutUint32(id.sum[i/2:], v)
	}
	id.ok = true
	return true
}

// hex8 decodes eight lower-case hex digits, the bytes of x in little-endian
// order (the first digit in the low byte), into four bytes, returned in
// little-endian order too. It reports false if any byte of x is not
// 0-9 or a-f. With every byte below 0x80, adding 0x80-c to it sets its
// high bit exactly when the byte is at least c, and cannot carry into the
// next byte.
func hex8(x uint64) (uint32, bool) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones)
	letter := (x + (0x80-'a')*ones) &^ (x + (0x80-'f'-1)*ones)
	if x&highs != 0 || (digit|letter)&highs != highs {
		return 0, false
	}
	// A digit's value is its low nibble; a letter's is its low nibble plus 9
	// (letters have bit 6 set, digits not).
	v := x&(0x0f*ones) + (x>>6&ones)*9
	// Pair the nibbles into bytes (first digit high), then gather the four
	// bytes, which sit in every other byte of v.
	v = (v<<4 | v>>8) & 0x00ff00ff00ff00ff
	v = (v | v>>8) & 0x0000ffff0000ffff
	return uint32(v | v>>16), true
}

// decodeB64 decodes src, unpadded base64url, into dst, which it must fill
// exactly, as b64 (strict: the unused bits of the last character are zero)
// does; it reports whether src was that.
func decodeB64(dst, src []byte) bool {
	if len(src) != (len(dst)*8+5)/6 {
		return false
	}
	bad := byte(0)
	for len(src) >= 4 && len(dst) >= 3 {
		a, b, c, d := b64Val[src[0]], b64Val[src[1]], b64Val[src[2]], b64Val[src[3]]
		bad |= a | b | c | d
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		dst[0], dst[1], dst[2] = byte(v>>16), byte(v>>8), byte(v)
		src, dst = src[4:], dst[3:]
	}
	var v uint32 // the last 2 or 3 characters: 1 or 2 bytes
	for _, c := range src {
		bad |= b64Val[c]
		v = v<<6 | uint32(b64Val[c])
	}
	switch len(src) {
	case 0:
	case 2: // 12 bits: one byte and four zero bits
		if v&0xf != 0 {
			return false
		}
		dst[0] = byte(v >> 4)
	case 3: // 18 bits: two bytes and two zero bits
		if v&0x3 != 0 {
			return false
		}
		dst[0], dst[1] = byte(v>>10), byte(v>>2)
	default:
		return false
	}
	return bad&0x80 == 0
}

// b64Val maps a base64url character to its value and every other byte to
// 0xff.
var b64Val = func() (t [256]byte) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range t {
		t[i] = 0xff
	}
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// PeekCanonical reads the type and the body of an envelope in canonical
// form (as a store keeps it) without decoding it: the type from the fixed
// tail, the body between the fixed head and the top-level "parents"
// member (the last `,"parents":[` in b: nothing canonical after it can
// hold one). It checks only those fixed parts, not the envelope: ok is
// false when b does not have them (DecodeSigned decides such bytes), and
// for bytes that are not a valid envelope its answer means nothing. It is
// for reading entries already admitted, such as what sync serves.
func PeekCanonical(b []byte) (typ TxType, body []byte, ok bool) {
	typ, t, ok := peekType(b)
	if !ok {
		return "", nil, false
	}
	head := len(cAuthor) + len(KeyPrefix) + 43
	p := bytes.LastIndex(b[:t], []byte(cParents))
	if p < head+len(cBody) {
		return "", nil, false
	}
	return typ, b[head+len(cBody) : p], true
}

// PeekCanonicalType is PeekCanonical's type alone, for a reader that needs
// the body only for some types: it does not look for the body's end (a
// search back over the signature, the session and the parents). Where
// PeekCanonical answers ok, it answers the same type.
func PeekCanonicalType(b []byte) (TxType, bool) {
	typ, _, ok := peekType(b)
	return typ, ok
}

// peekType checks PeekCanonical's fixed head and tail and returns the
// type, and where its member starts. The type's string holds no quote, so
// it starts after the last quote before the tail: that quote must end
// `","type":"`.
func peekType(b []byte) (typ TxType, at int, ok bool) {
	head := len(cAuthor) + len(KeyPrefix) + 43
	if _, ok := lit(b, 0, cAuthor); !ok || len(b) < head+len(cBody)+len(cV) {
		return "", 0, false
	}
	if _, ok := lit(b, head, cBody); !ok {
		return "", 0, false
	}
	end := len(b) - len(cV)
	if _, ok := lit(b, end, cV); !ok {
		return "", 0, false
	}
	q := bytes.LastIndexByte(b[:end], '"')
	t := q + 1 - len(cType)
	if q < 0 || t < head+len(cBody) {
		return "", 0, false
	}
	if _, ok := lit(b, t, cType); !ok {
		return "", 0, false
	}
	if typ = knownTxType(b[q+1 : end]); typ == "" {
		return "", 0, false
	}
	return typ, t, true
}
