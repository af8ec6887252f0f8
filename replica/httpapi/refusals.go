package httpapi

// This file serves the node's refusal log (30k §5, D40; replica/refusals.go):
// GET /refusals?after=&limit=, GET /refusals/checkpoint, and its proofs,
// GET /proofs/inclusion?log=refusals&index=&size= and
// GET /proofs/consistency?log=refusals&from=&to=.

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// RefusalsPage is GET /refusals's answer. Next is the index to ask
// after= next, null at the end of the log as it is now. The records are
// the node's own and never change: final_advisory once a refusal
// checkpoint covers them, which the client checks against
// /refusals/checkpoint; the page itself is provisional.
type RefusalsPage struct {
	Refusals []replica.RefusalRecord `json:"refusals"`
	Size     uint64                  `json:"size"`
	Full     bool                    `json:"full"`
	Next     *uint64                 `json:"next"`
	Finality replica.Finality        `json:"finality"`
}

// RefusalCheckpointAnswer is GET /refusals/checkpoint's answer.
type RefusalCheckpointAnswer struct {
	Checkpoint json.RawMessage  `json:"checkpoint"`
	Finality   replica.Finality `json:"finality"`
}

// RefusalInclusionAnswer proves one record's inclusion in the refusal log.
type RefusalInclusionAnswer struct {
	Log           string                `json:"log"` // "refusals"
	Refusal       replica.RefusalRecord `json:"refusal"`
	LeafIndex     uint64                `json:"leaf_index"`
	TreeSize      uint64                `json:"tree_size"`
	InclusionPath []dag.ID              `json:"inclusion_path"`
	Root          dag.ID                `json:"root"`
	Checkpoint    json.RawMessage       `json:"checkpoint"`
	Finality      replica.Finality      `json:"finality"`
}

// RefusalConsistencyAnswer is the consistency proof of the refusal log.
type RefusalConsistencyAnswer struct {
	Log             string           `json:"log"` // "refusals"
	FirstSize       uint64           `json:"first"`
	SecondSize      uint64           `json:"second"`
	ConsistencyPath []dag.ID         `json:"consistency_path"`
	FirstRoot       dag.ID           `json:"first_root"`
	SecondRoot      dag.ID           `json:"second_root"`
	Finality        replica.Finality `json:"finality"`
}

// indexPage reads the after= and limit= of a page of a node-local,
// append-only record read by index (GET /refusals, GET /forks): after is a
// non-negative index (default 0), limit 1..MaxLogLimit (default
// DefaultLogLimit); anything else is 400 schema.
func indexPage(r *http.Request) (after uint64, limit int, err error) {
	if after, _, err = sizeParam(r, "after"); err != nil {
		return 0, 0, err
	}
	limit = DefaultLogLimit
	if q := r.URL.Query().Get("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > MaxLogLimit {
			return 0, 0, problemf(dag.CodeSchema, "limit: want 1..%d, got %q", MaxLogLimit, q)
		}
		limit = n
	}
	return after, limit, nil
}

func (s *Server) refusalLog(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := indexPage(r)
	if err != nil {
		return err
	}
	recs, size := s.rep.RefusalLog(after, limit)
	p := RefusalsPage{Refusals: recs, Size: size, Full: s.rep.RefusalLogFull(), Finality: replica.Provisional}
	if p.Refusals == nil {
		p.Refusals = []replica.RefusalRecord{}
	}
	if next := after + uint64(len(recs)); next < size {
		p.Next = &next
	}
	return writeJSON(w, p)
}

func (s *Server) refusalCheckpoint(w http.ResponseWriter, r *http.Request) error {
	c, err := s.rep.RefusalCheckpoint()
	if err != nil {
		return err
	}
	b, err := json.Marshal(c.Checkpoint)
	if err != nil {
		return err
	}
	return writeJSON(w, RefusalCheckpointAnswer{Checkpoint: b, Finality: replica.FinalAdvisory})
}

func (s *Server) refusalInclusion(w http.ResponseWriter, r *http.Request) error {
	idx, ok, err := sizeParam(r, "index")
	if err != nil {
		return err
	}
	if !ok {
		return problemf(dag.CodeSchema, "index is required with log=refusals")
	}
	size, ok, err := sizeParam(r, "size")
	if err != nil {
		return err
	}
	var cp json.RawMessage = json.RawMessage("null")
	if !ok {
		c, err := s.rep.RefusalCheckpoint()
		if err != nil {
			return err
		}
		size = c.Size
		if cp, err = json.Marshal(c.Checkpoint); err != nil {
			return err
		}
	}
	rec, path, root, err := s.rep.RefusalInclusion(idx, size)
	if err != nil {
		return proofErr(err)
	}
	a := RefusalInclusionAnswer{Log: "refusals", Refusal: rec, LeafIndex: idx, TreeSize: size, InclusionPath: digestsToIDs(path),
		Root: digestsToIDs([][]byte{root})[0], Checkpoint: cp, Finality: replica.Provisional}
	if string(cp) != "null" {
		a.Finality = replica.FinalAdvisory
	}
	return writeJSON(w, a)
}

func (s *Server) refusalConsistency(w http.ResponseWriter, r *http.Request) error {
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
		_, to = s.rep.RefusalLog(0, 1)
	}
	p, r1, r2, err := s.rep.RefusalConsistency(from, to)
	if err != nil {
		return proofErr(err)
	}
	return writeJSON(w, RefusalConsistencyAnswer{Log: "refusals", FirstSize: from, SecondSize: to, ConsistencyPath: digestsToIDs(p),
		FirstRoot: digestsToIDs([][]byte{r1})[0], SecondRoot: digestsToIDs([][]byte{r2})[0], Finality: replica.Provisional})
}

func digestsToIDs(hs [][]byte) []dag.ID {
	out := make([]dag.ID, len(hs))
	for i, h := range hs {
		var d [32]byte
		copy(d[:], h)
		out[i] = dag.IDFromDigest(d)
	}
	return out
}
