package sessions

import (
	"bytes"
	"io"
	"testing"
)

// Expected strings worked out by hand: 7 500 ms is 7 s 500 ms; 125 300 ms
// is 2 min 5 s 300 ms; 3 725 300 ms is 1 h (3 600 000) + 2 min (120 000) +
// 5 s 300 ms; 3 days are 259 200 000 ms.
func TestTimeString(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{0, "0.000s"},
		{7_500, "7.500s"},
		{59_999, "59.999s"},
		{60_000, "1m00.000s"},
		{125_300, "2m05.300s"},
		{3_600_000, "1h00m00.000s"},
		{3_725_300, "1h02m05.300s"},
		{86_399_999, "23h59m59.999s"},
		{259_200_000, "3d00h00m00.000s"},
		{-125_300, "-2m05.300s"},
		{NoTime, "no-time"},
		// 2^62 ms = 4 611 686 018 427 387 s 904 ms = 53 375 995 583 d 15 h 36 min
		// 27 s 904 ms: the negation does not overflow.
		{-1 << 62, "-53375995583d15h36m27.904s"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
	if got := Time(605_000).Seconds(); got != "605.000s" {
		t.Errorf("Seconds = %q, want 605.000s", got)
	}
}

func TestDeterministicEntropy(t *testing.T) {
	a, b := make([]byte, 300), make([]byte, 300)
	if _, err := io.ReadFull(DeterministicEntropy(250), a); err != nil {
		t.Fatal(err)
	}
	io.ReadFull(DeterministicEntropy(250), b)
	if !bytes.Equal(a, b) {
		t.Fatal("two sources with the same seed differ")
	}
	// seed+1, seed+2, … wrapping at 256.
	if a[0] != 251 || a[4] != 255 || a[5] != 0 || a[6] != 1 {
		t.Fatalf("bytes %v", a[:8])
	}
	e := newEngine(t, nil)
	out, err := e.Step(Speech{Label: "alice", Start: 0, End: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Session.String(); got != "0102030405060708" {
		t.Fatalf("first session ID with seed 0 = %s, want 0102030405060708", got)
	}
}

func TestSegmentLookup(t *testing.T) {
	e := newEngine(t, nil)
	if _, ok := e.Segment(0); ok {
		t.Fatal("a segment with no session open")
	}
	step(t, e, Speech{Label: "alice", Start: 0, End: 2000, Ref: 41})
	step(t, e, Speech{Label: "bob", Start: 3000, End: 5000, Ref: 42})
	u, ok := e.Segment(1)
	if !ok || u.Seq != 1 || u.Ref != 42 || u.Voice != "v2" || u.Start != 3000 || u.End != 5000 {
		t.Fatalf("Segment(1) = %+v, %v", u, ok)
	}
	// goldfish-v01 files at δ₀ = 3 with nothing said.
	if u.Stamped != 3 || u.Held != Unset {
		t.Fatalf("Segment(1) levels s=%d h=%d, want 3 and unset", u.Stamped, u.Held)
	}
	for _, seq := range []int{-1, 2} {
		if _, ok := e.Segment(seq); ok {
			t.Errorf("Segment(%d) found", seq)
		}
	}
}
