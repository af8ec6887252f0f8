package sync

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// msg frames body as a /witan/checkpoint/1 message.
func msg(body string) []byte { return append(binary.AppendUvarint(nil, uint64(len(body))), body...) }

// TestCheckpointMessageDecode: the one spelling of a message. Accepted: a
// request of each kind, an answer with a checkpoint and proof. Refused
// as malformed (the length and members are the spec's, worked by hand):
// length 0; a length of 1 spelled in two bytes (0x81 0x00); 65537 bytes
// (0x81 0x80 0x04); a four-byte length; an unknown member; a second JSON
// value after the first; a body that is not an object. A stream cut in
// the length or the body is an I/O error, not malformed.
func TestCheckpointMessageDecode(t *testing.T) {
	read := func(b []byte, v any) error { return readCheckpointMessage(bufio.NewReader(bytes.NewReader(b)), v) }
	var req CheckpointRequest
	if err := read(msg(`{"kind":"checkpoint","space":"sha256:x","from":3}`), &req); err != nil || req.Kind != CheckpointGet || req.From != 3 {
		t.Fatalf("get: %+v %v", req, err)
	}
	req = CheckpointRequest{}
	if err := read(msg(`{"kind":"witness","space":"s","checkpoint":{"size":1},"cosignature":{"sig":"x"}}`), &req); err != nil || string(req.Cosignature) != `{"sig":"x"}` {
		t.Fatalf("witness: %+v %v", req, err)
	}
	var ans CheckpointAnswer
	if err := read(msg(`{"checkpoint":{"size":2},"consistency":{"first":1}}`), &ans); err != nil || string(ans.Consistency) != `{"first":1}` {
		t.Fatalf("answer: %+v %v", ans, err)
	}
	big := append(binary.AppendUvarint(nil, MaxCheckpointMessage+1), strings.Repeat(" ", MaxCheckpointMessage+1)...)
	if !bytes.Equal(big[:3], []byte{0x81, 0x80, 0x04}) {
		t.Fatalf("65537 is % x", big[:3])
	}
	for name, b := range map[string][]byte{
		"length 0":           {0x00},
		"length not minimal": append([]byte{0x81, 0x00}, '{'),
		"65537 bytes":        big,
		"four-byte length":   {0x80, 0x80, 0x80, 0x01},
		"unknown member":     msg(`{"kind":"checkpoint","space":"s","at":1}`),
		"trailing value":     msg(`{"kind":"checkpoint","space":"s"}{}`),
		"not an object":      msg(`[1]`),
	} {
		if err := read(b, &CheckpointRequest{}); CodeOf(err) != CodeMalformed {
			t.Errorf("%s: %v, want malformed", name, err)
		}
	}
	for name, b := range map[string][]byte{"cut in the length": {0x81}, "cut in the body": msg(`{"kind":"checkpoint"}`)[:5]} {
		if err := read(b, &CheckpointRequest{}); err == nil || CodeOf(err) == CodeMalformed {
			t.Errorf("%s: %v, want an I/O error", name, err)
		}
	}
}

// FuzzCheckpointMessage: whatever the bytes, reading a message does not
// panic, takes at most MaxCheckpointMessage bytes of body, and what it
// accepts writes out and reads back.
func FuzzCheckpointMessage(f *testing.F) {
	for _, s := range [][]byte{msg(`{"kind":"checkpoint","space":"s","from":1}`), msg(`{"kind":"witness","space":"s","checkpoint":{},"cosignature":{}}`),
		{0x81, 0x00}, {0x81, 0x80, 0x04}, msg(`{"error":{"code":"schema","detail":"x"}}`)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req CheckpointRequest
		if err := readCheckpointMessage(bufio.NewReader(bytes.NewReader(b)), &req); err != nil {
			return
		}
		var out bytes.Buffer
		if err := writeCheckpointMessage(&out, req); err != nil {
			t.Fatalf("accepted %q, cannot write it: %v", b, err)
		}
		var again CheckpointRequest
		if err := readCheckpointMessage(bufio.NewReader(&out), &again); err != nil || again.Kind != req.Kind || again.Space != req.Space || again.From != req.From {
			t.Fatalf("%q: written and read back: %+v %v, want %+v", b, again, err, req)
		}
	})
}
