package house

import "slices"

// The House's arenas grow with every admitted entry. A House that meets a
// session through sync or ingest (New, no size known in advance) grew
// them with append, whose 1.25 factor for large slices allocated about six
// times their final size and copied them four times over: at 100k ballots
// the largest part of what admission allocated (BenchmarkAdmitFresh).

// ballotChunkBits sets the size of a chunk of ballot records: 4096
// records of 136 bytes, about half a MiB.
const (
	ballotChunkBits = 12
	ballotChunk     = 1 << ballotChunkBits
)

// ballotArena holds the ballot records, by index, in chunks of
// ballotChunk records: appending copies nothing beyond the first chunk,
// and the arena holds at most one chunk more than it needs. The first
// chunk grows by append (a small session allocates little), so a pointer
// from at, as one into a slice, is good only until the next push.
type ballotArena struct {
	chunks [][]ballotRec
	n      int32
}

// len is the number of records.
func (a *ballotArena) len() int32 { return a.n }

// at returns record i (valid until the next push).
func (a *ballotArena) at(i int32) *ballotRec {
	return &a.chunks[i>>ballotChunkBits][i&(ballotChunk-1)]
}

// push appends b.
func (a *ballotArena) push(b *ballotRec) {
	c := int(a.n >> ballotChunkBits)
	if c == len(a.chunks) {
		var chunk []ballotRec
		if c > 0 {
			chunk = make([]ballotRec, 0, ballotChunk)
		}
		a.chunks = append(a.chunks, chunk)
	}
	a.chunks[c] = append(a.chunks[c], *b)
	a.n++
}

// reserve makes room for n records in the first chunk (Derive, which
// knows its size).
func (a *ballotArena) reserve(n int) {
	if a.n == 0 && len(a.chunks) == 0 {
		a.chunks = append(a.chunks, make([]ballotRec, 0, min(n, ballotChunk)))
	}
}

// room returns s with room for k more elements, doubling its capacity when
// it must grow rather than append's 1.25 for large slices.
func room[T any](s []T, k int) []T {
	if len(s)+k <= cap(s) {
		return s
	}
	return slices.Grow(s, max(k, len(s), 16))
}
