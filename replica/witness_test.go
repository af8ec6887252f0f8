package replica_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"github.com/witan-dev/witan/replica"
)

// TestWitnessCosigVector checks the cosignature bytes against
// testdata/witness-cosig.json, made by hand with crypto/ed25519
// (docs/wire-format.md): the checkpoint's signed bytes are exactly the
// hand-written JCS, the checkpoint verifies, a replica whose node key is
// the vector's witness co-signs it to exactly the vector's signature
// (Ed25519 is deterministic), the cosignature verifies, and it does not
// with one bit of its signature flipped, against the checkpoint with
// another size, or under the checkpoint's own domain.
func TestWitnessCosigVector(t *testing.T) {
	raw, err := os.ReadFile("testdata/witness-cosig.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Provisional bool                `json:"provisional"`
		Checkpoint  json.RawMessage     `json:"checkpoint"`
		Signed      string              `json:"signed_bytes"`
		Cosig       replica.Cosignature `json:"cosignature"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || !v.Provisional {
		t.Fatalf("vector: %v (provisional %v)", err, v.Provisional)
	}
	cp, err := replica.DecodeCheckpoint(v.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Verify(); err != nil {
		t.Fatalf("the vector's checkpoint: %v", err)
	}
	msg, err := cp.SigningBytes()
	if err != nil || string(msg) != v.Signed {
		t.Fatalf("signing bytes\n got %s\nwant %s (%v)", msg, v.Signed, err)
	}
	r := openReplica(t, nil) // node key: seed 0x01, 31 x 0x00, the vector's witness
	cs, err := r.Cosign(cp)
	if err != nil || cs != v.Cosig {
		t.Fatalf("Cosign: %+v %v, want %+v", cs, err, v.Cosig)
	}
	if err := v.Cosig.Verify(cp); err != nil {
		t.Fatal(err)
	}
	flipped := v.Cosig
	b := []byte(flipped.Sig)
	b[5] ^= 0x01
	flipped.Sig = string(b)
	if flipped.Verify(cp) == nil {
		t.Error("a flipped signature verifies")
	}
	other := cp
	other.Size++
	if v.Cosig.Verify(other) == nil {
		t.Error("the cosignature verifies for another size")
	}
	// The checkpoint's own signature is not a cosignature: the domains differ.
	if (replica.Cosignature{Witness: cp.Node, Sig: base64.RawURLEncoding.EncodeToString(cp.Sig)}).Verify(cp) == nil {
		t.Error("the checkpoint's signature verifies as a cosignature")
	}
}
