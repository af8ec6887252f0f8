package replica

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

// TestReceiptCanonicalByHand: a rejected receipt's signing bytes and wire
// form written out by hand in JCS order (RFC 8785 §3.2.3: members sorted
// by name; "sig" between "refusal_index" and "status").
func TestReceiptCanonicalByHand(t *testing.T) {
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	ri := uint64(4)
	rc := Receipt{Tx: dag.Sum([]byte("a")), Envelope: dag.Sum([]byte("b")), Status: "rejected", RefusalIndex: &ri,
		Errors: []ErrorEntry{{Code: dag.CodeUnknownParent, Detail: "a parent is not held by this node"}}, CheckpointSize: 12,
		Node: key.Key(), Sig: []byte{0xfb, 0xff, 0x01}}
	head := `{"checkpoint_size":12,` +
		`"envelope":"sha256:3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",` +
		`"errors":[{"code":"unknown_parent","detail":"a parent is not held by this node"}],` +
		`"log_index":null,"node":"` + key.Key().String() + `","refusal_index":4`
	tail := `,"status":"rejected","tx":"sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}`
	msg, err := rc.SigningBytes()
	if err != nil || string(msg) != head+tail {
		t.Fatalf("signing bytes %s, %v;\nwant %s", msg, err, head+tail)
	}
	wire, err := rc.MarshalJSON()
	if want := head + `,"sig":"-_8B"` + tail; err != nil || string(wire) != want {
		t.Fatalf("wire form %s, %v;\nwant %s", wire, err, want)
	}
}

// TestReceiptCanonicalMatchesMarshal: the hand-written receipt encoder
// gives dag.Marshal's bytes (encoding/json, then JCS) for any receipt,
// strings with quotes, escapes, control characters, non-ASCII and invalid
// UTF-8 and numbers past 2^53-1 included (those take dag.Marshal's path),
// and the same error for a zero id or key.
func TestReceiptCanonicalMatchesMarshal(t *testing.T) {
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	str := rapid.OneOf(rapid.StringMatching(`[ -~]{0,20}`), rapid.String(),
		rapid.SampledFrom([]string{"", `a"b`, `a\b`, "a\nb", "\x7f", "é<>&", "\u2028", "\xff\xfe", "\x01"}))
	num := rapid.OneOf(rapid.Uint64Range(0, 1000), rapid.Uint64Range(maxExact-2, maxExact+2), rapid.Uint64())
	idx := func(t *rapid.T, label string) *uint64 {
		if rapid.Bool().Draw(t, label+" null") {
			return nil
		}
		v := num.Draw(t, label)
		return &v
	}
	id := func(t *rapid.T, label string) dag.ID {
		if rapid.IntRange(0, 20).Draw(t, label+" zero") == 0 {
			return dag.ID{}
		}
		return dag.Sum(rapid.SliceOf(rapid.Byte()).Draw(t, label))
	}
	rapid.Check(t, func(t *rapid.T) {
		rc := Receipt{Tx: id(t, "tx"), Envelope: id(t, "envelope"), Status: str.Draw(t, "status"),
			LogIndex: idx(t, "log_index"), RefusalIndex: idx(t, "refusal_index"),
			CheckpointSize: num.Draw(t, "checkpoint_size"), Sig: rapid.SliceOf(rapid.Byte()).Draw(t, "sig")}
		if rapid.IntRange(0, 20).Draw(t, "zero key") > 0 {
			rc.Node = key.Key()
		}
		if !rapid.Bool().Draw(t, "nil errors") {
			rc.Errors = []ErrorEntry{}
			for range rapid.IntRange(0, 3).Draw(t, "errors") {
				rc.Errors = append(rc.Errors, ErrorEntry{Code: dag.Code(str.Draw(t, "code")), Detail: str.Draw(t, "detail")})
			}
		}
		got, gerr := rc.SigningBytes()
		want, werr := dag.Marshal(plainReceipt(rc))
		if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) {
			t.Fatalf("signing bytes\n got %q %v\nwant %q %v", got, gerr, want, werr)
		}
		got, gerr = rc.MarshalJSON()
		want, werr = dag.Marshal(struct {
			plainReceipt
			Sig string `json:"sig"`
		}{plainReceipt(rc), b64(rc.Sig)})
		if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) {
			t.Fatalf("wire form\n got %q %v\nwant %q %v", got, gerr, want, werr)
		}
	})
}
