package checkpoint

// This file is a witness's cosignature of another node's checkpoint (30k
// D45's co-signed checkpoints; replica/witness.go keeps them).

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// DomainWitness prefixes a checkpoint's signing bytes (the JCS of the
// checkpoint without "sig", SigningBytes) when a witness co-signs it
// (docs/wire-format.md).
const DomainWitness = "oth/0.10-witness\n"

// Cosignature is a witness's signature over a checkpoint of another node:
// {"witness":"ed25519:…","sig":"<base64url>"} over
// DomainWitness + checkpoint.SigningBytes().
type Cosignature struct {
	Witness dag.Key `json:"witness"`
	Sig     string  `json:"sig"`
}

// Verify checks that cs is a valid cosignature of c.
func (cs Cosignature) Verify(c Checkpoint) error {
	msg, err := c.SigningBytes()
	if err != nil {
		return err
	}
	sig, err := b64d(cs.Sig)
	if err != nil || !dag.Verify(cs.Witness, DomainWitness, msg, sig) {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: fmt.Sprintf("cosignature by %s does not verify", cs.Witness)}
	}
	return nil
}
