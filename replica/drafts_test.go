package replica_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
)

// TestDraftStoreBoundsSurviveRestart: the node-local draft store is
// bounded in drafts and in bytes, and the bounds count what the store
// holds, so a restart does not reset them. With MaxDrafts 2 and
// MaxDraftBytes 100: a draft whose salt does not give its commitment is
// refused; a 40-byte draft and a 50-byte one are kept (90 bytes); the
// same commitment again is not new and writes nothing; a third draft is
// refused ErrDraftsFull, before and after reopening the directory, and
// both kept drafts read back byte for byte. Reopened with MaxDrafts 3, a
// 20-byte draft is refused (110 > 100 bytes) and a 10-byte one kept. The
// drafts live in the node-local space witan-local/drafts.
func TestDraftStoreBoundsSurviveRestart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	session := dag.Sum([]byte("a session"))
	draft := func(seed byte, size int) replica.Draft {
		salt := bytes.Repeat([]byte{seed}, house.SaltSize)
		change := dag.Sum([]byte{seed})
		return replica.Draft{Session: session.String(), Branch: "r-b", Commitment: house.Commitment(salt, change), Change: change,
			Salt: salt, Objects: [][]byte{bytes.Repeat([]byte{'x'}, size)}}
	}
	open := func(max int) *replica.Replica {
		r, err := replica.Open(ctx, replica.Options{Dir: dir, NodeKey: nodeKey(t, 0), MaxDrafts: max, MaxDraftBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open(2)
	bad := draft(1, 40)
	bad.Salt = bytes.Repeat([]byte{9}, house.SaltSize)
	if ok, err := r.DepositDraft(ctx, bad); ok || err == nil {
		t.Fatalf("a draft that does not match its commitment: %v %v", ok, err)
	}
	for _, d := range []replica.Draft{draft(1, 40), draft(2, 50)} {
		if ok, err := r.DepositDraft(ctx, d); !ok || err != nil {
			t.Fatalf("deposit: %v %v", ok, err)
		}
	}
	if ok, err := r.DepositDraft(ctx, draft(1, 40)); ok || err != nil {
		t.Fatalf("the same draft again: %v %v, want not new and no error", ok, err)
	}
	if _, err := r.DepositDraft(ctx, draft(3, 1)); !errors.Is(err, replica.ErrDraftsFull) {
		t.Fatalf("a third draft with MaxDrafts 2: %v", err)
	}
	r.Close()

	r = open(2)
	if _, err := r.DepositDraft(ctx, draft(3, 1)); !errors.Is(err, replica.ErrDraftsFull) {
		t.Fatalf("a third draft after the restart: %v", err)
	}
	for _, want := range []replica.Draft{draft(1, 40), draft(2, 50)} {
		got, ok, err := r.Draft(ctx, session, want.Commitment)
		if !ok || err != nil || got.Change != want.Change || !bytes.Equal(got.Salt, want.Salt) || got.Branch != "r-b" ||
			len(got.Objects) != 1 || !bytes.Equal(got.Objects[0], want.Objects[0]) {
			t.Fatalf("draft %s after the restart: %v %v %+v", want.Commitment, ok, err, got)
		}
	}
	if _, ok, err := r.Draft(ctx, session, draft(3, 1).Commitment); ok || err != nil {
		t.Fatalf("a refused draft is held: %v %v", ok, err)
	}
	r.Close()

	r = open(3)
	defer r.Close()
	if _, err := r.DepositDraft(ctx, draft(4, 20)); !errors.Is(err, replica.ErrDraftsFull) {
		t.Fatalf("20 bytes past 90 of 100: %v", err)
	}
	if ok, err := r.DepositDraft(ctx, draft(5, 10)); !ok || err != nil {
		t.Fatalf("10 bytes past 90 of 100: %v %v", ok, err)
	}
	r.Close()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spaces, err := st.Spaces(ctx)
	if err != nil || !slices.Equal(spaces, []string{replica.DraftSpace, replica.IdentitySpace}) || !replica.IsLocalSpace(replica.DraftSpace) {
		t.Fatalf("store spaces %v %v, want only %s and %s", spaces, err, replica.DraftSpace, replica.IdentitySpace)
	}
}
