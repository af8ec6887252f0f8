package sync_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// rangesPipe is one end of a pipe over which the requester may send
// FrameLogRequest, as a stream of the ranges protocol is.
type rangesPipe struct{ net.Conn }

func (rangesPipe) LogRanges() bool { return true }

// serveFrames sends frames to e's Serve as peer over a pipe (one of the
// ranges protocol's when ranges), reads the answer up to its end or an
// error frame, hangs up, and returns what Serve returned.
func serveFrames(e *ws.Engine, peer string, ranges bool, frames ...[]byte) error {
	c1, c2 := net.Pipe()
	var s io.ReadWriter = c2
	if ranges {
		s = rangesPipe{c2}
	}
	done := make(chan error, 1)
	go func() { done <- e.Serve(context.Background(), peer, s); c2.Close() }()
	go func() {
		defer c1.Close()
		for _, f := range frames {
			ws.WriteFrame(c1, f)
		}
		br := bufio.NewReader(c1)
		for {
			buf, err := readFrame(br)
			if err != nil || buf[0] == ws.FrameEnd || buf[0] == ws.FrameError {
				return
			}
		}
	}()
	return <-done
}

// readFrame reads one frame's body (type byte first) from br, as
// WriteFrame wrote it.
func readFrame(br *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(br, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// seeded returns a deterministic io.Reader for filter salts.
func seeded(seed uint64) io.Reader { return rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}) }

type fakeClock struct {
	mu  gosync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// pipePull pulls space into a from b over an in-memory pipe.
func pipePull(ctx context.Context, a, b *ws.Engine, space string) (ws.Stats, error) {
	c1, c2 := net.Pipe()
	done := make(chan error, 1)
	go func() {
		err := b.Serve(ctx, fmt.Sprintf("%p", a), c2)
		c2.Close()
		done <- err
	}()
	st, err := a.Pull(ctx, fmt.Sprintf("%p", b), c1, space)
	c1.Close()
	serr := <-done
	if err == nil && serr != nil && !errors.Is(serr, io.ErrClosedPipe) {
		err = serr
	}
	return st, err
}

func heads(t testing.TB, r *synctest.Replica, space string) []dag.ID {
	t.Helper()
	h, err := r.Heads(context.Background(), space)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sameHeads(t testing.TB, space string, rs ...*synctest.Replica) bool {
	t.Helper()
	first := heads(t, rs[0], space)
	for _, r := range rs[1:] {
		if !slices.Equal(first, heads(t, r, space)) {
			return false
		}
	}
	return len(first) > 0
}

// build returns a replica holding a session and n entries written by
// three authors, with concurrent branches merged now and then.
func build(t testing.TB, n int) (*synctest.Replica, string) {
	t.Helper()
	ctx := context.Background()
	r := synctest.NewMem(synctest.Options{})
	a := synctest.NewAuthor(1)
	space, root, _ := a.Session("test")
	if _, err := r.Submit(ctx, root); err != nil {
		t.Fatal(err)
	}
	extend(t, r, space, n, 1)
	return r, space
}

// extend writes n entries to r: authors take turns writing on top of one
// head only (making branches) or all heads (merging).
func extend(t testing.TB, r *synctest.Replica, space string, n int, seed byte) []dag.ID {
	t.Helper()
	ctx := context.Background()
	authors := []*synctest.Author{synctest.NewAuthor(seed), synctest.NewAuthor(seed + 50), synctest.NewAuthor(seed + 100)}
	var out []dag.ID
	for i := 0; i < n; i++ {
		hs := heads(t, r, space)
		ps := hs
		if i%5 != 0 && len(hs) > 1 {
			ps = hs[i%len(hs) : i%len(hs)+1]
		}
		if len(ps) > 8 {
			ps = ps[:8]
		}
		data, id := authors[i%3].Entry(space, ps, i+int(seed)*1_000_000)
		res, err := r.Submit(ctx, data)
		if err != nil || res.Outcome != ws.Accepted {
			t.Fatalf("submit: %v %+v", err, res)
		}
		out = append(out, id)
	}
	return out
}

// count returns the number of applied entries of space in r.
func count(t testing.TB, r *synctest.Replica, space string) int {
	t.Helper()
	ids, err := r.Log(context.Background(), space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}
