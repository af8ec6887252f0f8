package author

// This file is the key family: key.register (30k §4).

import (
	"context"

	"github.com/witan-dev/witan/dag"
)

// KeyRegister registers the author's own key in session.
func (a *Author) KeyRegister(ctx context.Context, session dag.ID, parents []dag.ID) (Tx, error) {
	return a.Seal(ctx, Draft{Type: dag.TxKeyRegister, Session: session, Parents: parents, Body: map[string]any{"key": a.Key()}})
}
