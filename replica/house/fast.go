package house

// Fast paths for the two bodies that dominate a session by count: ballots
// and determinations. Bodies inside a decoded envelope are canonical JSON,
// so the common shapes can be read without a general decoder; anything
// else falls back to the strict decoders, which remain the reference (a
// test checks that both agree).

import (
	"bytes"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

const idLen = len("sha256:") + 64

// cursor reads a canonical body in place; string(b) conversions of a
// constant-length prefix do not allocate.
type cursor struct{ s []byte }

func (c *cursor) cut(prefix string) bool {
	if len(c.s) >= len(prefix) && string(c.s[:len(prefix)]) == prefix {
		c.s = c.s[len(prefix):]
		return true
	}
	return false
}

// id reads "sha256:<64 lowercase hex>" followed by a closing quote, as
// dag.ParseID would accept it.
func (c *cursor) id() (dag.ID, bool) {
	if len(c.s) < idLen+1 || c.s[idLen] != '"' || string(c.s[:7]) != "sha256:" {
		return dag.ID{}, false
	}
	var d [32]byte
	var bad byte
	x := c.s[7:idLen]
	for i := range d {
		hi, lo := hexVal[x[2*i]], hexVal[x[2*i+1]]
		bad |= hi | lo
		d[i] = hi<<4 | lo
	}
	if bad&0xf0 != 0 {
		return dag.ID{}, false
	}
	c.s = c.s[idLen+1:]
	return dag.IDFromDigest(d), true
}

// hexVal maps a lowercase hex digit to its value and any other byte to
// 0xff.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
	}
	return t
}()

// decodeBallot decodes a ballot.cast body.
func decodeBallot(body []byte) (rules.BallotBody, error) {
	if b, ok := fastBallot(body); ok {
		return b, nil
	}
	return rules.DecodeBallotBody(body)
}

// fastBallot reads {"choice":…[,"emergency":…],"mr":…[,"supersedes":…]}.
func fastBallot(s []byte) (rules.BallotBody, bool) {
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
	return b, string(c.s) == "}"
}

// decodeDetermination decodes an mr.determine body.
func decodeDetermination(body []byte) (*Determination, error) {
	if d, ok := fastDetermination(body); ok {
		return d, nil
	}
	return DecodeDetermination(body)
}

// fastDetermination reads {"ballots":[…],"mr":…,"outcome":…}.
func fastDetermination(s []byte) (*Determination, bool) {
	c := cursor{s}
	if !c.cut(`{"ballots":[`) {
		return nil, false
	}
	d := &Determination{Ballots: make([]dag.ID, 0, bytes.Count(s, []byte{','})+1)}
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
		d.Ballots = append(d.Ballots, id)
	}
	if !distinct(d.Ballots) {
		return nil, false // the strict decoder names the duplicate
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
	return d, string(c.s) == "}"
}
