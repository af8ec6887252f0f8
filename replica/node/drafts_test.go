package node_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
)

// depositTestDraft keeps a draft in n's replica under session: its
// object is text, the salt 32 bytes of seed, the change the hash of the
// text (the replica checks only that salt and change give the
// commitment; httpapi checks the commitment is a branch's).
func depositTestDraft(t *testing.T, n interface {
	Replica() *replica.Replica
}, session, text string, seed byte) replica.Draft {
	t.Helper()
	salt := bytes.Repeat([]byte{seed}, house.SaltSize)
	change := dag.Sum([]byte(text))
	d := replica.Draft{Session: session, Branch: "r-n1", Commitment: house.Commitment(salt, change), Change: change,
		Salt: salt, Objects: [][]byte{[]byte(`"` + text + `"`)}}
	if ok, err := n.Replica().DepositDraft(context.Background(), d); !ok || err != nil {
		t.Fatalf("deposit: %v %v", ok, err)
	}
	return d
}

// The node-local draft store (witan-local/drafts) is hidden like the
// other node-local spaces: not listed, no heads, no log, its entries not
// served by Get.
func TestNodeHidesDraftSpace(t *testing.T) {
	ctx := context.Background()
	n := openNode(t)
	space := newSession(t, n)
	depositTestDraft(t, n, space.String(), "The period is 70 days.", 3)
	stored, err := n.Store().Heads(ctx, replica.DraftSpace)
	if err != nil || len(stored) != 1 {
		t.Fatalf("store heads of %s: %v %v", replica.DraftSpace, stored, err)
	}
	offered, err := n.Spaces(ctx)
	if err != nil || slices.Contains(offered, replica.DraftSpace) || !slices.Contains(offered, space.String()) {
		t.Fatalf("Spaces %v %v: want the session and not %s", offered, err, replica.DraftSpace)
	}
	if h, _ := n.Heads(ctx, replica.DraftSpace); len(h) != 0 {
		t.Errorf("Heads = %v", h)
	}
	if lg, _ := n.Log(ctx, replica.DraftSpace, 0, 0); len(lg) != 0 {
		t.Errorf("Log = %v", lg)
	}
	if _, err := n.Get(ctx, stored[0]); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("Get of the draft's entry: %v, want ErrNotFound", err)
	}
}
