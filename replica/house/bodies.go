package house

// This file decodes the bodies of the L1 transaction types (30k §4) and the
// objects they name (branch and group objects, node objects). Every decoder
// reads untrusted bytes: it first passes them through dag.Canonicalize
// (witan's JCS profile), then decodes strictly (no unknown member, required
// members present), and answers schema for anything else.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// ErrSchema is wrapped by every decoding error of this package.
var ErrSchema = errors.New("house: malformed body")

func schemaf(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "house: " + fmt.Sprintf(format, args...), Err: ErrSchema}
}

// strict decodes canonical-profile JSON into v, refusing unknown members.
func strict(b []byte, v any, what string) error {
	if err := dag.DecodeStrict(b, v); err != nil {
		return schemaf("%s: %s", what, dag.ErrorDetail(err))
	}
	return nil
}

// MaxNameLen bounds group ids and branch names, in bytes.
const MaxNameLen = 200

// MaxSummaryLen bounds an MR's summary, in characters (30k §4).
const MaxSummaryLen = 280

// checkName checks a group id or branch name: non-empty, at most
// MaxNameLen bytes, no control characters, no ':' (so that "group:<id>"
// has one reading).
func checkName(s, what string) error {
	if s == "" || len(s) > MaxNameLen {
		return schemaf("%s %q must be 1 to %d bytes", what, dag.Trunc(s), MaxNameLen)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ':' {
			return schemaf("%s %q contains a control character or ':'", what, dag.Trunc(s))
		}
	}
	return nil
}

// ParseGroupRef parses "group:<id>" and returns the id.
func ParseGroupRef(s string) (string, error) {
	id, ok := strings.CutPrefix(s, "group:")
	if !ok {
		return "", schemaf("group reference %q is not group:<id>", dag.Trunc(s))
	}
	if err := checkName(id, "group id"); err != nil {
		return "", err
	}
	return id, nil
}

func parseID(p *string, what string, required bool) (dag.ID, error) {
	if p == nil {
		if required {
			return dag.ID{}, schemaf("%s is required", what)
		}
		return dag.ID{}, nil
	}
	id, err := dag.ParseID(*p)
	if err != nil {
		return dag.ID{}, schemaf("%s: %v", what, err)
	}
	return id, nil
}

func parseRef(raw json.RawMessage, what string) (rules.Ref, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return rules.Ref{}, schemaf("%s is required", what)
	}
	r, err := rules.ParseRef(raw)
	if err != nil {
		return rules.Ref{}, schemaf("%s: %v", what, err)
	}
	return r, nil
}

func parseKeys(ss []string, what string) ([]dag.Key, error) {
	type ks struct {
		k dag.Key
		s string
	}
	all := make([]ks, 0, len(ss))
	seen := make(map[dag.Key]struct{}, len(ss))
	for i, s := range ss {
		k, err := dag.ParseKey(s)
		if err != nil {
			return nil, schemaf("%s[%d]: %v", what, i, err)
		}
		if _, dup := seen[k]; dup {
			return nil, schemaf("%s lists %s twice", what, k)
		}
		seen[k] = struct{}{}
		all = append(all, ks{k, s})
	}
	// Sorted by string form, the order of electorate snapshots; a key has
	// one spelling (ParseKey is strict), so the input strings serve.
	slices.SortFunc(all, func(a, b ks) int { return strings.Compare(a.s, b.s) })
	out := make([]dag.Key, len(all))
	for i, x := range all {
		out[i] = x.k
	}
	return out, nil
}

// Jurisdiction is one declared jurisdiction of a session (D73).
type Jurisdiction struct {
	Code string `json:"code"`
	Name string `json:"name"`
	// Key is the key a research session names to record the
	// jurisdiction's choices (D73; witan's member, docs/deviations.md),
	// "ed25519:…"; absent when none.
	Key string `json:"key,omitempty"`
}

// SessionBody is the body of session.create (30k §4).
type SessionBody struct {
	Label              string
	Seed               dag.ID
	Simulation         bool
	Education          bool
	Registrar          string // group id, without "group:"
	Roster             string
	Observers          string // "" when the session names none
	Profile            string
	RootRule           rules.Ref
	RootGovernanceRule rules.Ref
	Jurisdictions      []Jurisdiction
	Districts          dag.ID // zero when absent
}

type wireSession struct {
	Label              *string         `json:"label"`
	Seed               *string         `json:"seed"`
	Simulation         *bool           `json:"simulation"`
	Education          *bool           `json:"education"`
	Registrar          *string         `json:"registrar"`
	Profile            *string         `json:"profile"`
	Roster             *string         `json:"roster"`
	RootRule           json.RawMessage `json:"root_rule"`
	RootGovernanceRule json.RawMessage `json:"root_governance_rule"`
	Jurisdictions      *[]Jurisdiction `json:"jurisdictions"`
	Districts          *string         `json:"districts"`
	Observers          *string         `json:"observers"`
}

// DecodeSessionBody decodes the body of a session.create. It checks the
// shape only; the floors of D38 and D42 and the flags are checked by
// CheckSession.
func DecodeSessionBody(b []byte) (*SessionBody, error) {
	var w wireSession
	if err := strict(b, &w, "session.create"); err != nil {
		return nil, err
	}
	switch {
	case w.Label == nil, w.Seed == nil, w.Simulation == nil, w.Education == nil,
		w.Registrar == nil, w.Profile == nil, w.Roster == nil:
		return nil, schemaf("session.create: label, seed, simulation, education, registrar, profile, roster, root_rule and root_governance_rule are required")
	}
	s := &SessionBody{Label: *w.Label, Simulation: *w.Simulation, Education: *w.Education, Profile: *w.Profile}
	var err error
	if s.Seed, err = parseID(w.Seed, "seed", true); err != nil {
		return nil, err
	}
	if s.Registrar, err = ParseGroupRef(*w.Registrar); err != nil {
		return nil, err
	}
	if s.Roster, err = ParseGroupRef(*w.Roster); err != nil {
		return nil, err
	}
	if w.Observers != nil {
		if s.Observers, err = ParseGroupRef(*w.Observers); err != nil {
			return nil, err
		}
		if s.Observers == s.Roster {
			return nil, &dag.ProtocolError{Code: dag.CodeObserverNotAllowed, Detail: "house: the observers group is the roster"}
		}
	}
	if s.RootRule, err = parseRef(w.RootRule, "root_rule"); err != nil {
		return nil, err
	}
	if s.RootGovernanceRule, err = parseRef(w.RootGovernanceRule, "root_governance_rule"); err != nil {
		return nil, err
	}
	if w.Jurisdictions != nil {
		s.Jurisdictions = *w.Jurisdictions
		seen := map[string]bool{}
		for _, j := range s.Jurisdictions {
			if j.Code == "" || seen[j.Code] {
				return nil, schemaf("session.create: jurisdiction codes must be non-empty and unique")
			}
			seen[j.Code] = true
		}
		if err := checkJurisdictionKeys(s); err != nil { // D73 (opinion_members.go)
			return nil, err
		}
	}
	if s.Districts, err = parseID(w.Districts, "districts", false); err != nil {
		return nil, err
	}
	return s, nil
}

// Notice and entrenchment floors of session.create.
const (
	// MinRootNotice is D42's floor on the root merge rule's min_notice.
	MinRootNotice = 259200
	// SmallRoster is D59's bound under which an education session MAY
	// scale the floors down.
	SmallRoster = 100
)

// CheckSession checks the rules of session.create that need no other
// state: a known profile, education implies simulation, districts only in
// simulations, both rules compile, and the floors of D38 (root governance
// is an electorate-based threshold_vote of at least 2/3) and D42 (root
// merge notice at least 72 hours). Education sessions are held to the same
// floors: D59 lets them scale the floors down for rosters under 100, but
// the roster is not known when the session is created.
func CheckSession(s *SessionBody) error {
	if _, err := statute.LoadProfile(s.Profile); err != nil {
		return err
	}
	if s.Education && !s.Simulation {
		return schemaf("session.create: education requires simulation")
	}
	if s.Districts.Valid() && !s.Simulation {
		return &dag.ProtocolError{Code: dag.CodeDistrictAttributeInvalid, Detail: "house: districts are allowed only in simulation sessions"}
	}
	if _, err := rules.Compile(s.RootRule); err != nil {
		return err
	}
	gov, err := rules.Compile(s.RootGovernanceRule)
	if err != nil {
		return err
	}
	if err := CheckEntrenchment(gov); err != nil {
		return err
	}
	return CheckRootNotice(s.RootRule)
}

// CheckEntrenchment checks D38 on a root governance rule.
func CheckEntrenchment(r *rules.Rule) error {
	th, ok := r.Threshold()
	if !ok || th.Basis != rules.BasisElectorate || th.Num*3 < th.Den*2 {
		return dag.Errorf(dag.CodeNotAuthorized, "house: root_governance_rule must be a threshold_vote with basis electorate and num/den >= 2/3 (D38)")
	}
	return nil
}

// CheckRootNotice checks D42 on a root merge rule.
func CheckRootNotice(r rules.Ref) error {
	if r.MinNotice == nil || *r.MinNotice < MinRootNotice {
		return dag.Errorf(dag.CodeNotAuthorized, "house: the root merge rule needs min_notice >= %d seconds (D42)", MinRootNotice)
	}
	return nil
}

// Group is a group object (30k §4): {id, members, admins}. Members and
// Admins are sorted by their string form.
type Group struct {
	ID      string
	Members []dag.Key
	Admins  []dag.Key
}

type wireGroup struct {
	ID      *string   `json:"id"`
	Members *[]string `json:"members"`
	Admins  *[]string `json:"admins"`
}

// DecodeGroup decodes a group object: the body of group.create, or the
// object a group.update names.
func DecodeGroup(b []byte) (*Group, error) {
	var w wireGroup
	if err := strict(b, &w, "group"); err != nil {
		return nil, err
	}
	if w.ID == nil || w.Members == nil || w.Admins == nil {
		return nil, schemaf("group: id, members and admins are required")
	}
	if err := checkName(*w.ID, "group id"); err != nil {
		return nil, err
	}
	g := &Group{ID: *w.ID}
	var err error
	if g.Members, err = parseKeys(*w.Members, "members"); err != nil {
		return nil, err
	}
	if g.Admins, err = parseKeys(*w.Admins, "admins"); err != nil {
		return nil, err
	}
	return g, nil
}

// ObjectRef is the body of group.update and branch.create: the id of the
// object the transaction publishes, which travels in attachments
// (docs/wire-format.md, open point 5).
type ObjectRef struct{ ID dag.ID }

// DecodeObjectRef decodes {"<member>":"sha256:..."}.
func DecodeObjectRef(b []byte, member string) (ObjectRef, error) {
	var m map[string]*string
	if err := strict(b, &m, member+" body"); err != nil {
		return ObjectRef{}, err
	}
	if len(m) != 1 || m[member] == nil {
		return ObjectRef{}, schemaf("body must be exactly {%q:\"sha256:...\"}", member)
	}
	id, err := parseID(m[member], member, true)
	return ObjectRef{id}, err
}

// Branch is a branch object (30k §4), the object branch.create publishes.
type Branch struct {
	Name           string
	Session        dag.ID
	Owner          string // group id
	SourceBranch   string
	SourceChange   dag.ID
	Head           dag.ID
	Restricted     bool
	Protected      bool
	MergeRule      rules.Ref
	GovernanceRule rules.Ref
}

type wireBranch struct {
	Name   *string `json:"name"`
	Sess   *string `json:"session"`
	Owner  *string `json:"owner"`
	Source *struct {
		Branch *string `json:"branch"`
		Change *string `json:"change"`
	} `json:"source"`
	Head           *string         `json:"head"`
	Visibility     *string         `json:"visibility"`
	Protected      *bool           `json:"protected"`
	MergeRule      json.RawMessage `json:"merge_rule"`
	GovernanceRule json.RawMessage `json:"governance_rule"`
}

// DecodeBranch decodes a branch object. Both rules are required: 30k §4
// forbids implicit defaults.
func DecodeBranch(b []byte) (*Branch, error) {
	var w wireBranch
	if err := strict(b, &w, "branch"); err != nil {
		return nil, err
	}
	if w.Name == nil || w.Sess == nil || w.Owner == nil || w.Source == nil || w.Source.Branch == nil ||
		w.Source.Change == nil || w.Head == nil || w.Visibility == nil || w.Protected == nil {
		return nil, schemaf("branch: name, session, owner, source {branch, change}, head, visibility, protected, merge_rule and governance_rule are required")
	}
	br := &Branch{Name: *w.Name, SourceBranch: *w.Source.Branch, Protected: *w.Protected}
	if err := checkName(br.Name, "branch name"); err != nil {
		return nil, err
	}
	var err error
	if br.Session, err = parseID(w.Sess, "session", true); err != nil {
		return nil, err
	}
	if br.Owner, err = ParseGroupRef(*w.Owner); err != nil {
		return nil, err
	}
	if br.SourceChange, err = parseID(w.Source.Change, "source.change", true); err != nil {
		return nil, err
	}
	if br.Head, err = parseID(w.Head, "head", true); err != nil {
		return nil, err
	}
	switch *w.Visibility {
	case "public":
	case "restricted":
		br.Restricted = true
	default:
		return nil, schemaf("branch: visibility %q is not public or restricted", dag.Trunc(*w.Visibility))
	}
	if br.MergeRule, err = parseRef(w.MergeRule, "merge_rule"); err != nil {
		return nil, err
	}
	if br.GovernanceRule, err = parseRef(w.GovernanceRule, "governance_rule"); err != nil {
		return nil, err
	}
	return br, nil
}

// Append is the body of branch.append: {"branch":"<name>","change":"sha256:..."};
// the change travels in attachments.
type Append struct {
	Branch string
	// Change is the appended change on a public branch; zero on a
	// restricted one.
	Change dag.ID
	// Commitment and Size are a restricted branch's append
	// (restricted.go): sha256(salt || change id) and the declared size of
	// what the reveal will attach; zero on a public branch.
	Commitment dag.ID
	Size       int64
}

// DecodeAppend decodes the body of branch.append: {branch, change} on a
// public branch, {branch, commitment, size} on a restricted one.
func DecodeAppend(b []byte) (Append, error) {
	var w struct {
		Branch     *string `json:"branch"`
		Change     *string `json:"change"`
		Commitment *string `json:"commitment"`
		Size       *int64  `json:"size"`
	}
	if err := strict(b, &w, "branch.append"); err != nil {
		return Append{}, err
	}
	if w.Branch == nil {
		return Append{}, schemaf("branch.append: branch and change are required")
	}
	if err := checkName(*w.Branch, "branch name"); err != nil {
		return Append{}, err
	}
	if w.Commitment != nil || w.Size != nil {
		return decodeCommitAppend(*w.Branch, w.Change, w.Commitment, w.Size) // restricted.go
	}
	id, err := parseID(w.Change, "change", true)
	return Append{Branch: *w.Branch, Change: id}, err
}

// HeadRef is an MR's source or target: a branch and a change id.
type HeadRef struct {
	Branch string
	Head   dag.ID
}

// GovSet is what a governance MR sets on its target branch.
type GovSet struct {
	MergeRule      *rules.Ref
	GovernanceRule *rules.Ref
	Owner          string // group id; "" when not set
}

// MR is the body of mr.open, a MergeRequest (30k §4). Its id is the hash
// of the canonical body.
type MR struct {
	Kind        string // "merge" or "governance"
	Session     dag.ID
	Source      HeadRef // merge only
	Target      HeadRef
	Resolutions []statute.Resolution
	Group       string // electorate group id
	Snapshot    dag.ID // electorate snapshot
	Rule        rules.Ref
	Summary     string
	Supersedes  dag.ID
	Effective   statute.Effective
	Emergency   bool
	Fiscal      bool
	VariantOf   dag.ID
	Set         GovSet // governance only
}

type wireHead struct {
	Branch *string `json:"branch"`
	Head   *string `json:"head"`
}

func (w *wireHead) parse(what string) (HeadRef, error) {
	if w == nil || w.Branch == nil || w.Head == nil {
		return HeadRef{}, schemaf("%s {branch, head} is required", what)
	}
	if err := checkName(*w.Branch, what+".branch"); err != nil {
		return HeadRef{}, err
	}
	id, err := parseID(w.Head, what+".head", true)
	return HeadRef{Branch: *w.Branch, Head: id}, err
}

type wireMR struct {
	Kind        *string            `json:"kind"`
	Session     *string            `json:"session"`
	Source      *wireHead          `json:"source"`
	Target      *wireHead          `json:"target"`
	Resolutions *[]json.RawMessage `json:"resolutions"`
	Electorate  *struct {
		Group    *string `json:"group"`
		Snapshot *string `json:"snapshot"`
	} `json:"electorate"`
	Rule       json.RawMessage `json:"rule"`
	Summary    *string         `json:"summary"`
	Supersedes *string         `json:"supersedes"`
	Effective  *struct {
		Type *string `json:"type"`
		Date *string `json:"date"`
	} `json:"effective"`
	Emergency *bool   `json:"emergency"`
	Fiscal    *bool   `json:"fiscal"`
	VariantOf *string `json:"variant_of"`
	Set       *struct {
		MergeRule      json.RawMessage `json:"merge_rule"`
		GovernanceRule json.RawMessage `json:"governance_rule"`
		Owner          *string         `json:"owner"`
	} `json:"set"`
}

// DecodeMR decodes the body of mr.open. kind, session, target, electorate
// and rule are required; a merge needs source, a governance MR needs set
// (with at least one member) and no source. resolutions, summary,
// supersedes, effective (default on_merge), emergency, fiscal and
// variant_of may be absent or null.
func DecodeMR(b []byte) (*MR, error) {
	var w wireMR
	if err := strict(b, &w, "mr.open"); err != nil {
		return nil, err
	}
	if w.Kind == nil || w.Session == nil || w.Electorate == nil || w.Electorate.Group == nil || w.Electorate.Snapshot == nil {
		return nil, schemaf("mr.open: kind, session, target, electorate {group, snapshot} and rule are required")
	}
	m := &MR{Kind: *w.Kind}
	var err error
	if m.Session, err = parseID(w.Session, "session", true); err != nil {
		return nil, err
	}
	if m.Target, err = w.Target.parse("target"); err != nil {
		return nil, err
	}
	if m.Group, err = ParseGroupRef(*w.Electorate.Group); err != nil {
		return nil, err
	}
	if m.Snapshot, err = parseID(w.Electorate.Snapshot, "electorate.snapshot", true); err != nil {
		return nil, err
	}
	if m.Rule, err = parseRef(w.Rule, "rule"); err != nil {
		return nil, err
	}
	switch m.Kind {
	case "merge":
		if w.Set != nil {
			return nil, schemaf("mr.open: a merge MR carries no set")
		}
		if m.Source, err = w.Source.parse("source"); err != nil {
			return nil, err
		}
	case "governance":
		if w.Source != nil {
			return nil, schemaf("mr.open: a governance MR carries no source")
		}
		if w.Set == nil {
			return nil, schemaf("mr.open: a governance MR needs set")
		}
		if len(w.Set.MergeRule) > 0 && string(w.Set.MergeRule) != "null" {
			r, err := parseRef(w.Set.MergeRule, "set.merge_rule")
			if err != nil {
				return nil, err
			}
			m.Set.MergeRule = &r
		}
		if len(w.Set.GovernanceRule) > 0 && string(w.Set.GovernanceRule) != "null" {
			r, err := parseRef(w.Set.GovernanceRule, "set.governance_rule")
			if err != nil {
				return nil, err
			}
			m.Set.GovernanceRule = &r
		}
		if w.Set.Owner != nil {
			if m.Set.Owner, err = ParseGroupRef(*w.Set.Owner); err != nil {
				return nil, err
			}
		}
		if m.Set.MergeRule == nil && m.Set.GovernanceRule == nil && m.Set.Owner == "" {
			return nil, schemaf("mr.open: set names nothing to change")
		}
		if w.Resolutions != nil && len(*w.Resolutions) > 0 {
			return nil, schemaf("mr.open: a governance MR carries no resolutions")
		}
	default:
		return nil, schemaf("mr.open: kind %q is not merge or governance", dag.Trunc(m.Kind))
	}
	if w.Resolutions != nil {
		for i, raw := range *w.Resolutions {
			var r statute.Resolution
			if err := r.UnmarshalJSON(raw); err != nil {
				return nil, schemaf("mr.open: resolutions[%d]: %v", i, err)
			}
			m.Resolutions = append(m.Resolutions, r)
		}
	}
	if w.Summary != nil {
		if utf8.RuneCountInString(*w.Summary) > MaxSummaryLen {
			return nil, schemaf("mr.open: summary is longer than %d characters", MaxSummaryLen)
		}
		m.Summary = *w.Summary
	}
	if m.Supersedes, err = parseID(w.Supersedes, "supersedes", false); err != nil {
		return nil, err
	}
	if m.VariantOf, err = parseID(w.VariantOf, "variant_of", false); err != nil {
		return nil, err
	}
	if w.Effective != nil {
		if w.Effective.Type == nil {
			return nil, schemaf("mr.open: effective.type is required")
		}
		switch *w.Effective.Type {
		case "on_merge":
			if w.Effective.Date != nil {
				return nil, schemaf("mr.open: an on_merge effective carries no date")
			}
		case "date":
			if w.Effective.Date == nil {
				return nil, schemaf("mr.open: a dated effective needs date")
			}
			d, err := statute.ParseDate(*w.Effective.Date)
			if err != nil {
				return nil, &dag.ProtocolError{Code: dag.CodeEffectiveInvalid, Detail: err.Error()}
			}
			m.Effective = statute.Effective{Dated: true, Date: d}
		default:
			return nil, schemaf("mr.open: effective.type %q is not on_merge or date", dag.Trunc(*w.Effective.Type))
		}
	}
	if w.Emergency != nil {
		m.Emergency = *w.Emergency
	}
	if w.Fiscal != nil {
		m.Fiscal = *w.Fiscal
	}
	return m, nil
}

// Determination is the body of mr.determine (30k §4).
type Determination struct {
	MR      dag.ID
	Ballots []dag.ID
	Outcome rules.Outcome
}

// DecodeDetermination decodes the body of mr.determine: mr, ballots (no
// repeats) and outcome are required.
func DecodeDetermination(b []byte) (*Determination, error) {
	var w struct {
		MR      *string   `json:"mr"`
		Ballots *[]string `json:"ballots"`
		Outcome *string   `json:"outcome"`
	}
	if err := strict(b, &w, "mr.determine"); err != nil {
		return nil, err
	}
	if w.Ballots == nil || w.Outcome == nil {
		return nil, schemaf("mr.determine: mr, ballots and outcome are required")
	}
	d := &Determination{Outcome: rules.Outcome(*w.Outcome)}
	var err error
	if d.MR, err = parseID(w.MR, "mr", true); err != nil {
		return nil, err
	}
	switch d.Outcome {
	case rules.Approved, rules.Rejected, rules.Expired, rules.Pending:
	default:
		return nil, schemaf("mr.determine: outcome %q is not approved, rejected, expired or pending", dag.Trunc(*w.Outcome))
	}
	seen := make(map[dag.ID]struct{}, len(*w.Ballots))
	d.Ballots = make([]dag.ID, 0, len(*w.Ballots))
	for i, s := range *w.Ballots {
		id, err := dag.ParseID(s)
		if err != nil {
			return nil, schemaf("mr.determine: ballots[%d]: %v", i, err)
		}
		if _, dup := seen[id]; dup {
			return nil, schemaf("mr.determine: ballot %s listed twice", id)
		}
		seen[id] = struct{}{}
		d.Ballots = append(d.Ballots, id)
	}
	return d, nil
}

// DecodeKeyRegister decodes the body of key.register: {"key":"ed25519:..."}.
func DecodeKeyRegister(b []byte) (dag.Key, error) {
	var w struct {
		Key *string `json:"key"`
	}
	if err := strict(b, &w, "key.register"); err != nil {
		return dag.Key{}, err
	}
	if w.Key == nil {
		return dag.Key{}, schemaf("key.register: key is required")
	}
	k, err := dag.ParseKey(*w.Key)
	if err != nil {
		return dag.Key{}, schemaf("key.register: %v", err)
	}
	if k.SmallOrder() {
		return dag.Key{}, schemaf("key.register: %s is a small-order point: anyone can forge its signatures", k)
	}
	return k, nil
}

// DecodeNode decodes a statute node object {nid, kind, heading, text,
// children} (docs/wire-format.md, open point 11).
func DecodeNode(b []byte) (*dag.Node, error) {
	var w struct {
		NID      *string   `json:"nid"`
		Kind     *string   `json:"kind"`
		Heading  *string   `json:"heading"`
		Text     *string   `json:"text"`
		Children *[]string `json:"children"`
	}
	if err := strict(b, &w, "node"); err != nil {
		return nil, err
	}
	if w.NID == nil || w.Kind == nil || w.Children == nil {
		return nil, schemaf("node: nid, kind and children are required")
	}
	n := &dag.Node{NID: *w.NID, Kind: *w.Kind, Children: make([]dag.ID, len(*w.Children))}
	if w.Heading != nil {
		n.Heading = *w.Heading
	}
	if w.Text != nil {
		n.Text = *w.Text
	}
	for i, s := range *w.Children {
		id, err := dag.ParseID(s)
		if err != nil {
			return nil, schemaf("node: children[%d]: %v", i, err)
		}
		n.Children[i] = id
	}
	return n, nil
}

// DecodeBody decodes the body of an envelope of type t, for the fuzz
// target and for tools: it returns the decoded value or the error the
// replica would quarantine with. Types the house does not support answer
// an error with code schema.
func DecodeBody(t dag.TxType, body []byte) (any, error) {
	switch t {
	case dag.TxSessionCreate:
		s, err := DecodeSessionBody(body)
		if err != nil {
			return nil, err
		}
		return s, CheckSession(s)
	case dag.TxGroupCreate:
		return DecodeGroup(body)
	case dag.TxGroupUpdate:
		return DecodeObjectRef(body, "group")
	case dag.TxBranchCreate:
		return DecodeObjectRef(body, "branch")
	case dag.TxBranchAppend:
		return DecodeAppend(body)
	case dag.TxBranchReveal: // restricted.go
		return DecodeReveal(body)
	case dag.TxMROpen:
		return DecodeMR(body)
	case dag.TxBallotCast:
		return rules.DecodeBallotBody(body)
	case dag.TxMRDetermine:
		return DecodeDetermination(body)
	case dag.TxKeyRegister:
		return DecodeKeyRegister(body)
	case dag.TxKeyRotate: // rotation hook (rotate.go)
		return DecodeKeyRotate(body)
	case dag.TxContestOpen: // contest hooks
		return rules.DecodeContestOpen(body)
	case dag.TxContestRank:
		return rules.DecodeRankBody(body)
	case dag.TxContestDetermine:
		return DecodeContestDetermination(body)
	}
	return nil, unsupported(t)
}

func unsupported(t dag.TxType) error {
	return schemaf("%s is not supported by witan's L1 replica yet", t)
}
