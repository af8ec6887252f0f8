package fuzz

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// FuzzSyncDecodeRequest: any bytes decode to a request that re-encodes to
// the same bytes, or fail with CodeMalformed.
func FuzzSyncDecodeRequest(f *testing.F) {
	filter, _ := heads.NewBloom(make([]byte, 16), 3, sync.BitsPerID)
	filter.Add(dag.Sum([]byte("a")))
	for _, r := range []sync.Request{
		{Space: "s"},
		{Space: "s", Heads: []dag.ID{dag.Sum([]byte("h"))}, Common: []dag.ID{dag.Sum([]byte("c"))}, Filter: filter},
		{Space: "s", Want: []dag.ID{dag.Sum([]byte("w")), dag.Sum([]byte("x"))}},
	} {
		f.Add(r.Encode()[1:])
	}
	f.Add([]byte{1, 's', 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := sync.DecodeRequest(in)
		if err != nil {
			if sync.CodeOf(err) != sync.CodeMalformed {
				t.Fatalf("error without CodeMalformed: %v", err)
			}
			return
		}
		if out := r.Encode()[1:]; !bytes.Equal(out, in) {
			t.Fatalf("re-encodes differently:\n%x\n%x", in, out)
		}
		for _, id := range r.Heads {
			if r.Filter != nil {
				r.Filter.Has(id) // must not panic
			}
		}
	})
}

// FuzzSyncDecodeBatch: any bytes decode to items that re-encode to the
// same bytes (a batch has one encoding), or fail with CodeMalformed.
func FuzzSyncDecodeBatch(f *testing.F) {
	f.Add(sync.EncodeBatch([]sync.Item{{Data: []byte(`{"a":1}`)}, {Data: []byte("x"), Objects: []dag.Object{dag.NewObject([]byte("o"))}}})[1:])
	f.Add(sync.EncodeBatch([]sync.Item{{Data: []byte("abc")}, {Data: []byte("abcd")}, {Data: []byte("ab")}})[1:])
	f.Add([]byte{0})
	f.Add([]byte{1, 3, 0, 0, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, in []byte) {
		items, err := sync.DecodeBatch(in)
		if err != nil {
			if sync.CodeOf(err) != sync.CodeMalformed {
				t.Fatalf("error without CodeMalformed: %v", err)
			}
			return
		}
		for _, it := range items {
			for _, o := range it.Objects {
				if dag.Sum(o.Data) != o.ID {
					t.Fatal("object id is not its hash")
				}
			}
		}
		if out := sync.EncodeBatch(items)[1:]; !bytes.Equal(out, in) {
			t.Fatalf("re-encodes differently:\n%x\n%x", in, out)
		}
	})
}

// FuzzSyncDecodeAnnouncement: any bytes decode to an announcement that
// re-encodes to the same bytes, or fail with CodeMalformed.
func FuzzSyncDecodeAnnouncement(f *testing.F) {
	f.Add(sync.Announcement{Space: "s", Heads: []dag.ID{dag.Sum([]byte("h"))}}.Encode())
	f.Add([]byte{1, 1, 's', 0})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := sync.DecodeAnnouncement(in)
		if err != nil {
			if sync.CodeOf(err) != sync.CodeMalformed {
				t.Fatalf("error without CodeMalformed: %v", err)
			}
			return
		}
		if out := a.Encode(); !bytes.Equal(out, in) {
			t.Fatalf("re-encodes differently")
		}
	})
}

// FuzzSyncPull: whatever a peer answers, a pull ends (no panic, no hang)
// and leaves the replica's applied entries valid: every applied entry's
// signature verifies and its parents are applied.
func FuzzSyncPull(f *testing.F) {
	a := synctest.NewAuthor(1)
	space, root, rootID := a.Session("fuzz")
	child, _ := a.Entry(space, []dag.ID{rootID}, 1)
	frames := func(fs ...[]byte) []byte {
		var b bytes.Buffer
		for _, x := range fs {
			sync.WriteFrame(&b, x)
		}
		return b.Bytes()
	}
	f.Add(frames(sync.Header{Entries: 2}.Encode(), sync.EncodeBatch([]sync.Item{{Data: root}, {Data: child}}), sync.End{}.Encode()))
	f.Add(frames(sync.Header{Entries: 1}.Encode(), sync.EncodeBatch([]sync.Item{{Data: child}}), sync.End{}.Encode()))
	f.Add(frames(sync.EncodeError(sync.CodeRefused, "no")))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, answer []byte) {
		r := synctest.NewMem(synctest.Options{})
		e := sync.NewEngine(r, sync.Options{MaxRounds: 2})
		c1, c2 := net.Pipe()
		go func() {
			// Read requests as they come, answer all at once, then hang
			// up: the pull must end either way.
			go io.Copy(io.Discard, c2)
			c2.Write(answer)
			c2.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := e.Pull(ctx, "peer", c1, space)
		c1.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("pull hung")
		}
		ids, lerr := r.Log(ctx, space, 0, 0)
		if lerr != nil {
			t.Fatal(lerr)
		}
		for _, id := range ids {
			en, err := r.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			env, _, got, err := dag.DecodeEnvelope(en.Data)
			if err != nil || got != id || env.VerifySignature() != nil {
				t.Fatalf("applied entry %s is not valid: %v", id, err)
			}
			for _, p := range en.Parents {
				if st, _ := r.Has(ctx, p); st != dag.Applied {
					t.Fatalf("applied entry %s has parent %s %s", id, p, st)
				}
			}
		}
	})
}
