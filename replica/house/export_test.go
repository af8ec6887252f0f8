package house

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// RecheckDeterminations folds every admitted determination's listed
// ballots into a fresh poll, the naive way, and returns an error for the
// first (by tx id) whose recorded evaluation differs: mrDetermine's reading
// of the live poll must change nothing. It also returns how many
// determinations mrDetermine evaluated (admitted or not) by reading the
// live poll and by folding their ballots again.
func (h *House) RecheckDeterminations() (live, folded int, err error) {
	txs := make([]dag.ID, 0, len(h.dets))
	for tx := range h.dets {
		txs = append(txs, tx)
	}
	slices.SortFunc(txs, dag.ID.Compare)
	for _, tx := range txs {
		d := h.dets[tx]
		info := h.mrs[d.body.MR]
		poll := rules.NewPoll(info.rule, d.el, d.body.MR)
		for _, b := range d.body.Ballots {
			r := h.ballot(b)
			if r == nil {
				return 0, 0, fmt.Errorf("determination %s lists %s, not an admitted ballot", tx, b)
			}
			if err := poll.Add(rules.Ballot{Tx: b, Author: r.author, BallotBody: r.body}); err != nil {
				return 0, 0, fmt.Errorf("determination %s: %v", tx, err)
			}
		}
		if got := poll.Result(rules.Context{Facts: info.facts}); !reflect.DeepEqual(got, d.result) {
			return 0, 0, fmt.Errorf("determination %s records\n%+v\nthe naive fold gives\n%+v", tx, d.result, got)
		}
	}
	return h.liveDets, h.foldedDets, nil
}

// NamedBy is namedBy: what a governance body names, less admitted entries.
func (h *House) NamedBy(typ dag.TxType, body []byte) []dag.ID { return h.namedBy(typ, body) }

// NamedEntries returns the tx ids of the governance entries recorded as
// naming ref (what publishedIn reads for an id that is no entry).
func (h *House) NamedEntries(ref dag.ID) []dag.ID {
	var out []dag.ID
	for _, ei := range h.named[ref] {
		out = append(out, h.ents[ei].id)
	}
	return out
}
