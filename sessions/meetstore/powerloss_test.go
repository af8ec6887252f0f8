package meetstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag/crashtest"
)

// TestPowerLossChild is the child of TestPowerLoss: it opens the store in
// MEETSTORE_PL_DIR with the clock at 2026-10-17 00:00 UTC, so Open
// forgets the level-3 days up to 10-14, prints "forgotten", then files
// copies until the power is cut, printing "put ITEM" once each Put has
// returned. After an error it waits to be killed: only the kill ends it.
func TestPowerLossChild(t *testing.T) {
	dir := os.Getenv("MEETSTORE_PL_DIR")
	if dir == "" {
		t.Skip("only run as the child of TestPowerLoss")
	}
	c := &clock{t: utc("2026-10-17T00:00:00Z")}
	s, err := Open(context.Background(), dir, Options{Clock: c})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		select {}
	}
	fmt.Println("forgotten")
	for i := 0; ; i++ {
		item := fmt.Sprintf("later%05d", i)
		cs := map[int][]byte{1: []byte(item + "@1"), 2: []byte(item + "@2"), 3: []byte(item + "@3")}
		if _, err := s.Put(context.Background(), []byte(item), c.Now(), ClassKeep, cs); err != nil {
			select {}
		}
		fmt.Println("put", item)
	}
}

// TestPowerLoss: the meeting store on a LazyFS disk. Thirty items are
// filed on 2026-10-14 at levels 1-3 and the store is closed; a child
// opens it at the midnight that starts 10-17, which destroys the level-3
// key of 10-14 (keep 3 days, §7.8), then files more copies; the power is
// cut at a random moment 0-600 ms after the destruction returned and the
// child is killed. On what reached the disk: the destroyed seed is in no
// file; opened with the clock set back to 10-14 the store still cannot
// read the level-3 copies of that day (the key is gone, not hidden by the
// clock); the level-2 copies of that day, and every copy whose Put
// returned before the cut, read back whole. WITAN_POWERLOSS_MEET sets
// the number of cuts (default 3).
func TestPowerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a LazyFS disk and cuts its power; skipped with -short")
	}
	rounds := crashtest.Count(t, "WITAN_POWERLOSS_MEET", 3)
	rng := crashtest.Rand(t, "WITAN_POWERLOSS_SEED", 4)
	for round := range rounds {
		t.Run(fmt.Sprint("cut", round), func(t *testing.T) {
			d := crashtest.Mount(t)
			dir := filepath.Join(d.Mnt, "meetings")
			c := &clock{t: utc("2026-10-14T09:00:00Z")}
			s := open(t, dir, c)
			for i := 0; i < 30; i++ {
				put(t, s, fmt.Sprintf("rec%02d", i), c.Now(), ClassKeep, 1, 2, 3)
			}
			seed3, _ := s.seedOf(3, ClassKeep)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if len(rawContains(t, dir, seed3[:])) == 0 {
				t.Fatal("the level-3 seed is in no file before forgetting: the check would be vacuous")
			}

			cmd, out := crashtest.Start(t, "TestPowerLossChild", "MEETSTORE_PL_DIR="+dir)
			lines := make(chan string, 1024)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			select {
			case l := <-lines:
				if l != "forgotten" {
					t.Fatalf("the child's first line: %q", l)
				}
			case <-time.After(60 * time.Second):
				crashtest.Kill(cmd)
				t.Fatal("the child did not forget in 60 s")
			}
			wait := time.Duration(rng.IntN(600)) * time.Millisecond
			time.Sleep(wait)
			cutErr := d.PowerCut()
			crashtest.Kill(cmd)
			var acked []string
			for l := range lines {
				if item, ok := strings.CutPrefix(l, "put "); ok {
					acked = append(acked, item)
				}
			}
			if err := crashtest.WaitKilled(cmd); err != nil {
				t.Fatal(err)
			}
			if cutErr != nil {
				t.Fatal(cutErr)
			}
			t.Logf("cut %v after the destruction, %d copies' Puts had returned", wait, len(acked))

			root := filepath.Join(d.Root, "meetings")
			if in := rawContains(t, root, seed3[:]); len(in) != 0 {
				t.Errorf("the destroyed level-3 seed is back on the disk after the cut, in %v", in)
			}
			c.Set(utc("2026-10-14T09:00:00Z"))
			s = open(t, root, c)
			defer s.Close()
			ctx := context.Background()
			for i := 0; i < 30; i++ {
				item := fmt.Sprintf("rec%02d", i)
				if cp, err := s.Get(ctx, []byte(item), 3); !errors.Is(err, ErrNotFound) {
					t.Errorf("%s at level 3 after the cut, clock set back: %q %v; want it forgotten", item, cp.Plain, err)
				}
				if cp, err := s.Get(ctx, []byte(item), 2); err != nil || string(cp.Plain) != item+"@2" {
					t.Errorf("%s at level 2 after the cut: %q %v; want %q", item, cp.Plain, err, item+"@2")
				}
			}
			for _, item := range acked {
				for r := 1; r <= 3; r++ {
					want := fmt.Sprintf("%s@%d", item, r)
					if cp, err := s.Get(ctx, []byte(item), r); err != nil || string(cp.Plain) != want {
						t.Errorf("%s at level %d, filed before the cut: %q %v; want %q", item, r, cp.Plain, err, want)
					}
				}
			}
		})
	}
}
