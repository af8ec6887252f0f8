package par

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// The ranges cover [0, n) once each, in as many parts as the cores allow
// but none under chunk, and every part's error comes back.
func TestRun(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	for _, tc := range []struct{ n, chunk, parts int }{
		{0, 128, 1},
		{1, 128, 1},
		{128, 128, 1},
		{129, 128, min(cores, 2)},
		{10_000, 128, min(cores, 79)},
	} {
		var mu sync.Mutex
		var got [][2]int
		err := Run(tc.n, tc.chunk, func(lo, hi int) error {
			mu.Lock()
			got = append(got, [2]int{lo, hi})
			mu.Unlock()
			return nil
		})
		if err != nil || len(got) != tc.parts {
			t.Fatalf("n %d chunk %d: %d parts (%v), want %d", tc.n, tc.chunk, len(got), err, tc.parts)
		}
		slices.SortFunc(got, func(a, b [2]int) int { return a[0] - b[0] })
		at := 0
		for _, r := range got {
			if r[0] != at || r[1] < r[0] {
				t.Fatalf("n %d: ranges %v do not cover it once", tc.n, got)
			}
			at = r[1]
		}
		if at != tc.n {
			t.Fatalf("n %d: ranges %v end at %d", tc.n, got, at)
		}
	}
	bad := errors.New("bad")
	if err := Run(1000, 1, func(lo, hi int) error {
		if lo == 0 {
			return bad
		}
		return nil
	}); !errors.Is(err, bad) {
		t.Fatalf("err = %v, want the first part's", err)
	}
}
