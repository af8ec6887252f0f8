package opinion

// This file decodes exchanges (30k §10 research mode, D67): an offer
// between chambers, or from a modeled executive, on an MR, recorded as an
// opinion member {"mr","from","offer","prior"}. An exchange names the
// change offered and the exchange it answers (prior), so the bargaining
// record is a chain anyone can follow; a conference MR that supersedes
// the MR resolves that chain (the node lists it, replica/view
// exchanges.go). Exchanges are hypothetical, outside the protocol core:
// only a research (simulation) session admits them (replica/house).

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/witan-dev/witan/dag"
)

// Exchange is a decoded exchange member.
type Exchange struct {
	MR dag.ID
	// From is "executive" or "chamber:<id>".
	From  string
	Offer dag.ID // a change
	// Prior is the exchange this one answers; zero for the first offer.
	Prior dag.ID
}

type wireExchange struct {
	MR    *string `json:"mr"`
	From  *string `json:"from"`
	Offer *string `json:"offer"`
	Prior *string `json:"prior"`
}

func decodeExchange(raw json.RawMessage) (*Exchange, error) {
	var w wireExchange
	if err := strict(raw, &w, "exchange"); err != nil {
		return nil, err
	}
	if w.MR == nil || w.From == nil || w.Offer == nil {
		return nil, schemaf("exchange: mr, from and offer are required")
	}
	x := &Exchange{From: *w.From}
	var err error
	if x.MR, err = dag.ParseID(*w.MR); err != nil {
		return nil, schemaf("exchange.mr: %v", err)
	}
	if x.Offer, err = dag.ParseID(*w.Offer); err != nil {
		return nil, schemaf("exchange.offer: %v", err)
	}
	if w.Prior != nil {
		if x.Prior, err = dag.ParseID(*w.Prior); err != nil {
			return nil, schemaf("exchange.prior: %v", err)
		}
	}
	if !validFrom(x.From) {
		return nil, schemaf("exchange.from %q is not \"executive\" or \"chamber:<id>\"", dag.Trunc(x.From))
	}
	return x, nil
}

// validFrom: "executive", or "chamber:" and an id of 1 to MaxText
// characters, none of them spaces or control characters.
func validFrom(s string) bool {
	if s == "executive" {
		return true
	}
	id, ok := strings.CutPrefix(s, "chamber:")
	if !ok || id == "" || len(id) > MaxText {
		return false
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}
