package harness

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
)

// Signature domains (30k §4, §5): the bytes signed are the domain
// followed by the JCS of the object without its "sig" member. 30k names
// the envelope and receipt domains; checkpoints have none in the spec,
// and the harness checks them under witan's reading (CheckpointDomain,
// docs/deviations.md), reporting which domain it used.
const (
	EnvelopeDomain   = "oth/0.10\n"
	ReceiptDomain    = "oth/0.10-receipt\n"
	CheckpointDomain = "oth/0.10-checkpoint\n"
	// ProtocolVersion is the envelope's "v".
	ProtocolVersion = "0.10"
	// SystemAuthor authors derived changes (30k §4).
	SystemAuthor = "oth:system"
)

var b64 = base64.RawURLEncoding

// Hash is 30k's "sha256:<64 lowercase hex>" of b.
func Hash(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// ObjectID is the id of a JSON object: the hash of its canonical form.
func ObjectID(v any) string { return Hash(MustCanon(v)) }

// Signer is a synthetic Ed25519 key.
type Signer struct {
	priv ed25519.PrivateKey
	Key  string // ed25519:<base64url>
}

// NewSigner derives a key from a name: its seed is sha256(name), so the
// same harness seed gives the same roster.
func NewSigner(name string) *Signer {
	seed := sha256.Sum256([]byte(name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return &Signer{priv: priv, Key: "ed25519:" + b64.EncodeToString(priv.Public().(ed25519.PublicKey))}
}

// Sign signs domain || msg.
func (s *Signer) Sign(domain string, msg []byte) string {
	return b64.EncodeToString(ed25519.Sign(s.priv, append([]byte(domain), msg...)))
}

// VerifySig checks a base64url signature by key ("ed25519:…") over
// domain || msg.
func VerifySig(key, domain string, msg []byte, sig string) bool {
	if len(key) < 8 || key[:8] != "ed25519:" {
		return false
	}
	pub, err := b64.DecodeString(key[8:])
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return false
	}
	raw, err := b64.DecodeString(sig)
	if err != nil {
		return false
	}
	return ed25519.Verify(ed25519.PublicKey(pub), append([]byte(domain), msg...), raw)
}

// Tx is a sealed envelope: its canonical bytes, its id and the
// attachments that travel with it.
type Tx struct {
	ID       string
	Type     string
	Envelope map[string]any
	Bytes    []byte
	Attach   [][]byte // canonical JSON objects, or plain text
}

// Seal builds and signs an envelope (30k §4 "Envelope"): the signature
// is over EnvelopeDomain + JCS(envelope without sig); the tx id is the
// hash of JCS(envelope with sig).
func Seal(s *Signer, typ, session string, parents []string, body any, ts string, attach ...[]byte) Tx {
	if parents == nil {
		parents = []string{}
	}
	env := map[string]any{"v": ProtocolVersion, "type": typ, "session": session, "author": s.Key,
		"parents": parents, "body": body, "ts": ts}
	env["sig"] = s.Sign(EnvelopeDomain, MustCanon(env))
	b := MustCanon(env)
	return Tx{ID: Hash(b), Type: typ, Envelope: env, Bytes: b, Attach: attach}
}

// VerifyEnvelope checks an envelope read back from a node: its
// signature under its author, and its id.
func VerifyEnvelope(raw []byte) (id string, err error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return "", err
	}
	env, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("envelope is not an object")
	}
	b, err := Canon(env)
	if err != nil {
		return "", err
	}
	sig, _ := env["sig"].(string)
	author, _ := env["author"].(string)
	rest := make(map[string]any, len(env))
	for k, x := range env {
		if k != "sig" {
			rest[k] = x
		}
	}
	msg, err := Canon(rest)
	if err != nil {
		return "", err
	}
	if !VerifySig(author, EnvelopeDomain, msg, sig) {
		return Hash(b), fmt.Errorf("signature by %s does not verify", author)
	}
	return Hash(b), nil
}

// VerifySigned checks an object signed under domain with its "sig" and
// signing key in member keyField (a receipt's or checkpoint's "node").
func VerifySigned(obj map[string]any, domain, keyField string) bool {
	sig, _ := obj["sig"].(string)
	key, _ := obj[keyField].(string)
	rest := make(map[string]any, len(obj))
	for k, x := range obj {
		if k != "sig" {
			rest[k] = x
		}
	}
	msg, err := Canon(rest)
	return err == nil && VerifySig(key, domain, msg, sig)
}

// MerkleRoot is the RFC 9162 tree hash over the log's tx ids in order,
// each leaf 0x00 || the id's 32-byte digest; the empty tree is sha256 of
// nothing.
func MerkleRoot(ids []string) (string, error) {
	leaves := make([][]byte, len(ids))
	for i, id := range ids {
		if len(id) != 71 || id[:7] != "sha256:" {
			return "", fmt.Errorf("not a sha256 id: %q", id)
		}
		d, err := hex.DecodeString(id[7:])
		if err != nil {
			return "", err
		}
		h := sha256.Sum256(append([]byte{0}, d...))
		leaves[i] = h[:]
	}
	r := mth(leaves)
	return "sha256:" + hex.EncodeToString(r), nil
}

func mth(l [][]byte) []byte {
	switch len(l) {
	case 0:
		h := sha256.Sum256(nil)
		return h[:]
	case 1:
		return l[0]
	}
	k := 1
	for k*2 < len(l) {
		k *= 2
	}
	a, b := mth(l[:k]), mth(l[k:])
	h := sha256.Sum256(append(append([]byte{1}, a...), b...))
	return h[:]
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
