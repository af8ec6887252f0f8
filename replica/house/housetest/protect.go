package housetest

import (
	"context"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// KeyRotate rotates member's key to s's key, co-signed by registrar (an
// admin of the session's registrar group); after may be the zero ID
// (compromised_after null).
func (b *Builder) KeyRotate(s *dag.Signer, member dag.Key, after dag.ID, registrar *dag.Signer, parents ...dag.ID) Tx {
	return b.must(b.author(s).KeyRotate(context.Background(), b.Session, given(parents), member, after, registrar))
}

// RestrictedAppend commits to a change with ops on top of parent on the
// restricted branch; the salt is derived from the change's position so
// runs are reproducible (tests only: real salts are random). The content
// is kept in the returned Sealed, not in b.Objects: it is not attached.
func (b *Builder) RestrictedAppend(s *dag.Signer, branch string, parent dag.ID, ops []statute.Op, salt byte, parents ...dag.ID) (Tx, author.Sealed) {
	base := b.Trees[parent]
	if base == nil {
		panic("housetest: unknown parent change")
	}
	sl := make([]byte, house.SaltSize)
	for i := range sl {
		sl[i] = salt + byte(i)
	}
	tx, sealed, err := b.author(s).RestrictedAppend(context.Background(), b.Session, author.Change{Branch: branch, Parent: parent, Base: base, Ops: ops}, sl, given(parents))
	tx = b.must(tx, err)
	b.Trees[sealed.Change] = sealed.Result
	return tx, sealed
}

// Reveal reveals sealed changes of the restricted branch.
func (b *Builder) Reveal(s *dag.Signer, branch string, sealed []author.Sealed, parents ...dag.ID) Tx {
	return b.must(b.author(s).BranchReveal(context.Background(), b.Session, branch, sealed, given(parents)))
}

// RestrictedBranchCreate creates a restricted branch forked from
// srcBranch at srcChange.
func (b *Builder) RestrictedBranchCreate(s *dag.Signer, name, owner, srcBranch string, srcChange dag.ID, merge, gov rules.Ref, parents ...dag.ID) Tx {
	return b.must(b.author(s).BranchCreate(context.Background(), b.Session, author.Branch{Name: name, Owner: owner, Restricted: true,
		SourceBranch: srcBranch, SourceChange: srcChange, MergeRule: merge, GovernanceRule: gov, Texts: [][]byte{RuleText}}, given(parents)))
}
