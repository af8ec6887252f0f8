package heads_test

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
)

func Example() {
	root := dag.Sum([]byte("root"))
	a := dag.Sum([]byte("a"))
	b := dag.Sum([]byte("b"))

	f := heads.New()
	f.Add(a, []dag.ID{root}) // a child may arrive before its parent
	f.Add(b, []dag.ID{root})
	f.Add(root, nil) // root is not a head: a and b list it
	fmt.Println(f.Len(), f.IsHead(a), f.IsHead(b), f.IsHead(root))

	// The digest names the head set, whatever the order.
	fmt.Println(f.Digest() == heads.Digest([]dag.ID{b, a}))

	// A salted summary of entries for one sync session.
	salt := []byte("per-session-salt") // draw it with crypto/rand
	bloom, _ := heads.NewBloom(salt, 100, 10)
	bloom.Add(a)
	fmt.Println(bloom.Has(a))
	// Output:
	// 2 true true false
	// true
	// true
}
