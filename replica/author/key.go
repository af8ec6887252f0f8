package author

// This file is the key family: key.register and key.rotate (30k §4).

import (
	"context"
	"encoding/base64"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// KeyRegister registers the author's own key in session.
func (a *Author) KeyRegister(ctx context.Context, session dag.ID, parents []dag.ID) (Tx, error) {
	return a.Seal(ctx, Draft{Type: dag.TxKeyRegister, Session: session, Parents: parents, Body: map[string]any{"key": a.Key()}})
}

// KeyRotate rotates member's key to the author's key (30k §4, D62): the
// envelope is signed by the new key (the Author) and the body carries a
// co-signature by registrar, an admin of the session's registrar group,
// over the JCS of the body without "cosig" after house.DomainCosig
// (docs/wire-format.md, provisional). compromisedAfter is the id of the
// entry whose causal past holds the member's last valid ballots by the old
// key (a causal cut, docs/deviations.md); zero means null (not compromised).
func (a *Author) KeyRotate(ctx context.Context, session dag.ID, parents []dag.ID, member dag.Key, compromisedAfter dag.ID, registrar *dag.Signer) (Tx, error) {
	body := map[string]any{"member": member.String(), "new": a.Key().String(), "compromised_after": nil}
	if compromisedAfter.Valid() {
		body["compromised_after"] = compromisedAfter.String()
	}
	msg, err := dag.Marshal(body)
	if err != nil {
		return Tx{}, err
	}
	body["cosig"] = map[string]any{"key": registrar.Key().String(),
		"sig": base64.RawURLEncoding.EncodeToString(registrar.Sign(house.DomainCosig, msg))}
	return a.Seal(ctx, Draft{Type: dag.TxKeyRotate, Session: session, Parents: parents, Body: body})
}
