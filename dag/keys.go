package dag

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	"github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/witan-dev/witan/dag/internal/edwards4"
	"github.com/witan-dev/witan/dag/internal/msm"
	"github.com/witan-dev/witan/dag/internal/sha8"
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

// SmallOrder reports whether k decodes to a point of small order (one of
// the eight torsion points, in any encoding ZIP-215 accepts). Verify accepts
// such keys, as ZIP-215 does, but a signature by one proves nothing: with
// R a torsion point and S = 0 one verifies for any message, so anyone can
// "sign" as it. Places that introduce a key as an identity (key.register,
// the new key of key.rotate) refuse it; it costs one point decompression.
// The zero Key and keys that do not decode are not small order.
func (k Key) SmallOrder() bool {
	if !k.ok {
		return false
	}
	var p curve.EdwardsPoint
	if !decompress(&p, k.pub[:]) {
		return false
	}
	return p.IsSmallOrder()
}

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

// KeyCache keeps public keys decompressed, so that a key seen before is not
// decompressed again: a member signs many envelopes, and decompression is
// about a third of a batched check. The expanded form the per-signature
// path works with is made the first time that path needs it. It is
// safe for concurrent use. Give one to every BatchVerifier of a replica
// (its Verifier, or NewBatchVerifierCache) and use its Verify for single
// signatures.
//
// Caching changes only speed, never the verdict: the cached point and the
// expanded key carry the same ZIP-215 checks (small order and
// non-canonical encodings are accepted; an encoding that is not a point is
// refused).
type KeyCache struct {
	mu  sync.Mutex
	m   map[Key]*cachedKey
	max int
	// verifiers holds empty batch verifiers over this cache between
	// batches (Verifier, Release).
	verifiers sync.Pool
}

type cachedKey struct {
	a curve.EdwardsPoint // the key decompressed, for the merged-key batch equation
	// x is the expanded form the per-signature path needs, made the first
	// time that path asks for it: the merged-key equation, which checks
	// nearly every batch, needs only a, and expanding costs about twice a
	// decompression.
	once sync.Once
	x    *ed25519.ExpandedPublicKey
}

// DefaultKeyCacheSize fits an 11,000-member roster with room to spare; a
// key takes about 250 bytes, and 1.5 KiB more once expanded.
const DefaultKeyCacheSize = 1 << 14

// NewKeyCache returns a cache of at most max keys (DefaultKeyCacheSize if
// max <= 0). When it is full it starts afresh, which keeps it bounded
// without bookkeeping per key.
func NewKeyCache(max int) *KeyCache {
	if max <= 0 {
		max = DefaultKeyCacheSize
	}
	return &KeyCache{m: make(map[Key]*cachedKey), max: max}
}

// expanded returns k's expanded form, or nil when k does not decode to a
// point (verification then takes the plain path and refuses).
func (c *KeyCache) expanded(k Key) *ed25519.ExpandedPublicKey {
	e := c.get(k)
	if e == nil {
		return nil
	}
	e.once.Do(func() {
		x, err := ed25519.NewExpandedPublicKey(k.pub[:])
		if err == nil {
			e.x = x
		}
	})
	return e.x
}

// get returns k's cache entry (nil on a nil cache, or when k does not
// decode to a point).
func (c *KeyCache) get(k Key) *cachedKey {
	if c == nil {
		return nil
	}
	if e := c.lookup(k); e != nil {
		return e
	}
	e := &cachedKey{}
	if !decompress(&e.a, k.pub[:]) {
		return nil
	}
	c.put(k, e)
	return e
}

// lookup returns k's cache entry, or nil when k is not cached (or c is nil).
func (c *KeyCache) lookup(k Key) *cachedKey {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	return e
}

// put caches e, a key that decoded, as k's entry.
func (c *KeyCache) put(k Key, e *cachedKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = e
	c.mu.Unlock()
}

// decompress decodes a point as ZIP-215 does (voi's VerifyOptionsZIP_215):
// any encoding that decompresses, non-canonical and small order included.
func decompress(p *curve.EdwardsPoint, b []byte) bool {
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(b); err != nil {
		return false
	}
	_, err := p.SetCompressedY(&c)
	return err == nil
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
//
// A batch of 8 or more well-formed signatures is first checked with the
// terms of each key merged into one (see grouped): the same batch
// equation, with fewer points to multiply where keys repeat (a member
// signs many envelopes) and the Rᵢ decompressed four at a time either
// way. Any failure there,
// including a signature that does not decode, falls back to the
// per-signature path, which decides.
type BatchVerifier struct {
	q     []queued
	cache *KeyCache
	gs    groupScratch
	// The queued messages live in blocks, reused from batch to batch:
	// blocks[cur] is being filled; those before it are full.
	blocks [][]byte
	cur    int
}

type queued struct {
	k   Key
	m   []byte // domain ‖ msg
	sig []byte
}

// NewBatchVerifier returns an empty batch verifier.
func NewBatchVerifier() *BatchVerifier { return &BatchVerifier{} }

// NewBatchVerifierCache returns an empty batch verifier that takes expanded
// keys from c (shared, across batches and goroutines). A nil c gives a
// plain NewBatchVerifier.
func NewBatchVerifierCache(c *KeyCache) *BatchVerifier { return &BatchVerifier{cache: c} }

// Verifier returns an empty batch verifier over c, one an earlier batch
// gave back (Release) if there is one: a batch then does not allocate
// again the message blocks and scratch the last one grew (a few KB per
// signature). Safe for concurrent use; the verifier itself is not.
func (c *KeyCache) Verifier() *BatchVerifier {
	if bv, ok := c.verifiers.Get().(*BatchVerifier); ok {
		return bv
	}
	return NewBatchVerifierCache(c)
}

// Release gives bv, from c's Verifier, back for a later Verifier once its
// last Verify returned. A verifier over another cache, or with signatures
// still queued, is not kept.
func (c *KeyCache) Release(bv *BatchVerifier) {
	if bv == nil || bv.cache != c || bv.Len() > 0 {
		return
	}
	c.verifiers.Put(bv)
}

// Add queues one signature and returns its index in the batch.
func (v *BatchVerifier) Add(k Key, domain string, msg, sig []byte) int {
	m := v.alloc(len(domain) + len(msg))
	m = append(append(m, domain...), msg...)
	v.q = append(v.q, queued{k: k, m: m, sig: sig})
	return len(v.q) - 1
}

// AddSigned queues the signature of a decoded envelope (by its author over
// DomainEnvelope and its SigningBytes) and returns its index in the batch.
// It is Add without encoding the signed message again.
func (v *BatchVerifier) AddSigned(s SignedEnvelope) int {
	m := v.alloc(len(DomainEnvelope) + len(s.Canonical) - (s.cut[1] - s.cut[0]))
	m = s.AppendSigningBytes(append(m, DomainEnvelope...))
	v.q = append(v.q, queued{k: s.Envelope.Author, m: m, sig: s.Envelope.Sig})
	return len(v.q) - 1
}

// arenaBlock is the size of one block of queued messages.
const arenaBlock = 64 << 10

// alloc returns an empty slice with room for n bytes from the current
// block, moving to the next block (reused, or new) when it is full. After
// Verify every block is reused, so a verifier that sees batches of one
// size stops allocating messages, and a one-off verifier allocates what
// its messages take, rounded up to a block.
func (v *BatchVerifier) alloc(n int) []byte {
	for v.cur < len(v.blocks) && cap(v.blocks[v.cur])-len(v.blocks[v.cur]) < n {
		v.cur++
	}
	if v.cur == len(v.blocks) {
		v.blocks = append(v.blocks, make([]byte, 0, max(n, arenaBlock)))
	}
	b := v.blocks[v.cur]
	start := len(b)
	v.blocks[v.cur] = b[:start+n]
	return b[start : start : start+n]
}

// Len returns the number of signatures queued.
func (v *BatchVerifier) Len() int { return len(v.q) }

// Verify checks every queued signature and reports, per index, whether it
// is valid; all is true when every one is. The verifier is reset.
func (v *BatchVerifier) Verify() (all bool, valid []bool) {
	q := v.q
	defer func() { // reuse the queue and the message blocks for the next batch
		clear(q)
		v.q, v.cur = q[:0], 0
		for i := range v.blocks {
			v.blocks[i] = v.blocks[i][:0]
		}
	}()
	if len(q) == 0 {
		return true, nil
	}
	if groupable(q) && v.gs.grouped(q, v.cache) {
		valid = make([]bool, len(q))
		for i := range valid {
			valid[i] = true
		}
		return true, valid
	}
	bv := ed25519.NewBatchVerifierWithCapacity(len(q))
	var bad []int // malformed key or signature
	for i, e := range q {
		if !e.k.ok || len(e.sig) != ed25519.SignatureSize {
			bad = append(bad, i)
			// keep indexes aligned with the underlying verifier
			bv.AddWithOptions(make([]byte, ed25519.PublicKeySize), e.m, make([]byte, ed25519.SignatureSize), verifyOptions)
			continue
		}
		if v.cache != nil {
			if x := v.cache.expanded(e.k); x != nil {
				bv.AddExpandedWithOptions(x, e.m, e.sig, verifyOptions)
				continue
			}
		}
		bv.AddWithOptions(e.k.pub[:], e.m, e.sig, verifyOptions)
	}
	all, valid = bv.Verify(rand.Reader)
	for _, i := range bad {
		valid[i] = false
		all = false
	}
	return all, valid
}

// groupable reports whether a batch takes the merged-key equation: at
// least 8 signatures, all well-formed. It pays whether or not keys repeat:
// with distinct keys the multiplication has as many points as the batch
// verifier's (2n + 1), and the Rᵢ are decompressed four at a time
// (edwards4), about 9 % less CPU per signature for a batch of 1,000 by
// 1,000 cached keys (BenchmarkVerifyBatchRepeatedKeys/keys=1000); where keys
// repeat it multiplies fewer points.
func groupable(q []queued) bool {
	if len(q) < 8 {
		return false
	}
	for _, e := range q {
		if !e.k.ok || len(e.sig) != ed25519.SignatureSize {
			return false
		}
	}
	return true
}

// groupScratch holds what grouped needs for a batch, kept by
// a BatchVerifier from batch to batch instead of allocated anew: a
// replica verifies a fresh sync in some hundreds of batches.
type groupScratch struct {
	index   map[Key]int
	zs      []byte
	rPts    []curve.EdwardsPoint
	rPtr    []*curve.EdwardsPoint
	rEnc    [][]byte
	rCoef   []msm.Short
	keyOf   []int // the index in keyPts of each signature's key
	keyPts  []curve.EdwardsPoint
	keyAcc  []wide
	keyCoef []scalar.Scalar
	// The keys the cache lacks: the first signature by each, their
	// encodings and their points, decompressed together.
	missAt  []int
	missEnc [][]byte
	missPts []curve.EdwardsPoint
	pts     []*curve.EdwardsPoint
	scs     []*scalar.Scalar
	// ms multiplies: in eight lanes where the CPU has AVX-512 IFMA, else
	// with voi.
	ms msm.Scratch
	// the kᵢ's messages and digests, hashed eight at a time
	hasher  sha8.Hasher
	msgs    []sha8.Msg
	digests [][64]byte
}

// resize returns s with length n, reusing its array when it is large
// enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// grouped checks the cofactored batch equation of ZIP-215 (the one
// curve25519-voi's batch verifier checks),
//
//	[8]( −(Σ zᵢ·sᵢ)·B + Σ zᵢ·Rᵢ + Σ_A (Σ_{i: Aᵢ = A} zᵢ·kᵢ)·A ) = 0,
//
// with random zᵢ, each uniform among 2^128 consecutive integers (below),
// and kᵢ = SHA-512(Rᵢ ‖ Aᵢ ‖ mᵢ), the terms of each
// distinct key A summed into one. The sum is the same as with a term per
// signature, so the verdict is the batch verifier's; the multiplication has
// n + d + 1 points instead of 2n + 1 (d distinct keys). The Rᵢ, and the
// keys the cache lacks, are decompressed four or eight at a time
// (edwards4); the kᵢ are hashed eight at a time where the CPU has AVX-512
// (sha8); Σ zᵢ·sᵢ and each key's Σ zᵢ·kᵢ are summed as integers and
// reduced once (wide), where reducing every product and sum took a dozen
// Montgomery reductions per signature; the multiplication runs in eight
// lanes where the CPU has AVX-512 IFMA (msm), else in voi. Each of these
// gives voi's or crypto/sha512's results exactly. Points and scalars
// decode exactly as voi's ZIP-215 options do: any encoding that
// decompresses, small order allowed, s canonical. It returns false when
// anything fails to decode or the equation does not hold; the caller then
// decides per signature.
//
// voi draws each zᵢ from [0, 2^128); here each is sixteen random bytes
// taken as signed digits in radix 256 (msm.Short), a uniform draw from
// [−K, 2^128 − K), K = Σ 128·256^k: the multiplication's signed-digit
// windows take the Rᵢ's digits as they are, with no carry past the
// sixteenth, so that every Rᵢ takes two of its passes. As voi's, the zᵢ
// take 2^128 distinct values modulo the group order, so a batch holding
// an invalid signature passes with probability at most 2^-128 all the
// same. In the sums zᵢ = Uᵢ − K, Uᵢ the bytes each plus 128 (an unsigned
// 128-bit integer), and −K·x ≡ K·(L − x) modulo the group order L, so
// zᵢ·x enters a sum as Uᵢ·x + K·(L − x), both products of 128-bit and
// 253-bit integers. The Rᵢ's terms are the integers zᵢ·Rᵢ, where voi's
// would be reduced: they differ by multiples of L·Rᵢ, points of small
// order, which the [8] of the equation removes.
func grouped(q []queued, cache *KeyCache) bool { var g groupScratch; return g.grouped(q, cache) }

func (g *groupScratch) grouped(q []queued, cache *KeyCache) bool {
	n := len(q)
	g.zs = resize(g.zs, 16*n)
	zs := g.zs
	if _, err := rand.Read(zs); err != nil {
		return false
	}
	g.rPts, g.rEnc, g.rCoef, g.keyOf = resize(g.rPts, n), resize(g.rEnc, n), resize(g.rCoef, n), resize(g.keyOf, n)
	rPts, rEnc, rCoef, keyOf := g.rPts, g.rEnc, g.rCoef, g.keyOf
	defer clear(rEnc) // it points into the caller's signatures
	for i := range q {
		rEnc[i] = q[i].sig[:32]
	}
	// The Rᵢ, four at a time: the same points and verdicts as decompress.
	if !edwards4.Decompress(rPts, rEnc) {
		return false
	}
	// The distinct keys: those the cache holds as they are, the others
	// decompressed four at a time, then cached.
	if g.index == nil {
		g.index = make(map[Key]int, n/2+1)
	}
	index := g.index
	defer clear(index)
	keyPts, keyAcc, missAt, missEnc := g.keyPts[:0], g.keyAcc[:0], g.missAt[:0], g.missEnc[:0]
	defer func() {
		clear(missEnc)
		g.keyPts, g.keyAcc, g.missAt, g.missEnc = keyPts[:0], keyAcc[:0], missAt[:0], missEnc[:0]
	}()
	for i := range q {
		k := &q[i].k
		j, ok := index[*k]
		if !ok {
			j = len(keyPts)
			index[*k] = j
			keyPts = append(keyPts, curve.EdwardsPoint{})
			keyAcc = append(keyAcc, wide{})
			if ck := cache.lookup(*k); ck != nil {
				keyPts[j] = ck.a
			} else {
				missAt, missEnc = append(missAt, i), append(missEnc, k.pub[:])
			}
		}
		keyOf[i] = j
	}
	if len(missAt) > 0 {
		g.missPts = resize(g.missPts, len(missAt))
		if !edwards4.Decompress(g.missPts, missEnc) {
			return false
		}
		for t, i := range missAt {
			keyPts[keyOf[i]] = g.missPts[t]
			if cache != nil {
				cache.put(q[i].k, &cachedKey{a: g.missPts[t]})
			}
		}
	}
	// kᵢ = SHA-512(Rᵢ ‖ Aᵢ ‖ mᵢ), eight at a time where the CPU has
	// AVX-512 (sha8).
	g.msgs, g.digests = resize(g.msgs, n), resize(g.digests, n)
	defer clear(g.msgs) // it points into the caller's signatures and messages
	for i := range q {
		g.msgs[i] = sha8.Msg{q[i].sig[:32], q[i].k.pub[:], q[i].m}
	}
	g.hasher.Sums(g.msgs, g.digests)
	// The scalars: Σ zᵢ·sᵢ and, per key, Σ zᵢ·kᵢ are summed as integers
	// (wide) and reduced modulo the group order once each, which gives the
	// same scalars as reducing every product and sum.
	var accB wide
	var buf [64]byte // a wide sum's bytes
	var kb, lb [32]byte
	const kh = msm.KHalf // each half of K
	for i := range q {
		e := &q[i]
		sig := e.sig
		if !scalar.ScMinimalVartime(sig[32:]) {
			return false
		}
		var k scalar.Scalar
		if _, err := k.SetBytesModOrderWide(g.digests[i][:]); err != nil {
			return false
		}
		if err := k.ToBytes(kb[:]); err != nil {
			return false
		}
		// zᵢ = Uᵢ − K: its digits are the random bytes as they are.
		for j, b := range zs[16*i : 16*i+16] {
			rCoef[i][j] = int8(b)
		}
		u0, u1 := rCoef[i].Offset()
		accB.addMul(u0, u1, sig[32:])
		accB.addMul(kh, kh, orderMinus(&lb, sig[32:]))
		acc := &keyAcc[keyOf[i]]
		acc.addMul(u0, u1, kb[:])
		acc.addMul(kh, kh, orderMinus(&lb, kb[:]))
	}
	var bCoef scalar.Scalar
	if _, err := bCoef.SetBytesModOrderWide(accB.bytes(buf[:0])); err != nil {
		return false
	}
	g.keyCoef = resize(g.keyCoef, len(keyPts))
	keyCoef := g.keyCoef
	for j := range keyAcc {
		if _, err := keyCoef[j].SetBytesModOrderWide(keyAcc[j].bytes(buf[:0])); err != nil {
			return false
		}
	}
	bCoef.Neg(&bCoef)
	pts, scs, rPtr := g.pts[:0], g.scs[:0], g.rPtr[:0]
	defer func() {
		clear(pts)
		clear(scs)
		clear(rPtr)
		g.pts, g.scs, g.rPtr = pts[:0], scs[:0], rPtr[:0]
	}()
	pts = append(pts, curve.ED25519_BASEPOINT_POINT)
	scs = append(scs, &bCoef)
	for j := range keyPts {
		pts, scs = append(pts, &keyPts[j]), append(scs, &keyCoef[j])
	}
	for i := range rPts {
		rPtr = append(rPtr, &rPts[i])
	}
	return g.ms.IsSmallOrderSum(scs, pts, rCoef, rPtr)
}

// order is the group order L, little-endian.
var order = [4]uint64{0x5812631a5cf5d3ed, 0x14def9dea2f79cd6, 0, 0x1000000000000000}

// orderMinus sets out to L − x for x (32 bytes, little-endian) at most L,
// and returns it.
func orderMinus(out *[32]byte, x []byte) []byte {
	var borrow uint64
	for i := range 4 {
		var d uint64
		d, borrow = bits.Sub64(order[i], binary.LittleEndian.Uint64(x[8*i:]), borrow)
		binary.LittleEndian.PutUint64(out[8*i:], d)
	}
	if borrow != 0 {
		panic("dag: orderMinus of more than the group order")
	}
	return out[:]
}

// wide is an unsigned integer of 512 bits, little-endian limbs, that sums
// products of a 128-bit integer and one of at most 2²⁵³ (two for each
// signature): each is below 2³⁸¹ + 2¹²⁸, so 2⁶⁶ of them fit in 448 bits
// and the top limb stays zero.
type wide [8]uint64

// addMul adds z·x to w, where z = z0 + z1·2⁶⁴ and x is 32 bytes,
// little-endian.
func (w *wide) addMul(z0, z1 uint64, x []byte) {
	x0 := binary.LittleEndian.Uint64(x)
	x1 := binary.LittleEndian.Uint64(x[8:])
	x2 := binary.LittleEndian.Uint64(x[16:])
	x3 := binary.LittleEndian.Uint64(x[24:])
	var p [6]uint64
	for i, zi := range [2]uint64{z0, z1} {
		var carry uint64
		for j, xj := range [4]uint64{x0, x1, x2, x3} {
			hi, lo := bits.Mul64(zi, xj)
			var c uint64
			lo, c = bits.Add64(lo, p[i+j], 0)
			hi += c
			lo, c = bits.Add64(lo, carry, 0)
			hi += c
			p[i+j], carry = lo, hi
		}
		p[i+4] = carry
	}
	var c uint64
	for i := range p {
		w[i], c = bits.Add64(w[i], p[i], c)
	}
	w[6], c = bits.Add64(w[6], 0, c)
	w[7] += c
}

// bytes appends w's 64 bytes, little-endian, to b.
func (w *wide) bytes(b []byte) []byte {
	for _, l := range w {
		b = binary.LittleEndian.AppendUint64(b, l)
	}
	return b
}
