package synctest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

// Author writes signed envelopes for tests: a session root, then entries
// on top of a replica's heads.
type Author struct {
	Signer *dag.Signer
	n      int
}

// NewAuthor returns an author whose key is derived from seed.
func NewAuthor(seed byte) *Author {
	s, err := dag.SignerFromSeed(slices.Repeat([]byte{seed}, 32))
	if err != nil {
		panic(err)
	}
	return &Author{Signer: s}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (a *Author) ts() string {
	a.n++
	return epoch.Add(time.Duration(a.n) * time.Second).Format(time.RFC3339)
}

// Session returns a session.create envelope: the space is its session id.
func (a *Author) Session(name string) (space string, data []byte, id dag.ID) {
	body := fmt.Appendf(nil, `{"name":%q}`, name)
	e := &dag.Envelope{Type: dag.TxSessionCreate, Session: dag.Sum(body), Body: body, TS: a.ts()}
	data, id, err := e.Seal(a.Signer)
	if err != nil {
		panic(err)
	}
	return e.Session.String(), data, id
}

// Entry returns an envelope of space with the given parents, its body
// naming n (and refs, the objects it refers to, if any).
func (a *Author) Entry(space string, parents []dag.ID, n int, refs ...dag.ID) (data []byte, id dag.ID) {
	sid, err := dag.ParseID(space)
	if err != nil {
		panic(err)
	}
	body := fmt.Appendf(nil, `{"n":%d}`, n)
	if len(refs) > 0 {
		rs := make([]string, len(refs))
		for i, r := range refs {
			rs[i] = fmt.Sprintf("%q", r.String())
		}
		body = fmt.Appendf(nil, `{"n":%d,"refs":[%s]}`, n, joinComma(rs))
	}
	e := &dag.Envelope{Type: dag.TxOpinionPublish, Session: sid, Parents: parents, Body: body, TS: a.ts()}
	data, id, err = e.Seal(a.Signer)
	if err != nil {
		panic(err)
	}
	return data, id
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// Write submits n entries to r in space, each on top of r's heads (at most
// 8 of them as parents), and returns their ids.
func (a *Author) Write(ctx context.Context, r *Replica, space string, n int) ([]dag.ID, error) {
	var out []dag.ID
	for i := 0; i < n; i++ {
		heads, err := r.Heads(ctx, space)
		if err != nil {
			return out, err
		}
		if len(heads) > 8 {
			heads = heads[:8]
		}
		data, id := a.Entry(space, heads, a.n)
		res, err := r.Submit(ctx, data)
		if err != nil {
			return out, err
		}
		if res.Code != "" {
			return out, fmt.Errorf("synctest: own entry %s refused: %s %s", id, res.Code, res.Reason)
		}
		out = append(out, id)
	}
	return out, nil
}

// Block returns a sealed CAT7 memory block about subject whose lineage is
// parents (a root when there are none), in its hashed form, and its id.
func (a *Author) Block(subject string, parents ...dag.ID) (data []byte, id dag.ID) {
	a.n++
	b := mb.Block{
		Origin:     mb.MustText(fmt.Sprintf("agent:%s", a.Signer.Key())),
		Subject:    mb.MustText(subject),
		Body:       mb.MustText(fmt.Sprintf("note %d", a.n)),
		ObservedAt: mb.MustText(a.ts()),
		Lineage:    mb.MustParents(parents...),
	}.Seal()
	return b.Canonical(), b.ID()
}
