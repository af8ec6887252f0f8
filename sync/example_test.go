package sync_test

import (
	"context"
	"fmt"
	"net"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// The protocol runs over any stream: here an in-memory pipe between two
// engines. A fresh replica gets a whole space in one round trip.
func ExampleEngine() {
	ctx := context.Background()
	author := synctest.NewAuthor(1)
	space, root, _ := author.Session("example")
	alice := synctest.NewMem(synctest.Options{})
	alice.Submit(ctx, root)
	author.Write(ctx, alice, space, 500)

	bob := synctest.NewMem(synctest.Options{})
	var last ws.Progress
	pull := ws.NewEngine(bob, ws.Options{OnEvent: func(e ws.Event) {
		if e.Kind == ws.EventProgress {
			last = e.Progress
		}
	}})
	serve := ws.NewEngine(alice, ws.Options{})

	c1, c2 := net.Pipe()
	go func() {
		serve.Serve(ctx, "bob", c2)
		c2.Close()
	}()
	st, err := pull.Pull(ctx, "alice", c1, space)
	c1.Close()
	if err != nil {
		panic(err)
	}
	fmt.Println("round trips:", st.Rounds)
	fmt.Println("accepted:", st.Accepted)
	fmt.Println("progress:", last.EntriesDone, "of", last.EntriesExpected)
	// Output:
	// round trips: 1
	// accepted: 501
	// progress: 501 of 501
}
