package replica

// This file is the receipt's canonical JSON written by hand:
// every submission's answer is a receipt encoded twice (its signing bytes,
// then its wire form), and dag.Marshal (encoding/json's reflection, then
// a JCS pass over the result) was a tenth of the CPU of a submission.
// The hand-written form spells only what is plainly canonical; anything
// else (a zero id or key, a string that is not printable ASCII, a number
// past 2^53-1) goes to dag.Marshal, so both give the same bytes
// (TestReceiptCanonicalMatchesMarshal checks them against each other).

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"

	"github.com/witan-dev/witan/dag"
)

// maxExact is the largest integer dag.Marshal writes (2^53-1, the largest
// a double holds exactly); it refuses a larger one, and so does the
// hand-written form, by leaving it to dag.Marshal.
const maxExact = 1<<53 - 1

// appendCanonical appends JCS(rc) to b, with "sig" when withSig is set.
// ok is false when rc holds something it does not spell; b is then
// returned unchanged.
func (rc *Receipt) appendCanonical(b []byte, withSig bool) ([]byte, bool) {
	zeroID, zeroKey := dag.ID{}, dag.Key{}
	if rc.Tx == zeroID || rc.Envelope == zeroID || rc.Node == zeroKey || rc.CheckpointSize > maxExact ||
		!plain(rc.Status) || (rc.LogIndex != nil && *rc.LogIndex > maxExact) ||
		(rc.RefusalIndex != nil && *rc.RefusalIndex > maxExact) {
		return b, false
	}
	for _, e := range rc.Errors {
		if !plain(string(e.Code)) || !plain(e.Detail) {
			return b, false
		}
	}
	// The members in JCS order (their names are ASCII: byte order).
	b = append(b, `{"checkpoint_size":`...)
	b = strconv.AppendUint(b, rc.CheckpointSize, 10)
	b = append(b, `,"envelope":`...)
	b = appendID(b, rc.Envelope)
	b = append(b, `,"errors":`...)
	if rc.Errors == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range rc.Errors {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"code":"`...)
			b = append(b, e.Code...)
			b = append(b, `","detail":"`...)
			b = append(b, e.Detail...)
			b = append(b, `"}`...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"log_index":`...)
	b = appendIndex(b, rc.LogIndex)
	b = append(b, `,"node":"`...)
	b = append(b, rc.Node.String()...)
	b = append(b, `","refusal_index":`...)
	b = appendIndex(b, rc.RefusalIndex)
	if withSig {
		b = append(b, `,"sig":"`...)
		b = base64.RawURLEncoding.AppendEncode(b, rc.Sig)
		b = append(b, '"')
	}
	b = append(b, `,"status":"`...)
	b = append(b, rc.Status...)
	b = append(b, `","tx":`...)
	b = appendID(b, rc.Tx)
	b = append(b, '}')
	return b, true
}

// plain reports whether JCS writes s as its bytes between quotes:
// printable ASCII without '"' or '\'.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendID appends id's JSON string, "sha256:<hex>" (id is not zero).
func appendID(b []byte, id dag.ID) []byte {
	d := id.Digest()
	b = append(b, '"')
	b = append(b, dag.Prefix...)
	b = hex.AppendEncode(b, d[:])
	return append(b, '"')
}

func appendIndex(b []byte, p *uint64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendUint(b, *p, 10)
}
