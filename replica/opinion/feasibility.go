package opinion

// This file decodes feasibility opinions (30k §8, D70): an implementer's
// earliest date for the nodes of an MR. Nodes show every feasibility
// opinion on an MR side by side; they never block and are never counted
// (the fact sheet lists them; the effective_before_feasible check warns).

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// MaxNotes bounds feasibility.notes, in characters (§8).
const MaxNotes = 2000

// Feasibility is a decoded feasibility member.
type Feasibility struct {
	MR          dag.ID
	Implementer string
	Nodes       []string
	Earliest    string // YYYY-MM-DD
	DependsOn   []string
	Notes       string
}

type wireFeasibility struct {
	MR          *string  `json:"mr"`
	Implementer *string  `json:"implementer"`
	Nodes       []string `json:"nodes"`
	Earliest    *string  `json:"earliest"`
	DependsOn   []string `json:"depends_on"`
	Notes       *string  `json:"notes"`
}

func decodeFeasibility(raw json.RawMessage) (*Feasibility, error) {
	var w wireFeasibility
	if err := strict(raw, &w, "feasibility"); err != nil {
		return nil, err
	}
	if w.MR == nil || w.Implementer == nil || w.Nodes == nil || w.Earliest == nil {
		return nil, schemaf("feasibility: mr, implementer, nodes and earliest are required")
	}
	id, err := dag.ParseID(*w.MR)
	if err != nil {
		return nil, schemaf("feasibility.mr: %v", err)
	}
	f := &Feasibility{MR: id, Implementer: *w.Implementer, Nodes: w.Nodes, Earliest: *w.Earliest, DependsOn: w.DependsOn}
	if w.Notes != nil {
		f.Notes = *w.Notes
	}
	if f.Implementer == "" || utf8.RuneCountInString(f.Implementer) > MaxText {
		return nil, schemaf("feasibility.implementer is 1 to %d characters", MaxText)
	}
	if len(f.Nodes) == 0 || len(f.Nodes) > MaxList || len(f.DependsOn) > MaxList {
		return nil, schemaf("feasibility: nodes lists 1 to %d nids, depends_on at most %d", MaxList, MaxList)
	}
	for _, n := range f.Nodes {
		if n == "" || len(n) > MaxText {
			return nil, schemaf("feasibility.nodes: a nid is 1 to %d bytes", MaxText)
		}
	}
	for _, d := range f.DependsOn {
		if d == "" || utf8.RuneCountInString(d) > MaxText {
			return nil, schemaf("feasibility.depends_on: each entry is 1 to %d characters", MaxText)
		}
	}
	if !isCalendarDate(f.Earliest) {
		return nil, schemaf("feasibility.earliest %q is not a calendar date YYYY-MM-DD", dag.Trunc(f.Earliest))
	}
	if utf8.RuneCountInString(f.Notes) > MaxNotes {
		return nil, schemaf("feasibility.notes is at most %d characters", MaxNotes)
	}
	return f, nil
}
