package replica_test

import (
	"context"
	"errors"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestRejectionIsAnError: a rejected receipt's Err is a *replica.Rejection
// (errors.As) matching replica.ErrRejected (errors.Is), whose code
// dag.CodeOf reads and whose receipt is the signed one; an accepted
// receipt's Err is nil.
func TestRejectionIsAnError(t *testing.T) {
	ctx := context.Background()
	r := openReplica(t, nil)
	b := ht.New(ht.Options{})
	// A group write of a session this replica does not hold yet.
	early := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), b.Create.ID)
	rc, err := r.Submit(ctx, early.Bytes, early.Attach)
	if err != nil {
		t.Fatal(err)
	}
	err = rc.Err()
	var rej *replica.Rejection
	if !errors.As(err, &rej) || rej.Receipt != rc {
		t.Fatalf("errors.As: %v (%T)", err, err)
	}
	if !errors.Is(err, replica.ErrRejected) {
		t.Errorf("errors.Is(%v, ErrRejected) is false", err)
	}
	if c := dag.CodeOf(err); c != dag.CodeUnknownParent {
		t.Errorf("dag.CodeOf = %q, want %s", c, dag.CodeUnknownParent)
	}
	if err := rej.Receipt.Verify(); err != nil {
		t.Errorf("the rejection's receipt: %v", err)
	}
	rc, err = r.Submit(ctx, b.Create.Bytes, b.Create.Attach)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Err(); err != nil {
		t.Errorf("accepted receipt's Err: %v", err)
	}
}
