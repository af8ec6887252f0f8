package httpapi

// This file is witan's memory-block API for agents (not part of 30k):
// put a block, read it at an authority level (the accepted partition
// only), walk its ancestry.

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica"
)

// PutBlockAnswer is POST /memory/{space}/blocks's answer.
type PutBlockAnswer struct {
	Hash     dag.ID           `json:"hash"`
	Space    string           `json:"space"`
	Finality replica.Finality `json:"finality"`
}

func (s *Server) putBlock(w http.ResponseWriter, r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	blk, err := memoryblock.Decode(b)
	if err != nil {
		return blockProblem(err)
	}
	id, err := s.n.PutBlock(r.Context(), r.PathValue("space"), blk)
	if err != nil {
		return blockProblem(err)
	}
	return writeJSONStatus(w, http.StatusCreated, PutBlockAnswer{Hash: id, Space: r.PathValue("space"), Finality: replica.Provisional})
}

// blockProblem maps a memory-block refusal to a problem with its code.
func blockProblem(err error) error {
	var e *memoryblock.Error
	if errors.As(err, &e) {
		return problemf(dag.Code(e.Code), "%s", err.Error())
	}
	return err
}

func (s *Server) getBlock(w http.ResponseWriter, r *http.Request) error {
	id, err := parseIDParam(r, "hash")
	if err != nil {
		return err
	}
	level := memoryblock.Level(0)
	if q := r.URL.Query().Get("level"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil {
			return problemf(dag.CodeSchema, "level: want an integer")
		}
		level = memoryblock.Level(n)
	}
	br, err := s.n.Block(r.Context(), r.PathValue("space"), id, level)
	if err != nil {
		return blockProblem(err)
	}
	return writeJSON(w, br)
}

func (s *Server) ancestry(w http.ResponseWriter, r *http.Request) error {
	id, err := parseIDParam(r, "hash")
	if err != nil {
		return err
	}
	h, err := s.n.Ancestry(r.Context(), r.PathValue("space"), id)
	if err != nil {
		return err
	}
	if h.Chain == nil {
		h.Chain = []dag.ID{}
	}
	if h.Missing == nil {
		h.Missing = []dag.ID{}
	}
	return writeJSON(w, map[string]any{"space": r.PathValue("space"), "start": id, "ancestry": h, "finality": replica.Provisional})
}

func (s *Server) memorySpaces(w http.ResponseWriter, r *http.Request) error {
	names, err := s.n.MemorySpaces(r.Context())
	if err != nil {
		return err
	}
	if names == nil {
		names = []string{}
	}
	return writeJSON(w, map[string]any{"spaces": names, "finality": replica.Provisional})
}

func (s *Server) memoryHeads(w http.ResponseWriter, r *http.Request) error {
	hs, err := s.n.MemoryHeads(r.Context(), r.PathValue("space"))
	if err != nil {
		return err
	}
	if hs == nil {
		hs = []dag.ID{}
	}
	return writeJSON(w, map[string]any{"space": r.PathValue("space"), "heads": hs, "finality": replica.Provisional})
}
