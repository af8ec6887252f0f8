package rules

import (
	"github.com/witan-dev/witan/dag"
)

// Choice is a ballot's choice.
type Choice uint8

// Ballot choices. The zero Choice is invalid.
const (
	Approve Choice = iota + 1
	Reject
	Abstain
)

func (c Choice) String() string {
	switch c {
	case Approve:
		return "approve"
	case Reject:
		return "reject"
	case Abstain:
		return "abstain"
	}
	return "invalid"
}

// MarshalText implements encoding.TextMarshaler.
func (c Choice) MarshalText() ([]byte, error) {
	if c < Approve || c > Abstain {
		return nil, schemaf("invalid choice %d", c)
	}
	return []byte(c.String()), nil
}

func parseChoice(s string) (Choice, bool) {
	switch s {
	case "approve":
		return Approve, true
	case "reject":
		return Reject, true
	case "abstain":
		return Abstain, true
	}
	return 0, false
}

// Emergency is a ballot's answer to an MR's request for emergency handling
// (D49). The zero value means the ballot does not say.
type Emergency uint8

// Emergency answers.
const (
	EmergencyUnset Emergency = iota
	EmergencyYes
	EmergencyNo
)

func (e Emergency) String() string {
	switch e {
	case EmergencyYes:
		return "yes"
	case EmergencyNo:
		return "no"
	}
	return ""
}

// BallotBody is the body of a ballot.cast transaction (30k §4):
//
//	{"mr":"sha256:...","choice":"approve|reject|abstain","weight":int?,"emergency":"yes|no"?,"supersedes":"sha256:<ballot>|null"}
type BallotBody struct {
	MR     dag.ID
	Choice Choice
	// Weight is the optional weight, meaningful only to capital_vote; the
	// kinds witan evaluates ignore it. HasWeight tells 0 from absent.
	Weight    uint64
	HasWeight bool
	Emergency Emergency
	// Supersedes is the tx id of the same member's ballot this one replaces,
	// or the zero ID.
	Supersedes dag.ID
}

// DecodeBallotBody decodes and checks the body of a ballot.cast. The text
// must satisfy witan's canonical-JSON profile; mr and choice are required,
// weight, emergency and supersedes may be absent or null, anything else is
// refused. Errors carry code schema.
func DecodeBallotBody(b []byte) (BallotBody, error) {
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return BallotBody{}, schemaf("ballot: %v", err)
	}
	f, err := object(canon, "ballot")
	if err != nil {
		return BallotBody{}, err
	}
	if err := f.only("mr", "choice", "weight", "emergency", "supersedes"); err != nil {
		return BallotBody{}, err
	}
	var body BallotBody
	s, err := f.str("mr", true)
	if err != nil {
		return BallotBody{}, err
	}
	if body.MR, err = dag.ParseID(s); err != nil {
		return BallotBody{}, schemaf("ballot: mr: %v", err)
	}
	if s, err = f.str("choice", true); err != nil {
		return BallotBody{}, err
	}
	var ok bool
	if body.Choice, ok = parseChoice(s); !ok {
		return BallotBody{}, schemaf("ballot: choice %q is not approve, reject or abstain", truncate(s))
	}
	if f.present("weight") {
		if body.Weight, err = f.uint("weight", true); err != nil {
			return BallotBody{}, err
		}
		body.HasWeight = true
	}
	if s, err = f.str("emergency", false); err != nil {
		return BallotBody{}, err
	}
	switch s {
	case "":
		if f.present("emergency") {
			return BallotBody{}, schemaf("ballot: emergency \"\" is not yes or no")
		}
	case "yes":
		body.Emergency = EmergencyYes
	case "no":
		body.Emergency = EmergencyNo
	default:
		return BallotBody{}, schemaf("ballot: emergency %q is not yes or no", truncate(s))
	}
	if s, err = f.str("supersedes", false); err != nil {
		return BallotBody{}, err
	}
	if f.present("supersedes") {
		if body.Supersedes, err = dag.ParseID(s); err != nil {
			return BallotBody{}, schemaf("ballot: supersedes: %v", err)
		}
	}
	return body, nil
}

// MarshalJSON writes the body in canonical JSON, with supersedes null when
// unset and weight and emergency left out when unset. (As with Ref, call it
// directly when the bytes must be canonical: json.Marshal HTML-escapes.)
func (b BallotBody) MarshalJSON() ([]byte, error) {
	if !b.MR.Valid() {
		return nil, schemaf("ballot: zero mr")
	}
	w := struct {
		Choice     Choice  `json:"choice"`
		Emergency  string  `json:"emergency,omitempty"`
		MR         dag.ID  `json:"mr"`
		Supersedes *dag.ID `json:"supersedes"`
		Weight     *uint64 `json:"weight,omitempty"`
	}{Choice: b.Choice, Emergency: b.Emergency.String(), MR: b.MR}
	if b.Supersedes.Valid() {
		s := b.Supersedes
		w.Supersedes = &s
	}
	if b.HasWeight {
		n := b.Weight
		w.Weight = &n
	}
	return dag.Marshal(w)
}

// Ballot is one ballot.cast as a Poll sees it: the transaction's id, its
// author (already verified by the caller) and its decoded body.
type Ballot struct {
	Tx     dag.ID
	Author dag.Key
	BallotBody
}
