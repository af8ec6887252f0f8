package replica_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// The id the envelope that made a session carries is the one its reads
// take: no string between authoring and reading.
func ExampleReplica_State() {
	ctx := context.Background()
	node, _ := dag.SignerFromSeed(make([]byte, 32))
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: node})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	b := ht.New(ht.Options{Label: "ids"})
	for _, tx := range []ht.Tx{b.Create, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), b.Create.ID)} {
		if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Err() != nil {
			panic(fmt.Sprint(err, rc.Err()))
		}
	}
	var session dag.ID = b.Session // what author.NewSession and Tx.Made give
	st, _, _ := r.State(ctx, session)
	roster, _ := r.Group(ctx, session, "roster")
	size, _ := r.LogSize(ctx, session)
	fmt.Println(r.Sessions()[0] == session, st.Label, len(roster.Members), "members,", size, "entries")

	_, _, err = r.State(ctx, dag.ID{}) // the zero ID names no session
	fmt.Println(errors.Is(err, replica.ErrUnknownSpace))
	_, err = dag.ParseID("notes") // a misspelt id never reaches the replica
	fmt.Println(errors.Is(err, dag.ErrInvalidID))
	// Output:
	// true ids 3 members, 2 entries
	// true
	// true
}

// Every read of a session's state refuses, as ErrUnknownSpace, an id the
// replica holds no session of: the zero ID (what a caller that dropped
// dag.ParseID's error holds) and a well-formed id of a session it never
// received; none of them makes one appear in Sessions.
func TestSessionReadsRefuseUnheldIDs(t *testing.T) {
	ctx := context.Background()
	r := openReplica(t, nil)
	b := ht.New(ht.Options{Label: "held"})
	if rc, err := r.Submit(ctx, b.Create.Bytes, b.Create.Attach); err != nil || rc.Err() != nil {
		t.Fatalf("create: %v %v", err, rc.Err())
	}
	other := ht.New(ht.Options{Label: "never sent"}).Session
	for _, id := range []dag.ID{{}, other} {
		reads := map[string]func() error{
			"State":     func() error { _, _, err := r.State(ctx, id); return err },
			"StateJSON": func() error { _, _, err := r.StateJSON(ctx, id); return err },
			"Summary":   func() error { _, _, err := r.Summary(ctx, id); return err },
			"Group":     func() error { _, err := r.Group(ctx, id, "roster"); return err },
			"Branches":  func() error { _, err := r.Branches(ctx, id); return err },
			"Branch":    func() error { _, err := r.Branch(ctx, id, "main"); return err },
			"ReadSession": func() error {
				s, err := r.ReadSession(ctx, id)
				if err == nil {
					s.Close()
				}
				return err
			},
			"Checkpoint": func() error { _, err := r.Checkpoint(ctx, id); return err },
		}
		for name, read := range reads {
			if err := read(); !errors.Is(err, replica.ErrUnknownSpace) {
				t.Errorf("%s(%v): %v, want an error wrapping ErrUnknownSpace", name, id, err)
			}
		}
		if _, ok := r.LastCheckpoint(id); ok {
			t.Errorf("LastCheckpoint(%v) found one", id)
		}
		if f := r.StateFinality(id); f != replica.Provisional {
			t.Errorf("StateFinality(%v) = %s, want provisional", id, f)
		}
	}
	if got := r.Sessions(); len(got) != 1 || got[0] != b.Session {
		t.Fatalf("Sessions() = %v, want only %s", got, b.Session)
	}
	if _, _, err := r.State(ctx, b.Session); err != nil {
		t.Fatalf("State of the held session: %v", err)
	}
}
