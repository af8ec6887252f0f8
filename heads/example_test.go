package heads_test

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
)

func Example() {
	a := dag.Sum([]byte("a"))
	b := dag.Sum([]byte("b"))

	// A salted summary of entries for one sync session.
	salt := []byte("per-session-salt") // draw it with crypto/rand
	bloom, _ := heads.NewBloom(salt, 100, 10)
	bloom.Add(a)
	fmt.Println(bloom.Has(a), bloom.Has(b))
	// Output:
	// true false
}
