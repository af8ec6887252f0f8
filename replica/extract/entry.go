package extract

// This file is the extract of one log entry (30k D45, GET
// /extract/{hash} for a tx id), and Verify, which checks one with no
// network at all (witan verify-extract FILE).
//
// An extract is the canonical JSON (JCS) of
//
//	{"authoritative":false,"checkpoint":{size,root,ts,node,session,sig},"cosigned":[{sig,witness}…],
//	 "finality":"final_advisory","inclusion":{leaf_index,tree_size,inclusion_path},
//	 "object":<the envelope>,"session":"sha256:…","simulation":bool,"supporting":[<attachments>],"tx":"sha256:…"}
//
// Verify checks everything in it, so that one byte changed anywhere
// fails: the file is exactly its canonical form with no unknown member;
// the envelope decodes, is canonical and its signature verifies, and its
// id is tx and its session is session; every supporting object is in wire
// form and named (as "sha256:<hex>") by the envelope or by a supporting
// object the envelope names; the inclusion path
// leads from tx at leaf_index to the checkpoint's root at its size
// (RFC 9162, transparency-dev/merkle's verifier); and the checkpoint's
// signature verifies by its node key (which a caller may pin). Extracts are
// served for log entries (tx ids) already in a checkpoint of this node,
// and for MR ids (mr.go: the MR's opens, ballots and
// determinations, with a tally a stranger recomputes).
// cosigned holds witnesses' cosignatures of the checkpoint
// (checkpoint.Cosignature), each of which must verify; VerifyWitnessed
// also requires one by each key the reader trusts.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/checkpoint"
)

// Inclusion is an extract's inclusion proof.
type Inclusion struct {
	LeafIndex     uint64   `json:"leaf_index"`
	TreeSize      uint64   `json:"tree_size"`
	InclusionPath []dag.ID `json:"inclusion_path"`
}

// Entry is GET /extract/{hash}'s answer.
type Entry struct {
	Authoritative bool            `json:"authoritative"`
	Checkpoint    json.RawMessage `json:"checkpoint"`
	// Cosigned are witnesses' cosignatures of Checkpoint
	// (checkpoint.Cosignature), sorted by witness key.
	Cosigned  []checkpoint.Cosignature `json:"cosigned"`
	Finality  checkpoint.Finality      `json:"finality"`
	Inclusion Inclusion                `json:"inclusion"`
	Object    json.RawMessage          `json:"object"`
	Session   string                   `json:"session"`
	// Simulation is the node's D54 label of the session; the session's
	// session.create is not in the extract, so it is not checked offline.
	Simulation bool              `json:"simulation"`
	Supporting []json.RawMessage `json:"supporting"`
	Tx         dag.ID            `json:"tx"`
}

// Verify checks an extract offline (see the file comment). pin, if
// valid, is the node key the checkpoint must be signed by.
func Verify(b []byte, pin dag.Key) (*Entry, checkpoint.Checkpoint, error) {
	return VerifyWitnessed(b, pin, nil)
}

// VerifyWitnessed is Verify that also requires a valid
// cosignature of the checkpoint by each key in witnesses. Every
// cosignature in the extract must verify whether required or not.
func VerifyWitnessed(b []byte, pin dag.Key, witnesses []dag.Key) (*Entry, checkpoint.Checkpoint, error) {
	fail := func(format string, args ...any) (*Entry, checkpoint.Checkpoint, error) {
		return nil, checkpoint.Checkpoint{}, fmt.Errorf("extract: "+format, args...)
	}
	var x Entry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return fail("not an extract: %v", err)
	}
	if dec.More() {
		return fail("trailing data")
	}
	again, err := dag.Marshal(x)
	if err != nil || !bytes.Equal(again, b) {
		return fail("not in canonical form (JCS, no other member): the file was changed or is not an extract")
	}
	if x.Authoritative || x.Finality != checkpoint.FinalAdvisory {
		return fail("authoritative %v, finality %q: not what an extract says", x.Authoritative, x.Finality)
	}
	env, canon, id, err := dag.DecodeEnvelope(x.Object)
	if err != nil {
		return fail("object: %v", err)
	}
	if !bytes.Equal(canon, x.Object) || id != x.Tx {
		return fail("object is not the canonical envelope of tx %s", x.Tx)
	}
	if err := env.VerifySignature(); err != nil {
		return fail("object's signature: %v", err)
	}
	if env.Session.String() != x.Session {
		return fail("object is of session %s, the extract says %s", env.Session, x.Session)
	}
	if err := verifySupporting([]string{string(env.Body)}, x.Supporting, false); err != nil {
		return fail("%v", err)
	}
	cp, err := verifyCheckpoint(x.Checkpoint, x.Cosigned, x.Session, pin, witnesses)
	if err != nil {
		return fail("%v", err)
	}
	p := checkpoint.InclusionProof{Tx: x.Tx, LeafIndex: x.Inclusion.LeafIndex, TreeSize: x.Inclusion.TreeSize, InclusionPath: x.Inclusion.InclusionPath, Root: cp.Root}
	if p.TreeSize != cp.Size {
		return fail("inclusion is against size %d, the checkpoint's is %d", p.TreeSize, cp.Size)
	}
	if err := p.Verify(); err != nil {
		return fail("%v", err)
	}
	return &x, cp, nil
}

// verifySupporting checks that every supporting object is in wire form and
// named ("sha256:<hex>") by one of the texts or by a supporting object
// they reach; sorted, when set, also requires them in increasing order of
// their ids without repeats.
func verifySupporting(texts []string, supporting []json.RawMessage, sorted bool) error {
	objs := make([][]byte, len(supporting))
	for i, raw := range supporting {
		obj, err := dag.AttachmentObject(raw)
		if err != nil {
			return fmt.Errorf("supporting %d: %v", i, err)
		}
		if w, err := dag.AttachmentWire(obj); err != nil || !bytes.Equal(w, raw) {
			return fmt.Errorf("supporting %d is not in wire form", i)
		}
		objs[i] = obj
		if sorted && i > 0 && dag.Sum(objs[i-1]).Compare(dag.Sum(obj)) >= 0 {
			return fmt.Errorf("supporting is not sorted by id without repeats")
		}
	}
	reached := make([]bool, len(objs))
	texts = slices.Clone(texts)
	for len(texts) > 0 {
		t := texts[len(texts)-1]
		texts = texts[:len(texts)-1]
		for i, obj := range objs {
			if !reached[i] && strings.Contains(t, dag.Sum(obj).String()) {
				reached[i] = true
				texts = append(texts, string(obj))
			}
		}
	}
	for i, ok := range reached {
		if !ok {
			return fmt.Errorf("supporting %d (%s) is not named by the object or what it names", i, dag.Sum(objs[i]))
		}
	}
	return nil
}

// verifyCheckpoint checks an extract's checkpoint: canonical, signed (by
// pin when pin is valid), of session, with every cosignature valid and one
// by each of witnesses.
func verifyCheckpoint(raw json.RawMessage, cosigned []checkpoint.Cosignature, session string, pin dag.Key, witnesses []dag.Key) (checkpoint.Checkpoint, error) {
	cp, err := checkpoint.Decode(raw)
	if err != nil {
		return cp, err
	}
	if cb, err := json.Marshal(cp); err != nil || !bytes.Equal(cb, raw) {
		return cp, fmt.Errorf("checkpoint is not in canonical form")
	}
	if err := cp.Verify(); err != nil {
		return cp, fmt.Errorf("checkpoint: %v", err)
	}
	if pin.Valid() && cp.Node != pin {
		return cp, fmt.Errorf("checkpoint is signed by %s, not %s", cp.Node, pin)
	}
	if !cp.Legacy && cp.Space != session {
		return cp, fmt.Errorf("checkpoint is of session %s, the extract says %s", cp.Space, session)
	}
	for i, cs := range cosigned {
		if i > 0 && cs.Witness.String() <= cosigned[i-1].Witness.String() {
			return cp, fmt.Errorf("cosigned is not sorted by witness key without repeats")
		}
		if cs.Witness == cp.Node {
			return cp, fmt.Errorf("cosignature %d is by the checkpoint's own node", i)
		}
		if err := cs.Verify(cp); err != nil {
			return cp, fmt.Errorf("cosignature %d: %v", i, err)
		}
	}
	for _, w := range witnesses {
		found := false
		for _, cs := range cosigned {
			found = found || cs.Witness == w
		}
		if !found {
			return cp, fmt.Errorf("witness %s has not co-signed the checkpoint", w)
		}
	}
	return cp, nil
}
