package httpapi

// This file serves an MR's derived review — /diff, /checks and /facts —
// until the replica exposes its snapshots. It derives the session again
// with the pure house.Derive over the store's entries (memoised per set of
// heads), finds the merge-base in the Change DAG, and hands the trees to
// replica/statute, which computes the views (docs/deviations.md, "## node").

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
)

// derivation is one session derived again from the store. A House is not
// safe for concurrent use: hold mu while using h.
type derivation struct {
	mu      gosync.Mutex
	heads   string
	h       *house.House
	body    *house.SessionBody
	profile *statute.Profile
	genesis dag.ID
}

// reviews memoises the latest derivation of each session.
type reviews struct {
	mu   gosync.Mutex
	last map[string]*derivation
}

// storeObjs is house.Objects over the store.
type storeObjs struct {
	ctx context.Context
	l   *Local
}

func (o storeObjs) Object(id dag.ID) ([]byte, error) { return o.l.Object(o.ctx, id) }

func (s *Server) derive(ctx context.Context, space string) (*derivation, error) {
	hs, err := s.l.Heads(ctx, space)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprint(hs)
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	if d := s.rv.last[space]; d != nil && d.heads == key {
		return d, nil
	}
	order, err := dag.SpaceOrder(ctx, s.l.Store(), space)
	if err != nil {
		return nil, err
	}
	sid, err := dag.ParseID(space)
	if err != nil {
		return nil, err
	}
	d := &derivation{heads: key}
	in := make([]house.Input, 0, len(order))
	for _, id := range order {
		e, err := s.l.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil {
			return nil, err
		}
		if env.Type == dag.TxSessionCreate {
			if d.body, err = house.DecodeSessionBody(env.Body); err != nil {
				return nil, err
			}
		}
		in = append(in, house.Input{ID: id, Env: env})
	}
	if d.body == nil {
		return nil, fmt.Errorf("%w: %s", replica.ErrUnknownSpace, space)
	}
	if d.h, _, _, err = house.Derive(sid, in, storeObjs{ctx: ctx, l: s.l}); err != nil {
		return nil, err
	}
	if d.profile, err = statute.LoadProfile(d.body.Profile); err != nil {
		return nil, err
	}
	if d.genesis, err = house.Genesis(d.body.Seed).ID(); err != nil {
		return nil, err
	}
	if s.rv.last == nil {
		s.rv.last = map[string]*derivation{}
	}
	s.rv.last[space] = d
	return d, nil
}

// changeParents is the Change DAG as far as it can be read back: the
// genesis change, change objects in the store, and executed merges whose
// merge change re-derives to the recorded id from the MR's open-time
// target head. A merge executed on a moved target head is not found, and
// the review of an MR that needs it answers 501.
func (s *Server) changeParents(ctx context.Context, d *derivation) dag.ParentSource {
	return dag.ParentsFunc(func(id dag.ID) ([]dag.ID, error) {
		if id == d.genesis {
			return nil, nil
		}
		if b, err := s.l.Object(ctx, id); err == nil {
			c, _, _, err := statute.DecodeChange(b)
			if err != nil {
				return nil, err
			}
			return c.Parents, nil
		}
		for _, m := range d.h.State().MRs {
			if m.Merge == nil || *m.Merge != id || m.Source == nil {
				continue
			}
			return []dag.ID{m.Target.Head, m.Source.Head}, nil
		}
		return nil, fmt.Errorf("httpapi: change %s: %w", id, dag.ErrNotFound)
	})
}

// review is an MR's patch against its open-time target head.
type review struct {
	mr     house.MRView
	body   *house.MR
	review *statute.Review
	env    statute.Env
}

func (s *Server) reviewOf(ctx context.Context, space string, id dag.ID) (*review, error) {
	d, err := s.derive(ctx, space)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.h.MR(id)
	if !ok {
		return nil, fmt.Errorf("httpapi: MR %s: %w", id, dag.ErrNotFound)
	}
	if v.Kind == "governance" || v.Source == nil {
		return nil, problemf(dag.CodeSchema, "MR %s is a governance MR: it changes rules, not text, so it has no diff, checks or fact sheet", id)
	}
	if len(v.OpenedBy) == 0 {
		return nil, fmt.Errorf("httpapi: MR %s has no opening entry", id)
	}
	e, err := s.l.Get(ctx, v.OpenedBy[0])
	if err != nil {
		return nil, err
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return nil, err
	}
	body, err := house.DecodeMR(env.Body)
	if err != nil {
		return nil, err
	}
	op, err := statute.Open(s.changeParents(ctx, d), d.h, statute.MergeRequest{SourceHead: body.Source.Head, TargetHead: body.Target.Head, Resolutions: body.Resolutions})
	if errors.Is(err, dag.ErrNotFound) {
		return nil, problemf(CodeNotImplemented, "the Change DAG of MR %s is not readable from this node's store (a merge executed on a moved head): %v", id, err)
	}
	if err != nil {
		return nil, err
	}
	r := &review{mr: v, body: body, review: statute.ReviewOf(op.Target, op.Patch)}
	r.env = statute.Env{MR: id, Profile: d.profile, Fiscal: body.Fiscal, Effective: body.Effective,
		Published: func(ref dag.ID) bool {
			if _, err := s.l.Object(ctx, ref); err == nil {
				return true
			}
			e, err := s.l.Get(ctx, ref)
			return err == nil && e.Space == space
		}}
	for _, j := range d.body.Jurisdictions {
		r.env.Jurisdictions = append(r.env.Jurisdictions, j.Code)
	}
	return r, nil
}

// mrFinality is the finality of what describes an MR's outcome.
func (s *Server) mrFinality(ctx context.Context, space string, id dag.ID) replica.Finality {
	if m, err := s.rep.MR(ctx, space, id); err == nil {
		return m.Finality
	}
	return replica.Provisional
}

func (s *Server) reviewHandler(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		space, err := s.spaceOf(r)
		if err != nil {
			return err
		}
		id, err := parseIDParam(r, "id")
		if err != nil {
			return err
		}
		rv, err := s.reviewOf(ctx, space, id)
		if err != nil {
			return err
		}
		fin := s.mrFinality(ctx, space, id)
		labels := s.labels(ctx, space)
		var view any
		switch what {
		case "diff":
			d := rv.review.Diff()
			if d == nil {
				return problemf(dag.CodeSchema, "MR %s: the patch does not apply: %v", id, rv.review.Err)
			}
			view = d.View(id.String())
		case "checks":
			view = statute.RunChecks(rv.review, rv.env)
		case "facts":
			fs, err := statute.Facts(rv.review, rv.env, statute.FactInputs{Finality: string(fin)})
			if err != nil {
				return err
			}
			view = fs
		}
		return writeJSON(w, map[string]any{what: view, "mr": id, "session": labels.Session,
			"simulation": labels.Simulation, "finality": fin})
	}
}
