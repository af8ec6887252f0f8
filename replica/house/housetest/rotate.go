package housetest

import (
	"context"

	"github.com/witan-dev/witan/dag"
)

// KeyRotate rotates member's key to s's key, co-signed by registrar (an
// admin of the session's registrar group); after may be the zero ID
// (compromised_after null).
func (b *Builder) KeyRotate(s *dag.Signer, member dag.Key, after dag.ID, registrar *dag.Signer, parents ...dag.ID) Tx {
	return b.must(b.author(s).KeyRotate(context.Background(), b.Session, given(parents), member, after, registrar))
}
