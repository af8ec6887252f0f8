package httpapi

// This file serves the Merkle proofs of a session's log (30k §5,
// /proofs/inclusion and /proofs/consistency) in RFC 9162 form: leaf index,
// tree size, the audit path as "sha256:<hex>" node hashes, and the roots
// they lead to, beside the signed checkpoint of that size when there is
// one. The proofs verify with any RFC 9162 verifier
// (replica.InclusionProof.Verify uses transparency-dev/merkle's).

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// InclusionAnswer is GET /proofs/inclusion's answer. Checkpoint is this
// node's signed checkpoint of size TreeSize (null when the proof is
// against the log as it is now, not checkpointed: then provisional).
type InclusionAnswer struct {
	sessionLabels
	replica.InclusionProof
	Checkpoint json.RawMessage  `json:"checkpoint"`
	Finality   replica.Finality `json:"finality"`
}

// ConsistencyAnswer is GET /proofs/consistency's answer, with this node's
// signed checkpoints of both sizes where it has them.
type ConsistencyAnswer struct {
	sessionLabels
	replica.ConsistencyProof
	FirstCheckpoint  json.RawMessage  `json:"first_checkpoint"`
	SecondCheckpoint json.RawMessage  `json:"second_checkpoint"`
	Finality         replica.Finality `json:"finality"`
}

// sizeParam reads a non-negative integer query parameter; ok is false
// when it is absent.
func sizeParam(r *http.Request, name string) (n uint64, ok bool, err error) {
	q := r.URL.Query().Get(name)
	if q == "" {
		return 0, false, nil
	}
	n, err = strconv.ParseUint(q, 10, 64)
	if err != nil {
		return 0, false, problemf(dag.CodeSchema, "%s: not a non-negative integer: %q", name, q)
	}
	return n, true, nil
}

// checkpointOfSize returns this node's latest signed checkpoint of the
// given size, as JSON, or null.
func (s *Server) checkpointOfSize(space dag.ID, size uint64) json.RawMessage {
	if c, ok := s.rep.CheckpointOfSize(space, size); ok {
		b, _ := json.Marshal(c)
		return b
	}
	return json.RawMessage("null")
}

func proofErr(err error) error {
	if errors.Is(err, replica.ErrProofRange) {
		return problemf(dag.CodeSchema, "%v", err)
	}
	return err
}

func (s *Server) inclusion(w http.ResponseWriter, r *http.Request) error {
	if isRefusalLog, err := logParam(r); err != nil || isRefusalLog {
		if err != nil {
			return err
		}
		return s.refusalInclusion(w, r) // refusals.go
	}
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query().Get("tx")
	if q == "" {
		return problemf(dag.CodeSchema, "tx is required")
	}
	tx, err := dag.ParseID(q)
	if err != nil {
		return problemf(dag.CodeSchema, "tx: %v", err)
	}
	size, ok, err := sizeParam(r, "size")
	if err != nil {
		return err
	}
	if !ok {
		// The latest checkpoint, if it includes tx; else the log as it is.
		if size, err = s.rep.LogSize(ctx, space); err != nil {
			return err
		}
		if cp, ok := s.rep.LastCheckpoint(space); ok {
			if p, err := s.rep.InclusionProof(ctx, space, tx, cp.Size); err == nil {
				return s.writeInclusion(w, r, space, p)
			}
		}
	}
	p, err := s.rep.InclusionProof(ctx, space, tx, size)
	if err != nil {
		return proofErr(err)
	}
	return s.writeInclusion(w, r, space, p)
}

func (s *Server) writeInclusion(w http.ResponseWriter, r *http.Request, space dag.ID, p replica.InclusionProof) error {
	a := InclusionAnswer{sessionLabels: s.labels(r.Context(), space), InclusionProof: p,
		Checkpoint: s.checkpointOfSize(space, p.TreeSize), Finality: replica.Provisional}
	if string(a.Checkpoint) != "null" {
		a.Finality = replica.FinalAdvisory
	}
	return writeJSON(w, a)
}

func (s *Server) consistency(w http.ResponseWriter, r *http.Request) error {
	if isRefusalLog, err := logParam(r); err != nil || isRefusalLog {
		if err != nil {
			return err
		}
		return s.refusalConsistency(w, r) // refusals.go
	}
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	from, ok, err := sizeParam(r, "from")
	if err != nil {
		return err
	}
	if !ok {
		return problemf(dag.CodeSchema, "from is required")
	}
	to, ok, err := sizeParam(r, "to")
	if err != nil {
		return err
	}
	if !ok {
		if cp, ok := s.rep.LastCheckpoint(space); ok {
			to = cp.Size
		} else if to, err = s.rep.LogSize(ctx, space); err != nil {
			return err
		}
	}
	p, err := s.rep.ConsistencyProof(ctx, space, from, to)
	if err != nil {
		return proofErr(err)
	}
	a := ConsistencyAnswer{sessionLabels: s.labels(ctx, space), ConsistencyProof: p,
		FirstCheckpoint: s.checkpointOfSize(space, from), SecondCheckpoint: s.checkpointOfSize(space, to), Finality: replica.Provisional}
	if string(a.SecondCheckpoint) != "null" {
		a.Finality = replica.FinalAdvisory
	}
	return writeJSON(w, a)
}

// logParam reads ?log=: "refusals" for the refusal log, absent or
// "entries" for the session's log.
func logParam(r *http.Request) (bool, error) {
	switch q := r.URL.Query().Get("log"); q {
	case "", "entries":
		return false, nil
	case "refusals":
		return true, nil
	default:
		return false, problemf(dag.CodeSchema, "log: want entries or refusals, got %q", q)
	}
}
