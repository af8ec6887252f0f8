package fuzz

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/sync"
)

// FuzzSyncDecodeLogFrames: any bytes decode to a log request (first byte
// 0) or a log header (else) that re-encodes to the same bytes and keeps
// its bounds, or fail with CodeMalformed.
func FuzzSyncDecodeLogFrames(f *testing.F) {
	f.Add(append([]byte{0}, sync.LogRequest{Space: "s", After: 4096, Limit: 512}.Encode()[1:]...))
	f.Add(append([]byte{1}, sync.LogHeader{Entries: 512, Bytes: 204800, Length: 10001}.Encode()[1:]...))
	f.Add([]byte{0, 1, 's', 0, 0x81, 0x80, 0x04})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		var out []byte
		var err error
		if in[0] == 0 {
			var r sync.LogRequest
			if r, err = sync.DecodeLogRequest(in[1:]); err == nil {
				if r.Limit == 0 || r.Limit > sync.MaxLogRange || r.Space == "" {
					t.Fatalf("decoded out of bounds: %+v", r)
				}
				out = r.Encode()[1:]
			}
		} else {
			var h sync.LogHeader
			if h, err = sync.DecodeLogHeader(in[1:]); err == nil {
				if h.Entries > sync.MaxLogRange || h.Entries > h.Length {
					t.Fatalf("decoded out of bounds: %+v", h)
				}
				out = h.Encode()[1:]
			}
		}
		if err != nil {
			if sync.CodeOf(err) != sync.CodeMalformed {
				t.Fatalf("error without CodeMalformed: %v", err)
			}
			return
		}
		if !bytes.Equal(out, in[1:]) {
			t.Fatalf("re-encodes differently:\n%x\n%x", in[1:], out)
		}
	})
}
