package author

// This file is the group family: group.create and group.update (30k §4).

import (
	"context"

	"github.com/witan-dev/witan/dag"
)

// Group is a group object: its id (without "group:"), members and admins.
type Group struct {
	ID      string
	Members []dag.Key
	Admins  []dag.Key
}

func (g Group) object() map[string]any {
	return map[string]any{"id": g.ID, "members": keyStrings(g.Members), "admins": keyStrings(g.Admins)}
}

func keyStrings(ks []dag.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	return out
}

// GroupCreate creates group g in session; the body is the group object.
// parents nil means the session's current heads.
func (a *Author) GroupCreate(ctx context.Context, session dag.ID, g Group, parents []dag.ID) (Tx, error) {
	return a.Seal(ctx, Draft{Type: dag.TxGroupCreate, Session: session, Parents: parents, Body: g.object()})
}

// GroupUpdate publishes a new version of group g.ID: the body names the
// group object (Tx.Made), which travels as an attachment.
func (a *Author) GroupUpdate(ctx context.Context, session dag.ID, g Group, parents []dag.ID) (Tx, error) {
	obj, id, err := object(g.object())
	if err != nil {
		return Tx{}, err
	}
	tx, err := a.Seal(ctx, Draft{Type: dag.TxGroupUpdate, Session: session, Parents: parents, Body: ref("group", id), Attach: [][]byte{obj}})
	if err != nil {
		return Tx{}, err
	}
	tx.Made = id
	return tx, nil
}
