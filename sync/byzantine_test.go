package sync_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// liar answers each request with whatever respond writes.
func liarPull(ctx context.Context, a *ws.Engine, space string, respond func(w io.Writer, req *ws.Request)) (ws.Stats, error) {
	c1, c2 := net.Pipe()
	go func() {
		defer c2.Close()
		br := bufio.NewReader(c2)
		for {
			buf, err := readFrame(br)
			if err != nil {
				return
			}
			req, err := ws.DecodeRequest(buf[1:])
			if err != nil {
				return
			}
			respond(c2, req)
		}
	}()
	defer c1.Close()
	return a.Pull(ctx, "liar", c1, space)
}

// respondWith writes a header, the items in batches of 50, and an end.
func respondWith(items []ws.Item, notFound []dag.ID) func(io.Writer, *ws.Request) {
	return func(w io.Writer, _ *ws.Request) {
		ws.WriteFrame(w, ws.Header{Entries: uint64(len(items))}.Encode())
		for i := 0; i < len(items); i += 50 {
			ws.WriteFrame(w, ws.EncodeBatch(items[i:min(i+50, len(items))]))
		}
		ws.WriteFrame(w, ws.End{NotFound: notFound}.Encode())
	}
}

func forged(t *testing.T, space string, parents []dag.ID, n int) []ws.Item {
	a := synctest.NewAuthor(66)
	var out []ws.Item
	for i := 0; i < n; i++ {
		data, _ := a.Entry(space, parents, i)
		env, _, _, err := dag.DecodeEnvelope(data)
		if err != nil {
			t.Fatal(err)
		}
		env.Sig[0] ^= 1
		out = append(out, ws.Item{Data: env.Canonical()})
	}
	return out
}

func orphans(space string, n int) []ws.Item { return orphansBy(67, space, n) }

func orphansBy(seed byte, space string, n int) []ws.Item {
	a := synctest.NewAuthor(seed)
	var out []ws.Item
	for i := 0; i < n; i++ {
		data, _ := a.Entry(space, []dag.ID{dag.Sum([]byte{byte(i), byte(i >> 8), 'x'})}, i)
		out = append(out, ws.Item{Data: data})
	}
	return out
}

func TestByzantinePeer(t *testing.T) {
	ctx := context.Background()
	honest, space := build(t, 50)
	before := heads(t, honest, space)
	hs := before
	otherSpace, _, _ := synctest.NewAuthor(9).Session("elsewhere")
	refEntry, _ := synctest.NewAuthor(68).Entry(space, hs, 1, dag.Sum([]byte("the real body")))
	cases := []struct {
		name    string
		respond func(io.Writer, *ws.Request)
		code    dag.Code // quarantine code expected, if any
		wire    ws.Code  // wire error expected, if any
	}{
		{"forged signatures", respondWith(forged(t, space, hs, 100), nil), dag.CodeBadSignature, 0},
		{"junk bytes", respondWith(slices.Repeat([]ws.Item{{Data: []byte("not json")}, {Data: []byte(`{"v":"0.10"}`)}}, 40), nil), dag.CodeSchema, 0},
		{"wrong space", respondWith(forged(t, otherSpace, nil, 0), nil), "", 0},
		{"object not matching its hash", respondWith(slices.Repeat([]ws.Item{{Data: refEntry, Objects: []dag.Object{dag.NewObject([]byte("a forged body"))}}}, 1), nil), dag.CodeUnpublishedReference, 0},
		{"never-resolving parents", respondWith(orphans(space, 400), nil), "", 0},
		{"parents it says it lacks", func() func(w io.Writer, req *ws.Request) {
			round := 0
			return func(w io.Writer, req *ws.Request) {
				if len(req.Want) > 0 {
					respondWith(nil, req.Want)(w, req)
					return
				}
				round++
				respondWith(orphansBy(69, space, 40*round)[40*(round-1):], nil)(w, req)
			}
		}(), "", 0},
		{"more entries than announced", func(w io.Writer, _ *ws.Request) {
			ws.WriteFrame(w, ws.Header{Entries: 1}.Encode())
			ws.WriteFrame(w, ws.EncodeBatch(orphans(space, 2)))
		}, "", ws.CodeMalformed},
		{"oversized frame", func(w io.Writer, _ *ws.Request) {
			w.Write(binary.AppendUvarint(nil, ws.MaxFrame+1))
		}, "", ws.CodeMalformed},
		{"batch before header", func(w io.Writer, _ *ws.Request) {
			ws.WriteFrame(w, ws.EncodeBatch(orphans(space, 1)))
		}, "", ws.CodeUnexpected},
		{"garbage frame", func(w io.Writer, _ *ws.Request) {
			ws.WriteFrame(w, []byte{ws.FrameHeader, 0xff})
		}, "", ws.CodeMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
			var banned, quarantined int
			var codes []dag.Code
			e := ws.NewEngine(honest, ws.Options{Clock: clock, Budget: ws.Budget{Malformed: 1, Invalid: 5}, OnEvent: func(ev ws.Event) {
				switch ev.Kind {
				case ws.EventPeerBanned:
					banned++
				case ws.EventQuarantined:
					quarantined++
					codes = append(codes, ev.Code)
				}
			}})
			// The peer keeps at it until it is cut off; that takes a
			// bounded number of attempts, each bounded in time.
			var err error
			tries := 0
			for ; tries < 10 && !errors.Is(err, ws.ErrRefused); tries++ {
				_, err = liarPull(ctx, e, space, tc.respond)
				if tc.wire != 0 && tries == 0 && ws.CodeOf(err) != tc.wire {
					t.Fatalf("error %v, want code %s", err, tc.wire)
				}
			}
			if tc.name != "wrong space" && banned != 1 {
				t.Fatalf("after %d tries: %d bans, last error %v", tries, banned, err)
			}
			if tc.code != "" && (quarantined == 0 || codes[0] != tc.code) {
				t.Fatalf("quarantined %d, codes %v", quarantined, codes)
			}
			if got := heads(t, honest, space); !slices.Equal(got, before) {
				t.Fatalf("heads changed: %v", got)
			}
			if tc.name == "wrong space" {
				return
			}
			if _, err := liarPull(ctx, e, space, tc.respond); !errors.Is(err, ws.ErrRefused) {
				t.Fatalf("a banned peer was served: %v", err)
			}
			clock.Add(11 * time.Minute)
			if ok, _ := e.Banned("liar"); ok {
				t.Fatal("ban did not end")
			}
		})
	}
	// Quarantined entries are remembered, and a good peer still syncs.
	if len(honest.Refused()) == 0 {
		t.Fatal("nothing quarantined")
	}
	good, _ := build(t, 60)
	st, err := pipePull(ctx, ws.NewEngine(honest, ws.Options{}), ws.NewEngine(good, ws.Options{}), space)
	// All ten new entries come, once each. A filter false positive (the
	// salt is random) may hold one back until it is wanted by id; its
	// children wait for it meanwhile, so they count as pending.
	if err != nil || st.Accepted+st.Pending != 10 || st.Duplicate != 0 || !sameHeads(t, space, honest, good) {
		t.Fatalf("good peer after the attacks: %v %+v", err, st)
	}
}

func TestSilentPeerCannotStall(t *testing.T) {
	honest, space := build(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := liarPull(ctx, ws.NewEngine(honest, ws.Options{}), space, func(w io.Writer, _ *ws.Request) {
		ws.WriteFrame(w, ws.Header{Entries: 10}.Encode()) // and then nothing
	})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("%v after %s", err, time.Since(start))
	}
}

func TestQuarantinedEntryIsNotReRequested(t *testing.T) {
	ctx := context.Background()
	honest, space := build(t, 5)
	hs := heads(t, honest, space)
	bad := forged(t, space, hs, 1)[0]
	badID := dag.Sum(bad.Data)
	// A valid child of the forged entry: it will wait for a parent that is
	// quarantined, which must not be asked for again.
	child, _ := synctest.NewAuthor(70).Entry(space, []dag.ID{badID}, 1)
	e := ws.NewEngine(honest, ws.Options{})
	var wants [][]dag.ID
	st, err := liarPull(ctx, e, space, func(w io.Writer, req *ws.Request) {
		wants = append(wants, req.Want)
		respondWith([]ws.Item{bad, {Data: child}}, nil)(w, req)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rounds != 1 || st.Quarantined != 2 || len(wants) != 1 {
		t.Fatalf("%+v wants %v", st, wants)
	}
	if code, ok, _ := honest.Quarantined(ctx, badID); !ok || code != dag.CodeBadSignature {
		t.Fatalf("quarantine: %v %v", code, ok)
	}
}

// TestMalformedRequesterIsCutOff: a requester that keeps sending garbage
// is answered with malformed, then refused once its budget is spent.
func TestMalformedRequesterIsCutOff(t *testing.T) {
	src, space := build(t, 3)
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	e := ws.NewEngine(src, ws.Options{Clock: clock, Budget: ws.Budget{Malformed: 2}})
	serve := func(frames ...[]byte) error { return serveFrames(e, "rude", false, frames...) }
	for i := 0; i < 3; i++ {
		if err := serve([]byte{ws.FrameRequest, 0xff}); ws.CodeOf(err) != ws.CodeMalformed {
			t.Fatalf("try %d: %v", i, err)
		}
	}
	good := (&ws.Request{Space: space}).Encode()
	if err := serve(good); !errors.Is(err, ws.ErrRefused) {
		t.Fatalf("a cut-off peer was served: %v", err)
	}
	clock.Add(time.Hour)
	if err := serve(good); err != nil {
		t.Fatalf("after the ban: %v", err)
	}
	if err := serve([]byte{ws.FrameBatch, 0}); ws.CodeOf(err) != ws.CodeUnexpected {
		t.Fatalf("a batch as request: %v", err)
	}
}

// TestFilterSaltIsFreshPerRequest: every request's filter has its own
// salt, so a false positive (or a ground id) in one is not in the next.
func TestFilterSaltIsFreshPerRequest(t *testing.T) {
	honest, space := build(t, 20)
	var salts [][]byte
	_, err := liarPull(context.Background(), ws.NewEngine(honest, ws.Options{}), space, func(w io.Writer, req *ws.Request) {
		if req.Filter == nil {
			t.Error("no filter")
			return
		}
		salts = append(salts, req.Filter.Salt())
		if len(req.Want) > 0 {
			respondWith(nil, req.Want)(w, req)
			return
		}
		respondWith(orphansBy(71, space, 1), nil)(w, req) // forces a second request
	})
	if err != nil || len(salts) != 2 || len(salts[0]) < 16 || bytes.Equal(salts[0], salts[1]) {
		t.Fatalf("%v: salts %x", err, salts)
	}
}

// TestRequestRate: a requester past its rate is refused until the minute
// is over, without a ban.
func TestRequestRate(t *testing.T) {
	src, space := build(t, 3)
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	b := ws.NewEngine(src, ws.Options{Clock: clock, Budget: ws.Budget{Requests: 3}})
	a := ws.NewEngine(synctest.NewMem(synctest.Options{}), ws.Options{})
	for i := 0; i < 3; i++ {
		if _, err := pipePull(context.Background(), a, b, space); err != nil {
			t.Fatalf("pull %d: %v", i, err)
		}
	}
	if _, err := pipePull(context.Background(), a, b, space); ws.CodeOf(err) != ws.CodeRefused {
		t.Fatalf("fourth pull in a minute: %v", err)
	}
	clock.Add(time.Minute)
	if _, err := pipePull(context.Background(), a, b, space); err != nil {
		t.Fatalf("next minute: %v", err)
	}
}

// TestBudgetForgets: mishaps spread over more than a ban period never add
// up to a ban.
func TestBudgetForgets(t *testing.T) {
	honest, space := build(t, 3)
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	e := ws.NewEngine(honest, ws.Options{Clock: clock, Budget: ws.Budget{Invalid: 5, Ban: time.Minute}})
	for i := 0; i < 10; i++ {
		bad := forged(t, space, heads(t, honest, space), 4)
		for j := range bad {
			bad[j].Data = append(bad[j].Data[:len(bad[j].Data)-1:len(bad[j].Data)-1], byte('0'+i), '}') // distinct junk
		}
		if _, err := liarPull(context.Background(), e, space, respondWith(bad, nil)); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		clock.Add(2 * time.Minute)
	}
	if banned, _ := e.Banned("liar"); banned {
		t.Fatal("banned for mishaps spread over time")
	}
}

// TestPeerComplaintIsNotCharged: a peer's own error frame saying we were
// malformed is its complaint, not its fault: it costs it nothing.
func TestPeerComplaintIsNotCharged(t *testing.T) {
	honest, space := build(t, 3)
	e := ws.NewEngine(honest, ws.Options{Budget: ws.Budget{Malformed: 1}})
	for i := 0; i < 3; i++ {
		_, err := liarPull(context.Background(), e, space, func(w io.Writer, _ *ws.Request) {
			ws.WriteFrame(w, ws.EncodeError(ws.CodeMalformed, "you"))
		})
		var pe *ws.ProtocolError
		if !errors.As(err, &pe) || !pe.Remote || pe.Code != ws.CodeMalformed {
			t.Fatalf("%v", err)
		}
	}
	if banned, _ := e.Banned("liar"); banned {
		t.Fatal("banned for the peer's complaint")
	}
}
