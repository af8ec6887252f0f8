package dag_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

func genID() *rapid.Generator[dag.ID] {
	return rapid.Custom(func(t *rapid.T) dag.ID {
		return dag.Sum(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
	})
}

func TestPropIDRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := genID().Draw(t, "id")
		p, err := dag.ParseID(id.String())
		if err != nil || p != id {
			t.Fatalf("ParseID(String()) = %v, %v", p, err)
		}
		c := id.CID()
		if c.Version() != 1 || c.Type() != dag.CodecJSON {
			t.Fatalf("cid %s is not v1/json", c)
		}
		back, err := dag.FromCID(c)
		if err != nil || back != id {
			t.Fatalf("FromCID(CID()) = %v, %v", back, err)
		}
		back, err = dag.ParseCID(c.String())
		if err != nil || back != id {
			t.Fatalf("ParseCID = %v, %v", back, err)
		}
		other := genID().Draw(t, "other")
		if (id == other) != (id.Compare(other) == 0) {
			t.Fatal("== and Compare disagree")
		}
		if (id.Compare(other) < 0) != (id.String() < other.String()) {
			t.Fatal("Compare disagrees with string order")
		}
	})
}

func TestIDZeroAndMapKey(t *testing.T) {
	var z dag.ID
	if z.Valid() {
		t.Fatal("zero ID is valid")
	}
	if _, err := z.MarshalText(); err == nil {
		t.Fatal("zero ID marshals")
	}
	if z.CID().Defined() {
		t.Fatal("zero ID has a CID")
	}
	a, b := dag.Sum([]byte("a")), dag.Sum([]byte("a"))
	m := map[dag.ID]int{a: 1}
	if m[b] != 1 {
		t.Fatal("equal IDs are different map keys")
	}
	if a.String() != "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" {
		t.Fatalf("sha256(a) = %s", a)
	}
}

func TestParseIDRefuses(t *testing.T) {
	good := dag.Sum([]byte("x")).String()
	for _, s := range []string{
		"", "sha256:", good[:len(good)-1], good + "0", strings.ToUpper(good),
		"sha256:" + strings.ToUpper(good[7:]), "sha512:" + good[7:], "SHA256:" + good[7:],
		"sha256:" + strings.Repeat("g", 64), " " + good,
	} {
		if _, err := dag.ParseID(s); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("ParseID(%q) err = %v, want schema", s, err)
		}
	}
}

func TestFromCIDRefuses(t *testing.T) {
	d := dag.Sum([]byte("x")).Digest()
	m, _ := mh.Encode(d[:], mh.SHA2_256)
	m512, _ := mh.Sum([]byte("x"), mh.SHA2_512, -1)
	for name, c := range map[string]cid.Cid{
		"raw codec": cid.NewCidV1(cid.Raw, m),
		"v0":        cid.NewCidV0(m),
		"sha2-512":  cid.NewCidV1(dag.CodecJSON, m512),
		"undefined": cid.Undef,
		"dag-json":  cid.NewCidV1(cid.DagJSON, m),
	} {
		if _, err := dag.FromCID(c); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("%s: FromCID err = %v, want schema", name, err)
		}
	}
	if _, err := dag.ParseCID("not a cid"); dag.CodeOf(err) != dag.CodeSchema {
		t.Errorf("ParseCID garbage: %v", err)
	}
}

func TestIDJSON(t *testing.T) {
	id := dag.Sum([]byte("x"))
	b, err := json.Marshal(struct{ ID dag.ID }{id})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ ID dag.ID }
	if err := json.Unmarshal(b, &back); err != nil || back.ID != id {
		t.Fatalf("round trip %s: %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"ID":"sha256:zz"}`), &back); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("bad id decoded: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	s, _ := dag.SignerFromSeed(seed(9))
	k := s.Key()
	p, err := dag.ParseKey(k.String())
	if err != nil || p != k {
		t.Fatalf("round trip: %v", err)
	}
	str := k.String()
	for _, bad := range []string{"", str + "=", str[:len(str)-1], "ed448:" + str[8:], strings.Replace(str, str[10:11], "+", 1), "ED25519:" + str[8:]} {
		if _, err := dag.ParseKey(bad); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("ParseKey(%q) = %v, want schema", bad, err)
		}
	}
	// The last base64 character carries 4 spare bits; a non-zero spare bit is
	// a second spelling of the same key and must be refused.
	last := str[len(str)-1]
	alt := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", last) ^ 1
	mangled := str[:len(str)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[alt])
	if _, err := dag.ParseKey(mangled); err == nil {
		t.Errorf("ParseKey accepted a non-canonical spelling %q of %q", mangled, str)
	}
}

// Caching expanded keys changes speed only: on random and tampered
// signatures, the cache's verdicts equal the plain ones, single and batched.
func TestPropKeyCacheAgrees(t *testing.T) {
	cache := dag.NewKeyCache(4) // small, so that it also starts afresh
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "n")
		plain, cached := dag.NewBatchVerifier(), dag.NewBatchVerifierCache(cache)
		var want []bool
		for i := 0; i < n; i++ {
			s, _ := dag.SignerFromSeed(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "seed"))
			msg := rapid.SliceOf(rapid.Byte()).Draw(t, "msg")
			sig := s.Sign(dag.DomainEnvelope, msg)
			if rapid.Bool().Draw(t, "tamper") {
				sig[rapid.IntRange(0, 63).Draw(t, "at")] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
			}
			v := dag.Verify(s.Key(), dag.DomainEnvelope, msg, sig)
			if c := cache.Verify(s.Key(), dag.DomainEnvelope, msg, sig); c != v {
				t.Fatalf("cache.Verify = %v, Verify = %v", c, v)
			}
			plain.Add(s.Key(), dag.DomainEnvelope, msg, sig)
			cached.Add(s.Key(), dag.DomainEnvelope, msg, sig)
			want = append(want, v)
		}
		pa, pv := plain.Verify()
		ca, cv := cached.Verify()
		if pa != ca {
			t.Fatalf("batch all: plain %v, cached %v", pa, ca)
		}
		for i := range want {
			if pv[i] != want[i] || cv[i] != want[i] {
				t.Fatalf("signature %d: single %v, plain batch %v, cached batch %v", i, want[i], pv[i], cv[i])
			}
		}
	})
}

// Batches take the merged-key equation first, with keys repeated or all
// distinct (1 to 40 signers for 8 to 40 signatures); with
// valid, tampered and ZIP-215 edge-case signatures (small-order key and R,
// S = 0) mixed in, every verdict still equals single verification, plain
// and through a KeyCache.
func TestPropBatchRepeatedKeysAgrees(t *testing.T) {
	cache := dag.NewKeyCache(0)
	identity := append([]byte{1}, make([]byte, 31)...)
	idKey, err := dag.KeyFromBytes(identity)
	if err != nil {
		t.Fatal(err)
	}
	idSig := append(append([]byte(nil), identity...), make([]byte, 32)...)
	// The verifiers are reused from case to case, as ingest reuses them:
	// a message left over from an earlier batch must not leak into a
	// later one.
	plain, cached := dag.NewBatchVerifier(), dag.NewBatchVerifierCache(cache)
	rapid.Check(t, func(t *rapid.T) {
		nKeys := rapid.IntRange(1, 40).Draw(t, "keys")
		signers := make([]*dag.Signer, nKeys)
		for i := range signers {
			signers[i], _ = dag.SignerFromSeed(bytes.Repeat([]byte{byte(rapid.IntRange(1, 200).Draw(t, "seed"))}, 32))
		}
		n := rapid.IntRange(8, 40).Draw(t, "n")
		salt := rapid.SliceOfN(rapid.Byte(), 0, 2000).Draw(t, "salt")
		var want []bool
		for i := 0; i < n; i++ {
			msg := append([]byte{byte(i), 'm'}, salt...)
			var k dag.Key
			var sig []byte
			switch rapid.IntRange(0, 19).Draw(t, "kind") {
			case 0: // tampered
				s := signers[rapid.IntRange(0, nKeys-1).Draw(t, "signer")]
				k, sig = s.Key(), s.Sign(dag.DomainEnvelope, msg)
				sig[rapid.IntRange(0, 63).Draw(t, "at")] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
			case 1: // small-order key and R, S = 0: valid under ZIP-215
				k, sig = idKey, idSig
			default:
				s := signers[rapid.IntRange(0, nKeys-1).Draw(t, "signer")]
				k, sig = s.Key(), s.Sign(dag.DomainEnvelope, msg)
			}
			want = append(want, dag.Verify(k, dag.DomainEnvelope, msg, sig))
			plain.Add(k, dag.DomainEnvelope, msg, sig)
			cached.Add(k, dag.DomainEnvelope, msg, sig)
		}
		wantAll := !slices.Contains(want, false)
		for name, bv := range map[string]*dag.BatchVerifier{"plain": plain, "cached": cached} {
			all, valid := bv.Verify()
			if all != wantAll {
				t.Fatalf("%s batch: all = %v, want %v", name, all, wantAll)
			}
			for i := range want {
				if valid[i] != want[i] {
					t.Fatalf("%s batch, signature %d: %v, single says %v", name, i, valid[i], want[i])
				}
			}
		}
	})
}
