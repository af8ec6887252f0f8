package httpapi

// This file is POST /oth/v0/witness: a witness (another node that pulled
// this one over HTTP and verified its checkpoint, node.HTTPPeer) sends
// back its cosignature of one of this node's checkpoints
// (replica/witness.go). It is kept only if the checkpoint is exactly one
// this node signed and the cosignature verifies by the witness's key; at
// most replica.MaxWitnesses witnesses per session, the latest of each,
// and only of Options.Witnesses when the operator names them.
// /extract/{hash} carries them in "cosigned".

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// CodeUnknownCheckpoint: a cosignature names a checkpoint this node did
// not sign.
const CodeUnknownCheckpoint dag.Code = "witan:unknown_checkpoint"

// WitnessRequest is POST /witness's body.
type WitnessRequest struct {
	Checkpoint json.RawMessage     `json:"checkpoint"`
	Cosig      replica.Cosignature `json:"cosignature"`
}

func (s *Server) witness(w http.ResponseWriter, r *http.Request) error {
	var req WitnessRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	cp, err := replica.DecodeCheckpoint(req.Checkpoint)
	if err != nil {
		return problemf(dag.CodeSchema, "checkpoint: %v", err)
	}
	if !req.Cosig.Witness.Valid() {
		return problemf(dag.CodeSchema, "cosignature: no witness key")
	}
	if len(s.o.Witnesses) > 0 && !slices.Contains(s.o.Witnesses, req.Cosig.Witness) {
		return problemf(CodeForbidden, "%s is not a witness this node keeps cosignatures of", req.Cosig.Witness)
	}
	if err := s.rep.AddCosignature(r.Context(), cp, req.Cosig); err != nil {
		if errors.Is(err, replica.ErrNotOurCheckpoint) {
			return problemf(CodeUnknownCheckpoint, "%v", err)
		}
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write([]byte(`{"kept":true}`))
	return err
}
