package view

// This file serves exchanges (30k §10 research mode, D67): the offers
// between chambers and from a modeled executive on an MR, recorded as
// opinions, in chain order, and for a conference MR (one that supersedes
// the MR the offers were about) the chain it resolves. Hypothetical,
// outside the protocol core; never authoritative.

import (
	"context"
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
)

// ExchangeView is one exchange as GET /merge-requests/{id}/exchanges
// lists it.
type ExchangeView struct {
	Opinion  dag.ID           `json:"opinion"`
	Author   dag.Key          `json:"author"`
	From     string           `json:"from"`
	Offer    dag.ID           `json:"offer"`
	Prior    *dag.ID          `json:"prior"`
	Finality replica.Finality `json:"finality"`
}

// ExchangeChain is the exchanges on one MR, in chain order.
type ExchangeChain struct {
	MR        dag.ID         `json:"mr"`
	Exchanges []ExchangeView `json:"exchanges"`
}

// MRExchanges is GET /merge-requests/{id}/exchanges's view: the offers on
// the MR, and, when the MR supersedes another, the chain of offers on
// that one it resolves (the conference MR's link, D67).
type MRExchanges struct {
	MR            dag.ID           `json:"mr"`
	Offers        []ExchangeView   `json:"offers"`
	Resolves      *ExchangeChain   `json:"resolves"`
	Hypothetical  bool             `json:"hypothetical"`
	Authoritative bool             `json:"authoritative"`
	Finality      replica.Finality `json:"finality"`
}

// Exchanges returns the exchanges of MR mr; dag.ErrNotFound for an
// unknown MR.
func (r *Reader) Exchanges(ctx context.Context, session dag.ID, mr dag.ID) (MRExchanges, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return MRExchanges{}, err
	}
	defer sp.Close()
	h := sp.House()
	body, ok := h.MRBody(mr)
	if !ok {
		return MRExchanges{}, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
	}
	out := MRExchanges{MR: mr, Hypothetical: true, Finality: replica.FinalAdvisory}
	list := func(of dag.ID) []ExchangeView {
		xs := h.Exchanges(of)
		vs := make([]ExchangeView, 0, len(xs))
		for _, x := range xs {
			vs = append(vs, exchangeView(ctx, sp, x))
		}
		for _, v := range vs {
			if v.Finality != replica.FinalAdvisory {
				out.Finality = replica.Provisional
			}
		}
		return vs
	}
	out.Offers = list(mr)
	if body.Supersedes.Valid() {
		out.Resolves = &ExchangeChain{MR: body.Supersedes, Exchanges: list(body.Supersedes)}
	}
	return out, nil
}

func exchangeView(ctx context.Context, sp *replica.Session, x house.ExchangeRecord) ExchangeView {
	v := ExchangeView{Opinion: x.Opinion, Author: x.Author, From: x.From, Offer: x.Offer, Finality: sp.OpinionFinality(ctx, x.Opinion)}
	if x.Prior.Valid() {
		p := x.Prior
		v.Prior = &p
	}
	return v
}
