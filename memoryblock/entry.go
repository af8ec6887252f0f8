package memoryblock

import (
	"slices"

	"github.com/witan-dev/witan/dag"
)

// Entry returns b as an entry of the DAG of memory space space: ID is the
// block hash, Parents the lineage, and Data the hashed form (Canonical), so
// that the stored bytes name themselves: dag.Sum(Data) == ID. The claimed
// b.Hash is not stored; verify b (AcceptBlock) before making it an entry.
func (b Block) Entry(space string) dag.Entry {
	c := b.Canonical()
	return dag.Entry{ID: dag.Sum(c), Space: space, Parents: b.Parents(), Data: c}
}

// DecodeEntry reads back a block stored by Entry. Data must be the block's
// hashed form (DecodeCanonical), ID its hash (else BLOCK_HASH_MISMATCH),
// and Parents its lineage (else BLOCK_MALFORMED). The block's Hash is set,
// so it verifies.
func DecodeEntry(e dag.Entry) (Block, error) {
	b, err := DecodeCanonical(e.Data)
	if err != nil {
		return Block{}, err
	}
	if b.Hash != e.ID {
		return Block{}, errorf(CodeBlockHashMismatch, "", "entry %s holds the block %s", e.ID, b.Hash)
	}
	if !slices.Equal(b.Parents(), e.Parents) {
		return Block{}, errorf(CodeBlockMalformed, Lineage, "entry %s lists parents that are not the block's lineage", e.ID)
	}
	return b, nil
}
