package sync

import (
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	gosync "sync"
	"testing"
	"time"
)

// countingScope is a memory scope with a limit, counting what is reserved.
type countingScope struct {
	mu        gosync.Mutex
	used, max int
	limit     int
	// reserved lists the sizes reserved since record, when recording.
	reserved  []int
	recording bool
}

func (s *countingScope) ReserveMemory(n int, _ uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+n > s.limit {
		return errors.New("over limit")
	}
	s.used += n
	s.max = max(s.max, s.used)
	if s.recording {
		s.reserved = append(s.reserved, n)
	}
	return nil
}

// record starts listing the sizes reserved; recorded returns them.
func (s *countingScope) record() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved, s.recording = nil, true
}

func (s *countingScope) recorded() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserved
}

func (s *countingScope) ReleaseMemory(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used -= n
}

func (s *countingScope) get() (used, max int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.max
}

type scoped struct {
	io.ReadWriter
	s *countingScope
}

func (x scoped) MemoryScope() memoryScope { return x.s }

// A stream that announces a MaxFrame frame and sends one byte must not
// make the reader allocate the frame: 64 such half-open frames cost what
// arrived (and the stream buffers), not 64 × 4 MiB. On 9f8fa68 each read
// allocated MaxFrame up front (256 MiB here).
func TestHalfOpenFramesCostWhatArrived(t *testing.T) {
	const streams = 64
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var writers []*io.PipeWriter
	var wg, sent gosync.WaitGroup
	errs := make(chan error, streams)
	for range streams {
		r, w := io.Pipe()
		writers = append(writers, w)
		c := newConn(struct {
			io.Reader
			io.Writer
		}{r, io.Discard})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := c.read()
			errs <- err
		}()
		sent.Add(1)
		go func() {
			defer sent.Done()
			hdr := binary.AppendUvarint(nil, MaxFrame)
			w.Write(append(hdr, FrameBatch)) //nolint:errcheck // the reader ends on close
		}()
	}
	// A pipe's Write returns once the reader has taken every byte.
	sent.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	for _, w := range writers {
		w.Close()
	}
	wg.Wait()
	for range streams {
		if err := <-errs; !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("half-open frame read: %v, want unexpected EOF", err)
		}
	}
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d half-open frames of %d bytes announced: %d KiB allocated", streams, MaxFrame, grew>>10)
	if limit := uint64(streams * (256 << 10)); grew > limit {
		t.Fatalf("%d half-open frames allocated %d KiB, more than %d KiB", streams, grew>>10, limit>>10)
	}
}

// A frame's memory is reserved in the stream's scope while it arrives and
// released once read; a frame that does not fit the scope ends the read
// with an error that is no protocol error: the memory is short here, which
// says nothing of the peer, so nobody is charged for it.
func TestFrameMemoryReserved(t *testing.T) {
	scope := &countingScope{limit: 8 << 20}
	r, w := io.Pipe()
	c := newConn(scoped{struct {
		io.Reader
		io.Writer
	}{r, io.Discard}, scope})
	body := make([]byte, 3<<20)
	body[0] = FrameBatch
	go func() {
		hdr := binary.AppendUvarint(nil, uint64(len(body)))
		w.Write(hdr)      //nolint:errcheck
		w.Write(body[:1]) //nolint:errcheck
		w.Write(body[1:]) //nolint:errcheck
	}()
	typ, p, err := c.read()
	if err != nil || typ != FrameBatch || len(p) != len(body)-1 {
		t.Fatalf("read: %v %#x %d", err, typ, len(p))
	}
	used, most := scope.get()
	if used != 0 || most < len(body) || most > 2*len(body) {
		t.Fatalf("reserved %d at the end (want 0), at most %d (want %d … %d)", used, most, len(body), 2*len(body))
	}

	small := &countingScope{limit: 1 << 20}
	r2, w2 := io.Pipe()
	c2 := newConn(scoped{struct {
		io.Reader
		io.Writer
	}{r2, io.Discard}, small})
	go func() {
		w2.Write(binary.AppendUvarint(nil, uint64(len(body)))) //nolint:errcheck
		w2.Write(body)                                         //nolint:errcheck
	}()
	_, _, err = c2.read()
	if err == nil || CodeOf(err) != 0 {
		t.Fatalf("frame over the scope: %v, want an error with no protocol code", err)
	}
	if used, _ := small.get(); used != 0 {
		t.Fatalf("%d bytes still reserved after a refused frame", used)
	}
	w2.Close()
}

// Once a peer has sent whole frames on a stream, a frame no larger than
// what it sent is allocated once, at its length: not grown from
// frameChunk by doubling, which allocated about twice the frame and
// copied it as it grew. A frame announced larger than that still grows as
// its bytes arrive: a half-open one costs what arrived. Each growth is
// reserved in the stream's scope before it is allocated, so the
// reservations tell the allocations (the heap's own counters would also
// count what other goroutines of the test binary allocate meanwhile).
func TestFrameAllocatedWholeAfterWhatThePeerSent(t *testing.T) {
	const size = 1 << 20
	r, w := io.Pipe()
	scope := &countingScope{limit: 64 << 20}
	c := newConn(scoped{struct {
		io.Reader
		io.Writer
	}{r, io.Discard}, scope})
	body := make([]byte, size)
	body[0] = FrameBatch
	frame := append(binary.AppendUvarint(nil, size), body...)
	send := func(b []byte) {
		go w.Write(b) //nolint:errcheck // the reader checks what arrives
	}
	// read reads one frame and returns the sizes of the growths reserved
	// for it.
	read := func() ([]int, error) {
		scope.record()
		_, p, err := c.read()
		if err == nil && len(p) != size-1 {
			t.Fatalf("read %d bytes of payload, want %d", len(p), size-1)
		}
		return scope.recorded(), err
	}
	send(frame)
	first, err := read()
	if err != nil {
		t.Fatal(err)
	}
	send(frame)
	second, err := read()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("growths of the first frame of %d KiB: %v; of the second: %v", size>>10, first, second)
	if len(first) < 2 || first[0] != frameChunk {
		t.Errorf("the stream's first frame grew by %v: it should have started at %d bytes and doubled", first, frameChunk)
	}
	if len(second) != 1 || second[0] != size {
		t.Errorf("the second frame grew by %v, want its %d bytes at once", second, size)
	}
	if used, most := scope.get(); used != 0 || most > 2*size {
		t.Errorf("reserved %d at the end (want 0), at most %d", used, most)
	}
	// 2 MiB sent; a frame announced at 4 MiB, of which one byte comes.
	send(append(binary.AppendUvarint(nil, MaxFrame), FrameBatch))
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.Close()
	}()
	half, err := read()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("half-open frame: %v, want unexpected EOF", err)
	}
	if len(half) != 1 || half[0] != frameChunk {
		t.Errorf("a half-open frame of %d KiB announced after %d KiB sent grew by %v, want %d bytes", MaxFrame>>10, 2*size>>10, half, frameChunk)
	}
}

func TestFirstGrowth(t *testing.T) {
	for _, c := range []struct {
		size int
		sent uint64
		want int
	}{
		{100, 0, 100},                    // small frames fit the chunk
		{frameChunk + 1, 0, frameChunk},  // nothing sent yet: the chunk
		{1 << 20, 1<<20 - 1, frameChunk}, // a byte more than sent: the chunk
		{1 << 20, 1 << 20, 1 << 20},      // as much as sent: whole
		{MaxFrame, 10 << 20, MaxFrame},   // less than sent: whole
		{frameChunk - 1, 1 << 30, frameChunk - 1},
	} {
		if got := firstGrowth(c.size, c.sent); got != c.want {
			t.Errorf("firstGrowth(%d, %d) = %d, want %d", c.size, c.sent, got, c.want)
		}
	}
}
