package house

// Fast paths for the two bodies that dominate a session by count: ballots
// and determinations. Bodies inside a decoded envelope are canonical JSON,
// so the common shapes can be read without a general decoder; anything
// else falls back to the strict decoders, which remain the reference (a
// test checks that both agree).

import (
	"bytes"
	"encoding/binary"

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
// dag.ParseID would accept it. Every ballot and every id a determination
// lists goes through here, so the digits are decoded eight at a time.
func (c *cursor) id() (dag.ID, bool) {
	if len(c.s) < idLen+1 || c.s[idLen] != '"' || string(c.s[:7]) != "sha256:" {
		return dag.ID{}, false
	}
	var d [32]byte
	x := c.s[7:idLen]
	for i := 0; i < 8; i++ {
		v, ok := hex8(binary.LittleEndian.Uint64(x[8*i:]))
		if !ok {
			return dag.ID{}, false
		}
		binary.LittleEndian.PutUint32(d[4*i:], v)
	}
	c.s = c.s[idLen+1:]
	return dag.IDFromDigest(d), true
}

// hex8 decodes eight lowercase hex digits, loaded little-endian into u (the
// first digit in the low byte), into four bytes, in the low 32 bits in the
// same order; false if any byte is not one of 0-9a-f. All eight bytes are
// handled at once in one 64-bit word: no byte's arithmetic carries into the
// next, since every byte is below 0x80 by the first check.
func hex8(u uint64) (uint32, bool) {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	if u&high != 0 {
		return 0, false
	}
	// A byte's high bit is set in u+(0x80-lo)*ones iff the byte is >= lo.
	digit := (u + (0x80-'0')*ones) &^ (u + (0x80-'9'-1)*ones)
	letter := (u + (0x80-'a')*ones) &^ (u + (0x80-'f'-1)*ones)
	if (digit|letter)&high != high {
		return 0, false
	}
	// '0'-'9' are 0x30-0x39 and 'a'-'f' 0x61-0x66: the low nibble, plus 9
	// when bit 6 is set.
	v := u&0x0f0f0f0f0f0f0f0f + 9*(u>>6&ones)
	// Pair the nibbles into bytes 0, 2, 4, 6, then close the gaps.
	v = (v&0x00ff00ff00ff00ff)<<4 | v>>8&0x00ff00ff00ff00ff
	v = (v | v>>8) & 0x0000ffff0000ffff
	v = (v | v>>16) & 0xffffffff
	return uint32(v), true
}

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
