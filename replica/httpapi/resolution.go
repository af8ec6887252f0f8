package httpapi

// This file fetches the reports of a resolution spec's listed nodes
// (30k §8, D31) that are not this node. witan asks each of its report
// peers (Options.ReportPeers, base URLs) over the same HTTP API it
// serves: GET /.well-known/oth for the peer's node_key and consistency,
// then, if that key is listed, GET /opinions/{id}/evaluation?reports=self
// for the peer's own report (reports=self makes the peer answer from its
// own record without asking anyone in turn). A listed node that no
// report peer answers for, or whose peer cannot be reached within
// ReportTimeout, is reported "unreachable": it counts for neither side,
// so the spec stays unresolved (never unsatisfiable for that alone)
// until the node answers. Reports are not signed (docs/deviations.md).

import (
	"context"
	"net/url"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/view"
)

// ReportTimeout bounds the time spent asking one report peer.
const ReportTimeout = 3 * time.Second

// fillReports replaces the unreachable reports of ev's resolution with
// those its listed nodes give, and recomputes the resolution.
func (s *Server) fillReports(ctx context.Context, space string, id dag.ID, ev *view.OpinionEvaluation) {
	res := ev.Resolution
	if res == nil || len(s.o.ReportPeers) == 0 {
		return
	}
	for _, base := range s.o.ReportPeers {
		if !slices.ContainsFunc(res.Reports, func(r view.NodeReport) bool { return r.Source == view.ReportUnreachable }) {
			break
		}
		s.askPeer(ctx, base, space, id, res)
	}
	ev.RefreshResolution()
}

func (s *Server) askPeer(ctx context.Context, base, space string, id dag.ID, res *view.ResolutionEval) {
	ctx, cancel := context.WithTimeout(ctx, ReportTimeout)
	defer cancel()
	c := &Client{BaseURL: base}
	var capDoc struct {
		NodeKey     dag.Key `json:"node_key"`
		Consistency string  `json:"consistency"`
	}
	if err := c.Get(ctx, "/.well-known/oth", nil, &capDoc); err != nil {
		return
	}
	i := slices.IndexFunc(res.Reports, func(r view.NodeReport) bool {
		return r.Node == capDoc.NodeKey && r.Source == view.ReportUnreachable
	})
	if i < 0 || (capDoc.Consistency != "strong" && capDoc.Consistency != "eventual") {
		return
	}
	cons := capDoc.Consistency
	res.Reports[i].Consistency = &cons
	var theirs view.OpinionEvaluation
	if err := c.Get(ctx, "/opinions/"+id.String()+"/evaluation", url.Values{"session": {space}, "reports": {"self"}}, &theirs); err != nil || theirs.Resolution == nil {
		return
	}
	for _, r := range theirs.Resolution.Reports {
		if r.Node != capDoc.NodeKey || r.Source != view.ReportSelf || r.Assertion == nil || r.Finality == nil {
			continue
		}
		a, f := *r.Assertion, *r.Finality
		if a != opinion.Holds && a != opinion.Fails && a != opinion.Undetermined {
			return
		}
		switch {
		case f == replica.Provisional, f == replica.FinalAdvisory:
		case f == "final" && cons == "strong":
		case f == "final": // an eventual node never emits final (30k §5): read it as final_advisory
			f = replica.FinalAdvisory
		default:
			return
		}
		res.Reports[i] = view.NodeReport{Node: r.Node, Source: view.ReportPeer, Consistency: &cons, Assertion: &a, Finality: &f}
		return
	}
}
