package dag

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// ID names an entry or object by the SHA-256 of its canonical bytes.
//
// An ID is a small comparable value: use == and use it as a map key. The
// zero ID is invalid; Valid reports it. IDs print as "sha256:<64 lowercase
// hex>" (30k §4) and convert both ways to a CIDv1 (multicodec json,
// multihash sha2-256).
type ID struct {
	sum [sha256.Size]byte
	ok  bool
}

// CodecJSON is the multicodec code of plain JSON ("json", 0x0200): the
// codec of every witan CID, since entries and objects are JCS bytes.
const CodecJSON uint64 = 0x0200

// Prefix is the text that starts every ID's string form.
const Prefix = "sha256:"

// ErrInvalidID is returned (wrapped in a *ProtocolError with code schema) by
// ParseID and FromCID for text that is not an ID.
var ErrInvalidID = errors.New("dag: invalid id")

// Sum returns the ID of b: the SHA-256 of exactly these bytes. For JSON
// objects, b must be their canonical form (see Canonicalize, HashJSON).
func Sum(b []byte) ID { return ID{sum: sha256.Sum256(b), ok: true} }

// IDFromDigest returns the ID whose digest is d.
func IDFromDigest(d [sha256.Size]byte) ID { return ID{sum: d, ok: true} }

// Valid reports whether id is not the zero ID.
func (id ID) Valid() bool { return id.ok }

// Digest returns the 32-byte SHA-256 digest.
func (id ID) Digest() [sha256.Size]byte { return id.sum }

// Compare orders IDs by their digests' bytes, which is also the order of
// their string forms. The zero ID sorts first.
func (id ID) Compare(o ID) int {
	if id.ok != o.ok {
		if !id.ok {
			return -1
		}
		return 1
	}
	return bytes.Compare(id.sum[:], o.sum[:])
}

// Less reports whether id sorts before o (see Compare).
func (id ID) Less(o ID) bool { return id.Compare(o) < 0 }

// String returns "sha256:<hex>", or "sha256:invalid" for the zero ID.
func (id ID) String() string {
	if !id.ok {
		return Prefix + "invalid"
	}
	var b [len(Prefix) + 2*sha256.Size]byte
	copy(b[:], Prefix)
	hex.Encode(b[len(Prefix):], id.sum[:])
	return string(b[:])
}

// ParseID parses "sha256:<64 lowercase hex>". Anything else, including
// upper-case hex, is an error with code schema, so that one ID has exactly
// one spelling.
func ParseID(s string) (ID, error) {
	id, ok := parseID(s)
	if !ok {
		return ID{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("id %q is not sha256:<64 lowercase hex>", truncate(s)), Err: ErrInvalidID}
	}
	return id, nil
}

// parseIDBytes is ParseID without converting b to a string first.
func parseIDBytes(b []byte) (ID, error) {
	id, ok := parseID(b)
	if !ok {
		return ParseID(string(b)) // the error
	}
	return id, nil
}

func parseID[T string | []byte](s T) (ID, bool) {
	if len(s) != len(Prefix)+2*sha256.Size || string(s[:len(Prefix)]) != Prefix {
		return ID{}, false
	}
	var id ID
	h := s[len(Prefix):]
	for i := range id.sum {
		hi, ok1 := lowerHex(h[2*i])
		lo, ok2 := lowerHex(h[2*i+1])
		if !ok1 || !ok2 {
			return ID{}, false
		}
		id.sum[i] = hi<<4 | lo
	}
	id.ok = true
	return id, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// MustParseID is ParseID for tests and constants; it panics on error.
func MustParseID(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// MarshalText implements encoding.TextMarshaler. The zero ID is an error.
func (id ID) MarshalText() ([]byte, error) {
	if !id.ok {
		return nil, &ProtocolError{Code: CodeSchema, Detail: "zero id", Err: ErrInvalidID}
	}
	return []byte(id.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseID.
func (id *ID) UnmarshalText(b []byte) error {
	p, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = p
	return nil
}

// CID returns the CIDv1 of id: multicodec json (0x0200), multihash
// sha2-256. The zero ID gives cid.Undef.
func (id ID) CID() cid.Cid {
	if !id.ok {
		return cid.Undef
	}
	m, err := mh.Encode(id.sum[:], mh.SHA2_256)
	if err != nil { // only for a wrong digest length, which cannot happen
		panic(err)
	}
	return cid.NewCidV1(CodecJSON, m)
}

// FromCID returns the ID inside c. c must be a CIDv1 with codec json and a
// sha2-256 multihash; anything else is an error with code schema.
func FromCID(c cid.Cid) (ID, error) {
	if !c.Defined() {
		return ID{}, &ProtocolError{Code: CodeSchema, Detail: "undefined cid", Err: ErrInvalidID}
	}
	p := c.Prefix()
	if p.Version != 1 || p.Codec != CodecJSON || p.MhType != mh.SHA2_256 {
		return ID{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("cid %s is not v1/json/sha2-256", c), Err: ErrInvalidID}
	}
	d, err := mh.Decode(c.Hash())
	if err != nil || len(d.Digest) != sha256.Size {
		return ID{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("cid %s has a bad multihash", c), Err: ErrInvalidID}
	}
	var id ID
	copy(id.sum[:], d.Digest)
	id.ok = true
	return id, nil
}

// ParseCID parses a CID's string form (any multibase) with FromCID.
func ParseCID(s string) (ID, error) {
	c, err := cid.Decode(s)
	if err != nil {
		return ID{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("cid %q: %v", truncate(s), err), Err: ErrInvalidID}
	}
	return FromCID(c)
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
