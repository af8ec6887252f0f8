package house

// Fast paths for the two bodies that dominate a session by count: ballots
// and determinations. Bodies inside a decoded envelope are canonical JSON,
// so the common shapes can be read without a general decoder; anything
// else falls back to the strict decoders, which remain the reference (a
// test checks that both agree).

import (
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

const idLen = len("sha256:") + 64

type cursor struct{ s string }

func (c *cursor) cut(prefix string) bool {
	if strings.HasPrefix(c.s, prefix) {
		c.s = c.s[len(prefix):]
		return true
	}
	return false
}

func (c *cursor) id() (dag.ID, bool) {
	if len(c.s) < idLen+1 || c.s[idLen] != '"' {
		return dag.ID{}, false
	}
	id, err := dag.ParseID(c.s[:idLen])
	if err != nil {
		return dag.ID{}, false
	}
	c.s = c.s[idLen+1:]
	return id, true
}

// decodeBallot decodes a ballot.cast body.
func decodeBallot(body []byte) (rules.BallotBody, error) {
	if b, ok := fastBallot(string(body)); ok {
		return b, nil
	}
	return rules.DecodeBallotBody(body)
}

// fastBallot reads {"choice":…[,"emergency":…],"mr":…[,"supersedes":…]}.
func fastBallot(s string) (rules.BallotBody, bool) {
	var b rules.BallotBody
	c := cursor{s}
	if !c.cut(`{"choice":"`) {
		return b, false
	}
	switch {
	case c.cut(`approve"`):
		b.Choice = rules.Approve
	case c.cut(`reject"`):
		b.Choice = rules.Reject
	case c.cut(`abstain"`):
		b.Choice = rules.Abstain
	default:
		return b, false
	}
	if c.cut(`,"emergency":"`) {
		switch {
		case c.cut(`yes"`):
			b.Emergency = rules.EmergencyYes
		case c.cut(`no"`):
			b.Emergency = rules.EmergencyNo
		default:
			return b, false
		}
	}
	var ok bool
	if !c.cut(`,"mr":"`) {
		return b, false
	}
	if b.MR, ok = c.id(); !ok {
		return b, false
	}
	if c.cut(`,"supersedes":`) {
		if !c.cut("null") {
			if !c.cut(`"`) {
				return b, false
			}
			if b.Supersedes, ok = c.id(); !ok {
				return b, false
			}
		}
	}
	return b, c.s == "}"
}

// decodeDetermination decodes an mr.determine body.
func decodeDetermination(body []byte) (*Determination, error) {
	if d, ok := fastDetermination(string(body)); ok {
		return d, nil
	}
	return DecodeDetermination(body)
}

// fastDetermination reads {"ballots":[…],"mr":…,"outcome":…}.
func fastDetermination(s string) (*Determination, bool) {
	c := cursor{s}
	if !c.cut(`{"ballots":[`) {
		return nil, false
	}
	d := &Determination{Ballots: make([]dag.ID, 0, strings.Count(s, ",")+1)}
	seen := make(map[dag.ID]struct{}, cap(d.Ballots))
	for !c.cut("]") {
		if len(d.Ballots) > 0 && !c.cut(",") {
			return nil, false
		}
		if !c.cut(`"`) {
			return nil, false
		}
		id, ok := c.id()
		if !ok {
			return nil, false
		}
		if _, dup := seen[id]; dup {
			return nil, false
		}
		seen[id] = struct{}{}
		d.Ballots = append(d.Ballots, id)
	}
	var ok bool
	if !c.cut(`,"mr":"`) {
		return nil, false
	}
	if d.MR, ok = c.id(); !ok {
		return nil, false
	}
	if !c.cut(`,"outcome":"`) {
		return nil, false
	}
	switch {
	case c.cut(`approved"`):
		d.Outcome = rules.Approved
	case c.cut(`rejected"`):
		d.Outcome = rules.Rejected
	case c.cut(`expired"`):
		d.Outcome = rules.Expired
	case c.cut(`pending"`):
		d.Outcome = rules.Pending
	default:
		return nil, false
	}
	return d, c.s == "}"
}
