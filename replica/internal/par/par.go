// Package par splits work over the cores.
package par

import (
	"errors"
	"runtime"
	"sync"
)

// Run calls part on consecutive ranges [lo, hi) that cover [0, n): one
// range per core, but none shorter than chunk items (so at most
// ceil(n/chunk) ranges, and at least one, which may be empty). The first
// range runs on the caller's goroutine, the others each on its own. It
// returns when all have, with their errors joined.
func Run(n, chunk int, part func(lo, hi int) error) error {
	parts := max(1, min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = part(p*n/parts, (p+1)*n/parts)
		}()
	}
	errs[0] = part(0, n/parts)
	wg.Wait()
	return errors.Join(errs...)
}
