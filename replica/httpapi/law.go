package httpapi

// This file is /law?date=&jurisdiction= (30k §6 item 7, D43, D58, D70,
// D73): the root text in force on a date, computed by statute.Law over the
// merges into the root, read back from the session's re-derivation until
// the replica exposes its own statute.Law (docs/deviations.md, "## node").

import (
	"context"
	"net/http"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
)

// LawOnAnswer is GET /law?date=…'s answer.
type LawOnAnswer struct {
	sessionLabels
	Date         statute.Date      `json:"date"`
	Jurisdiction string            `json:"jurisdiction,omitempty"`
	Head         dag.ID            `json:"head"`
	HeadSnapshot dag.ID            `json:"head_snapshot"`
	Snapshot     dag.ID            `json:"snapshot"`
	Merges       int               `json:"merges_in_force"`
	HeldBack     []dag.ID          `json:"held_back"`
	Root         *statute.NodeSpec `json:"root"`
	Finality     replica.Finality  `json:"finality"`
}

// enactment is one root merge with what /law needs of it.
type enactment struct {
	mr        replica.MR
	effective statute.Date
	known     bool // false: on_merge and its determination not yet checkpointed
}

func (s *Server) lawOn(w http.ResponseWriter, r *http.Request, space, date, jurisdiction string) error {
	ctx := r.Context()
	day, err := statute.ParseDate(date)
	if date == "" {
		day, err = statute.ParseDate(time.Now().UTC().Format(time.DateOnly))
	}
	if err != nil {
		return problemf(dag.CodeSchema, "date: %v", err)
	}
	chain, err := s.rootMerges(ctx, space)
	if err != nil {
		return err
	}
	d, err := s.derive(ctx, space)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	seed, err := d.h.Snapshot(d.genesis)
	if err != nil {
		return err
	}
	codes := make([]string, 0, len(d.body.Jurisdictions))
	for _, j := range d.body.Jurisdictions {
		codes = append(codes, j.Code)
	}
	law := statute.NewLaw(seed, codes)
	a := LawOnAnswer{sessionLabels: s.labels(ctx, space), Date: day, Jurisdiction: jurisdiction, HeldBack: []dag.ID{}, Finality: replica.FinalAdvisory}
	for i, e := range chain {
		if !e.known {
			// Its effective date is the date of a checkpoint not yet
			// signed: it and every later merge are held back for now.
			for _, rest := range chain[i:] {
				a.HeldBack = append(a.HeldBack, rest.mr.ID)
			}
			a.Finality = replica.Provisional
			break
		}
		before, err := d.h.Snapshot(e.mr.Target.Head)
		if err != nil {
			return err
		}
		after, err := d.h.Snapshot(*e.mr.Merge)
		if err != nil {
			return err
		}
		if err := law.Add(statute.Enactment{MR: e.mr.ID, Change: *e.mr.Merge, Effective: e.effective, Before: before, After: after}); err != nil {
			return err
		}
		if e.mr.Finality != replica.FinalAdvisory {
			a.Finality = replica.Provisional
		}
	}
	in, err := law.At(day, jurisdiction, nil, d.h)
	if err != nil {
		return err
	}
	a.Head, a.HeadSnapshot, a.Snapshot, a.Merges = in.Head, in.HeadSnapshot, in.Snapshot, in.Merges
	if !a.Head.Valid() {
		a.Head = d.genesis
	}
	a.HeldBack = append(in.HeldBack, a.HeldBack...)
	spec, ok := in.Tree.Spec(in.Tree.Root())
	if !ok {
		return problemf(CodeInternal, "law in force has no root")
	}
	a.Root = spec
	return writeJSON(w, a)
}

// rootMerges returns the executed merges into the root in the order of the
// root's history: each merge's target head is the previous merge's change,
// the first's the genesis change. A merge executed on a moved root head
// cannot be placed from the MR views: 501.
func (s *Server) rootMerges(ctx context.Context, space string) ([]enactment, error) {
	ms, err := s.rep.MRs(ctx, space)
	if err != nil {
		return nil, err
	}
	d, err := s.derive(ctx, space)
	if err != nil {
		return nil, err
	}
	byBefore := map[dag.ID]replica.MR{}
	n := 0
	for _, m := range ms {
		if m.Status != house.StatusMerged || m.Merge == nil || m.Target.Branch != house.RootBranch {
			continue
		}
		byBefore[m.Target.Head] = m
		n++
	}
	var out []enactment
	for head := d.genesis; ; {
		m, ok := byBefore[head]
		if !ok {
			break
		}
		e := enactment{mr: m}
		body, err := s.mrBody(ctx, m)
		if err != nil {
			return nil, err
		}
		if body.Effective.Dated {
			e.effective, e.known = body.Effective.Date, true
		} else {
			for _, dv := range m.Determinations {
				if !dv.Executed {
					continue
				}
				for _, ev := range m.Evaluations {
					if ev.Tx == dv.Tx && ev.At != nil {
						e.effective, e.known = mustDate(ev.At.UTC()), true
					}
				}
			}
		}
		out = append(out, e)
		head = *m.Merge
	}
	if len(out) != n {
		return nil, problemf(CodeNotImplemented, "%d root merges, %d placed in the root's history: a merge executed on a moved root head cannot be read back yet", n, len(out))
	}
	return out, nil
}

func (s *Server) mrBody(ctx context.Context, m replica.MR) (*house.MR, error) {
	e, err := s.l.Get(ctx, m.OpenedBy[0])
	if err != nil {
		return nil, err
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return nil, err
	}
	return house.DecodeMR(env.Body)
}

func mustDate(t time.Time) statute.Date {
	d, err := statute.ParseDate(t.Format(time.DateOnly))
	if err != nil {
		panic(err) // a time's own date always parses
	}
	return d
}
