package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// digest is the 32 bytes of a "sha256:<hex>" id.
func digest(id string) ([]byte, error) {
	if len(id) != 71 || id[:7] != "sha256:" {
		return nil, fmt.Errorf("not a sha256 id: %q", id)
	}
	return hex.DecodeString(id[7:])
}

// VerifyInclusion checks an RFC 9162 inclusion proof (§2.1.3.2) of tx id
// at index in a tree of size with root, the path as sha256 ids.
func VerifyInclusion(id string, index, size int64, path []string, root string) error {
	d, err := digest(id)
	if err != nil {
		return err
	}
	want, err := digest(root)
	if err != nil {
		return err
	}
	if index < 0 || index >= size {
		return fmt.Errorf("index %d outside a tree of %d", index, size)
	}
	h := sha256.Sum256(append([]byte{0}, d...))
	r := h[:]
	fn, sn := index, size-1
	node := func(l, rr []byte) []byte {
		x := sha256.Sum256(append(append([]byte{1}, l...), rr...))
		return x[:]
	}
	for _, p := range path {
		pd, err := digest(p)
		if err != nil {
			return err
		}
		if sn == 0 {
			return fmt.Errorf("path longer than the tree")
		}
		if fn&1 == 1 || fn == sn {
			r = node(pd, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = node(r, pd)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 || !bytes.Equal(r, want) {
		return fmt.Errorf("the path does not lead to the root")
	}
	return nil
}

// checkMRExtract verifies an MR extract from its bytes alone, as an
// offline verifier would: the checkpoint's signature; every entry's id,
// signature and inclusion proof against the checkpoint's root and size;
// that it carries exactly the ballots and determination given (ids); and
// it returns the approvals and rejections the carried ballots give (each
// member's one ballot; the harness casts no superseding ballot here).
func checkMRExtract(a *Answer, mr string, want []string) (approve, reject int, err error) {
	cp, _ := Field(a.JSON, "checkpoint").(map[string]any)
	if cp == nil || !VerifySigned(cp, CheckpointDomain, "node") {
		return 0, 0, fmt.Errorf("the checkpoint's signature does not verify")
	}
	if Str(a.JSON, "kind") != "mr" || Str(a.JSON, "mr") != mr {
		return 0, 0, fmt.Errorf("not the extract of MR %s", mr)
	}
	entries, _ := Field(a.JSON, "entries").([]any)
	held := map[string]bool{}
	for _, e := range entries {
		raw, err := Canon(Field(e, "object"))
		if err != nil {
			return 0, 0, err
		}
		id, err := VerifyEnvelope(raw)
		if err != nil || id != Str(e, "tx") {
			return 0, 0, fmt.Errorf("entry %s: id %s: %v", Str(e, "tx"), id, err)
		}
		var path []string
		ps, _ := Field(e, "inclusion", "inclusion_path").([]any)
		for _, p := range ps {
			s, _ := p.(string)
			path = append(path, s)
		}
		if Int(e, "inclusion", "tree_size") != Int(cp, "size") {
			return 0, 0, fmt.Errorf("entry %s: proof against size %d, checkpoint %d", id, Int(e, "inclusion", "tree_size"), Int(cp, "size"))
		}
		if err := VerifyInclusion(id, Int(e, "inclusion", "leaf_index"), Int(cp, "size"), path, Str(cp, "root")); err != nil {
			return 0, 0, fmt.Errorf("entry %s: %v", id, err)
		}
		held[id] = true
		env := Field(e, "object")
		if Str(env, "type") == "ballot.cast" && Str(env, "body", "mr") == mr {
			switch Str(env, "body", "choice") {
			case "approve":
				approve++
			case "reject":
				reject++
			}
		}
	}
	for _, id := range want {
		if !held[id] {
			return 0, 0, fmt.Errorf("the extract lacks %s", id)
		}
	}
	return approve, reject, nil
}
