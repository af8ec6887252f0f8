package author

// This file is the session family: session.create (30k §4).

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// DefaultProfile is Session.Profile's default.
const DefaultProfile = "uslm-1"

// Session is what a session.create declares.
type Session struct {
	Label string
	// Seed is the statute the session starts from; its node objects
	// travel as attachments.
	Seed *statute.Tree
	// Simulation labels the session a simulation (30k §3); Education
	// implies it (D59).
	Simulation bool
	Education  bool
	// Registrar, Roster and Observers are group ids, without "group:".
	// Registrar and Roster are required; Observers is optional.
	Registrar string
	Roster    string
	Observers string
	// Profile is the statute profile (DefaultProfile).
	Profile            string
	RootRule           rules.Ref
	RootGovernanceRule rules.Ref
	// Jurisdictions (D73) are named in the body when non-nil.
	Jurisdictions []house.Jurisdiction
	// Districts is a district attribute table in canonical JSON (D72):
	// the body names it and it travels as an attachment.
	Districts []byte
	// Texts are the plain-language texts the rules' text_ref name: they
	// travel as attachments, since a rule's text must be known or
	// attached (30k §5; refused unknown_parent otherwise).
	Texts [][]byte
}

// SessionCreate creates a session. Its id, the hash of the body, is
// Tx.Made and Tx.Env.Session; the genesis change is house.Genesis of the
// seed.
func (a *Author) SessionCreate(ctx context.Context, s Session) (Tx, error) {
	if s.Seed == nil {
		return Tx{}, errors.New("author: session.create: Seed is required")
	}
	if s.Registrar == "" || s.Roster == "" {
		return Tx{}, errors.New("author: session.create: Registrar and Roster are required")
	}
	if s.Profile == "" {
		s.Profile = DefaultProfile
	}
	body := map[string]any{
		"label": s.Label, "seed": s.Seed.Hash(), "simulation": s.Simulation || s.Education, "education": s.Education,
		"registrar": "group:" + s.Registrar, "profile": s.Profile, "roster": "group:" + s.Roster,
		"root_rule": s.RootRule, "root_governance_rule": s.RootGovernanceRule,
	}
	if s.Observers != "" {
		body["observers"] = "group:" + s.Observers
	}
	if s.Jurisdictions != nil {
		body["jurisdictions"] = s.Jurisdictions
	}
	var attach [][]byte
	for _, n := range s.Seed.Objects() {
		attach = append(attach, n.Canonical())
	}
	if s.Districts != nil {
		body["districts"] = dag.Sum(s.Districts)
		attach = append(attach, s.Districts)
	}
	attach = append(attach, s.Texts...)
	b, err := dag.Marshal(body)
	if err != nil {
		return Tx{}, err
	}
	return a.Seal(ctx, Draft{Type: dag.TxSessionCreate, Body: json.RawMessage(b), Attach: attach})
}
