package httpapi

// This file serves GET /forks?after=&limit=: the forks this node detected
// when it checked its peers' checkpoints after a pull, over HTTP or
// libp2p (30k S10; replica/node/peerrecords.go), each with both signed
// checkpoints as evidence against the peer's operator.

import (
	"net/http"

	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/node"
)

// ForksPage is GET /forks's answer: the forks kept, oldest first, from
// index after; Size is how many the node keeps, Full whether it keeps no
// more (node.MaxForks; node.MaxForksPerPeer per peer), Next the after of
// the next page or null. What a fork is evidence of the reader checks
// with the two checkpoints' signatures (the node's word alone proves
// nothing): provisional.
type ForksPage struct {
	Forks    []node.Fork      `json:"forks"`
	Size     uint64           `json:"size"`
	Full     bool             `json:"full"`
	Next     *uint64          `json:"next"`
	Finality replica.Finality `json:"finality"`
}

func (s *Server) forks(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := indexPage(r)
	if err != nil {
		return err
	}
	fs, size, full := s.n.Forks(after, limit)
	p := ForksPage{Forks: fs, Size: size, Full: full, Finality: replica.Provisional}
	if next := after + uint64(len(fs)); next < size {
		p.Next = &next
	}
	return writeJSON(w, p)
}
