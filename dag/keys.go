package dag

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// Key is an Ed25519 public key. It prints as "ed25519:<base64url>" (RFC 4648
// §5, no padding), which is also a member's id in 30k §4. Key is comparable;
// the zero Key is invalid.
type Key struct {
	pub [ed25519.PublicKeySize]byte
	ok  bool
}

// KeyPrefix starts every key's string form.
const KeyPrefix = "ed25519:"

// SystemAuthor is the author of derived (system) changes (30k §4). It is not
// a key and nothing can sign as it.
const SystemAuthor = "oth:system"

// Signature domains: the bytes signed are the domain followed by the JCS of
// the object without its "sig" member (30k §4, §5).
const (
	DomainEnvelope = "oth/0.10\n"
	DomainReceipt  = "oth/0.10-receipt\n"
)

var b64 = base64.RawURLEncoding.Strict()

// ErrInvalidKey is wrapped by the schema errors of ParseKey.
var ErrInvalidKey = errors.New("dag: invalid key")

// KeyFromBytes returns the Key whose 32 bytes are b.
func KeyFromBytes(b []byte) (Key, error) {
	if len(b) != ed25519.PublicKeySize {
		return Key{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("key is %d bytes, want 32", len(b)), Err: ErrInvalidKey}
	}
	var k Key
	copy(k.pub[:], b)
	k.ok = true
	return k, nil
}

// ParseKey parses "ed25519:<base64url>" strictly: no padding, no other
// alphabet, exactly 32 bytes, so that one key has one spelling.
func ParseKey(s string) (Key, error) {
	if len(s) != len(KeyPrefix)+43 || s[:len(KeyPrefix)] != KeyPrefix {
		return Key{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("key %q is not ed25519:<43 base64url characters>", truncate(s)), Err: ErrInvalidKey}
	}
	raw, err := b64.DecodeString(s[len(KeyPrefix):])
	if err != nil {
		return Key{}, &ProtocolError{Code: CodeSchema, Detail: fmt.Sprintf("key %q: %v", truncate(s), err), Err: ErrInvalidKey}
	}
	return KeyFromBytes(raw)
}

// parseKeyBytes is ParseKey without converting b to a string first.
func parseKeyBytes(b []byte) (Key, error) {
	var k Key
	if len(b) == len(KeyPrefix)+43 && string(b[:len(KeyPrefix)]) == KeyPrefix {
		if n, err := b64.Decode(k.pub[:], b[len(KeyPrefix):]); err == nil && n == len(k.pub) {
			k.ok = true
			return k, nil
		}
	}
	return ParseKey(string(b)) // the error
}

// Valid reports whether k is not the zero Key.
func (k Key) Valid() bool { return k.ok }

// Bytes returns a copy of the 32 key bytes.
func (k Key) Bytes() []byte { return append([]byte(nil), k.pub[:]...) }

// String returns "ed25519:<base64url>", or "ed25519:invalid" for the zero Key.
func (k Key) String() string {
	if !k.ok {
		return KeyPrefix + "invalid"
	}
	return KeyPrefix + b64.EncodeToString(k.pub[:])
}

// Compare orders keys by their bytes; the zero Key sorts first.
func (k Key) Compare(o Key) int {
	switch {
	case k.ok != o.ok && !k.ok:
		return -1
	case k.ok != o.ok:
		return 1
	}
	for i := range k.pub {
		if k.pub[i] != o.pub[i] {
			if k.pub[i] < o.pub[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// MarshalText implements encoding.TextMarshaler.
func (k Key) MarshalText() ([]byte, error) {
	if !k.ok {
		return nil, &ProtocolError{Code: CodeSchema, Detail: "zero key", Err: ErrInvalidKey}
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseKey.
func (k *Key) UnmarshalText(b []byte) error {
	p, err := ParseKey(string(b))
	if err != nil {
		return err
	}
	*k = p
	return nil
}

// Signer holds an Ed25519 private key. Its zero value is unusable; make one
// with NewSigner, SignerFromSeed or GenerateSigner.
type Signer struct {
	priv ed25519.PrivateKey
	pub  Key
}

// SignerFromSeed returns the signer for a 32-byte RFC 8032 seed. Fixed seeds
// make reproducible test vectors.
func SignerFromSeed(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("dag: seed is %d bytes, want %d", len(seed), ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	k, _ := KeyFromBytes(priv[32:])
	return &Signer{priv: priv, pub: k}, nil
}

// GenerateSigner returns a signer with a fresh key read from r (crypto/rand
// when r is nil).
func GenerateSigner(r io.Reader) (*Signer, error) {
	if r == nil {
		r = rand.Reader
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(r, seed); err != nil {
		return nil, fmt.Errorf("dag: generate key: %w", err)
	}
	return SignerFromSeed(seed)
}

// Key returns the signer's public key.
func (s *Signer) Key() Key { return s.pub }

// Seed returns a copy of the 32-byte seed, for storing the key.
func (s *Signer) Seed() []byte { return append([]byte(nil), s.priv.Seed()...) }

// Sign returns the signature over domain followed by msg. msg is the JCS of
// an object without its "sig" member.
func (s *Signer) Sign(domain string, msg []byte) []byte {
	m := make([]byte, 0, len(domain)+len(msg))
	m = append(append(m, domain...), msg...)
	return ed25519.Sign(s.priv, m)
}

// verifyOptions is the one verification rule witan uses: ZIP-215, for
// single and batch verification alike, so batching can never change what is
// accepted. ZIP-215 accepts non-canonical encodings of A and R and
// small-order points, checks the cofactored equation and rejects S >= L.
var verifyOptions = &ed25519.Options{Verify: ed25519.VerifyOptionsZIP_215}

// Verify reports whether sig is a valid signature by k over domain followed
// by msg, under witan's rule (ZIP-215).
func Verify(k Key, domain string, msg, sig []byte) bool {
	if !k.ok || len(sig) != ed25519.SignatureSize {
		return false
	}
	m := make([]byte, 0, len(domain)+len(msg))
	m = append(append(m, domain...), msg...)
	return ed25519.VerifyWithOptions(k.pub[:], m, sig, verifyOptions)
}

// KeyCache keeps public keys in the expanded form the verifier works with,
// so that a key seen before is not decompressed again: a member signs many
// envelopes, and decompression is about a third of a batched check. It is
// safe for concurrent use. Give one to every BatchVerifier of a replica
// (NewBatchVerifierCache) and use its Verify for single signatures.
//
// Caching changes only speed, never the verdict: the expanded key carries
// the same ZIP-215 checks (small order and non-canonical encodings are
// accepted; an encoding that is not a point is refused).
type KeyCache struct {
	mu  sync.Mutex
	m   map[Key]*ed25519.ExpandedPublicKey
	max int
}

// DefaultKeyCacheSize fits an 11,000-member roster with room to spare; an
// expanded key takes about 1.5 KiB.
const DefaultKeyCacheSize = 1 << 14

// NewKeyCache returns a cache of at most max keys (DefaultKeyCacheSize if
// max <= 0). When it is full it starts afresh, which keeps it bounded
// without bookkeeping per key.
func NewKeyCache(max int) *KeyCache {
	if max <= 0 {
		max = DefaultKeyCacheSize
	}
	return &KeyCache{m: make(map[Key]*ed25519.ExpandedPublicKey), max: max}
}

// expanded returns k's expanded form, or nil when k does not decode to a
// point (verification then takes the plain path and refuses).
func (c *KeyCache) expanded(k Key) *ed25519.ExpandedPublicKey {
	c.mu.Lock()
	x, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return x
	}
	x, err := ed25519.NewExpandedPublicKey(k.pub[:])
	if err != nil {
		return nil
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = x
	c.mu.Unlock()
	return x
}

// Verify is Verify (the package function) through the cache.
func (c *KeyCache) Verify(k Key, domain string, msg, sig []byte) bool {
	if !k.ok || len(sig) != ed25519.SignatureSize {
		return false
	}
	x := c.expanded(k)
	if x == nil {
		return Verify(k, domain, msg, sig)
	}
	m := make([]byte, 0, len(domain)+len(msg))
	m = append(append(m, domain...), msg...)
	return ed25519.VerifyExpandedWithOptions(x, m, sig, verifyOptions)
}

// BatchVerifier checks many signatures at once under the same rule as
// Verify: for every signature, batch and single verification agree. It is
// not safe for concurrent use.
type BatchVerifier struct {
	bv    *ed25519.BatchVerifier
	n     int
	bad   []int // indexes added with a malformed key or signature
	cache *KeyCache
}

// NewBatchVerifier returns an empty batch verifier.
func NewBatchVerifier() *BatchVerifier {
	return &BatchVerifier{bv: ed25519.NewBatchVerifier()}
}

// NewBatchVerifierCache returns an empty batch verifier that takes expanded
// keys from c (shared, across batches and goroutines). A nil c gives a
// plain NewBatchVerifier.
func NewBatchVerifierCache(c *KeyCache) *BatchVerifier {
	return &BatchVerifier{bv: ed25519.NewBatchVerifier(), cache: c}
}

// Add queues one signature and returns its index in the batch.
func (v *BatchVerifier) Add(k Key, domain string, msg, sig []byte) int {
	i := v.n
	v.n++
	m := make([]byte, 0, len(domain)+len(msg))
	m = append(append(m, domain...), msg...)
	if !k.ok || len(sig) != ed25519.SignatureSize {
		v.bad = append(v.bad, i)
		// keep indexes aligned with the underlying verifier
		v.bv.AddWithOptions(make([]byte, ed25519.PublicKeySize), m, make([]byte, ed25519.SignatureSize), verifyOptions)
		return i
	}
	if v.cache != nil {
		if x := v.cache.expanded(k); x != nil {
			v.bv.AddExpandedWithOptions(x, m, sig, verifyOptions)
			return i
		}
	}
	v.bv.AddWithOptions(k.pub[:], m, sig, verifyOptions)
	return i
}

// Len returns the number of signatures queued.
func (v *BatchVerifier) Len() int { return v.n }

// Verify checks every queued signature and reports, per index, whether it
// is valid; all is true when every one is. The verifier is reset.
func (v *BatchVerifier) Verify() (all bool, valid []bool) {
	if v.n == 0 {
		return true, nil
	}
	all, valid = v.bv.Verify(rand.Reader)
	for _, i := range v.bad {
		valid[i] = false
		all = false
	}
	v.bv.Reset()
	v.n, v.bad = 0, v.bad[:0]
	return all, valid
}
