package opinion

// This file decodes an opinion.publish body (30k §8) strictly: canonical
// JSON under witan's profile, member names matched exactly, no unknown
// member, every enumerated value checked. What a body lacks that the
// author's kind requires (disclosure) is judged later, by CheckAuthor,
// with its own code.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// ErrSchema is wrapped by every decoding error of this package.
var ErrSchema = errors.New("opinion: malformed body")

func schemaf(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "opinion: " + fmt.Sprintf(format, args...), Err: ErrSchema}
}

func codef(c dag.Code, format string, args ...any) error {
	return &dag.ProtocolError{Code: c, Detail: "opinion: " + fmt.Sprintf(format, args...)}
}

// Limits of the free-text members, in characters (30k §8 where it says,
// witan's otherwise: docs/deviations.md).
const (
	MaxSummary   = 280
	MaxRationale = 1000
	MaxBody      = 64 << 10 // bytes of markdown
	MaxText      = 200      // ids, venues, names
	MaxList      = 256      // entries of any list
	MaxQuoteText = 4096
)

// Opinion is a decoded opinion.publish body. Optional members that are
// absent or null are nil.
type Opinion struct {
	Subject       Subject
	AuthorKind    string
	OnBehalfOf    string // the group id of "group:<id>", "" for null
	Disclosure    *Disclosure
	Stance        string
	Summary       string
	Body          string
	Proposes      []dag.ID
	RepliesTo     dag.ID // zero for null
	Evidence      []Evidence
	Quotes        []Quote
	Findings      []Finding
	Corrects      dag.ID // zero for null
	Method        *Method
	Formalization *Formalization
	Mirror        *Mirror
	// Resolution, Forecast and Ranking are D31, D34 and D35 (markets.go).
	Resolution *Resolution
	Forecast   *Forecast
	Ranking    *Ranking
	Parts      // estimates, feasibility, attestations, ... (members.go)
	// Complaint is the complaint member (D39, complaint.go); RespondsTo
	// the complaints an observer's opinion answers (D79).
	Complaint  *Complaint
	RespondsTo []dag.ID
	// Restricted lists the members of §8's later parts (estimate,
	// forecast, ...) present and not null: the observer rule (D78) reads
	// them first; those this node does not serve are then refused, the
	// others are decoded (markets.go, members.go).
	Restricted []string
}

// Subject is what an opinion is about.
type Subject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Disclosure is the disclosure block; a nil pointer member was absent.
type Disclosure struct {
	Operator         string
	Tool             string
	Principal        dag.Key // zero when absent or null
	Funding          []Funding
	HasFunding       bool
	Affiliations     []string
	HasAffiliations  bool
	AIAssistance     string // "" when absent
	Stakes           []Stake
	HasStakes        bool
	ForeignPrincipal *ForeignPrincipal
	HasForeign       bool // present, possibly null
}

// Funding is one source of funding.
type Funding struct {
	Source string `json:"source,omitempty"`
	Kind   string `json:"kind"`
}

// Stake is one declared financial position (D32).
type Stake struct {
	Subject   dag.ID  `json:"subject"`
	Direction string  `json:"direction"`
	Venue     string  `json:"venue"`
	SizeBand  *string `json:"size_band"`
}

// ForeignPrincipal is D60's declaration.
type ForeignPrincipal struct {
	Country      string `json:"country"`
	Relationship string `json:"relationship"`
}

// Evidence is a cited source.
type Evidence struct {
	URI  string `json:"uri"`
	Hash dag.ID `json:"hash"` // zero when absent
}

// Quote is a verified quote (D21): of node NID in snapshot AsOf, or of the
// body of opinion Object (D52).
type Quote struct {
	AsOf   dag.ID `json:"as_of,omitzero"`
	NID    string `json:"nid,omitempty"`
	Object dag.ID `json:"object,omitzero"`
	Text   string `json:"text"`
}

// Finding is one checked claim (D20).
type Finding struct {
	Target        Target
	ClaimQuote    int // -1 when absent
	ClaimText     *string
	Verdict       string
	Rationale     string
	Evidence      []Evidence
	Assertion     *Assertion
	RelatedQuotes []int
}

// Target is what a finding checks.
type Target struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Method lists the inputs given to a model or a checker.
type Method struct {
	Inputs []dag.ID
}

// Formalization is a formal model of statute text (D28).
type Formalization struct {
	Language        string
	LanguageVersion string
	Source          dag.ID
	Anchors         []Anchor
	Terms           []string
}

// Anchor maps a rule of the source to a verified quote.
type Anchor struct {
	Rule  string `json:"rule"`
	Quote int    `json:"quote"`
}

// Mirror puts a statement made elsewhere on the record (D52).
type Mirror struct {
	Kind      string `json:"kind"`
	SourceURI string `json:"source_uri"`
	Archived  dag.ID `json:"archived"`
	SaidAt    string `json:"said_at"`
}

// The enumerations of §8.
var (
	SubjectTypes  = []string{"session", "branch", "change", "mr", "rule", "opinion", "rfc", "spec"}
	AuthorKinds   = []string{"member", "delegate", "advisor", "implementation", "group"}
	Stances       = []string{"support", "oppose", "amend", "question", "neutral"}
	FundingKinds  = []string{"ads", "sponsor", "subscribers", "grant", "employer", "platform", "none", "other"}
	AIAssistances = []string{"none", "assisted", "generated"}
	Directions    = []string{"yes", "no", "other"}
	SizeBands     = []string{"<1k", "1k-10k", "10k-100k", ">100k"}
	TargetTypes   = []string{"mr", "change", "opinion", "node", "ballot", "external"}
	Verdicts      = []string{"accurate", "misleading", "false", "unsupported", "inconsistent", "unverifiable"}
	Languages     = []string{"catala", "legalruleml", "logical-english", "owl", "other"}
	MirrorKinds   = []string{"statement", "denial"}
)

// NotServed are the optional members of §8 that belong to L2 parts this
// node does not serve (none now). A body that carries one (not null) is
// refused with schema, after the observer rule.
var NotServed []string

type wireOpinion struct {
	Subject            *Subject        `json:"subject"`
	AuthorKind         *string         `json:"author_kind"`
	OnBehalfOf         *string         `json:"on_behalf_of"`
	Disclosure         *wireDisclosure `json:"disclosure"`
	Stance             *string         `json:"stance"`
	Summary            *string         `json:"summary"`
	Body               *string         `json:"body"`
	Proposes           []string        `json:"proposes"`
	RepliesTo          *string         `json:"replies_to"`
	Evidence           []wireEvidence  `json:"evidence"`
	Quotes             []wireQuote     `json:"quotes"`
	Findings           []wireFinding   `json:"findings"`
	Corrects           *string         `json:"corrects"`
	Method             *wireMethod     `json:"method"`
	Formalization      *wireFormal     `json:"formalization"`
	Mirror             *wireMirror     `json:"mirror"`
	Attest             json.RawMessage `json:"attest"`
	Complaint          json.RawMessage `json:"complaint"`
	Estimate           json.RawMessage `json:"estimate"`
	Exchange           json.RawMessage `json:"exchange"`
	Feasibility        json.RawMessage `json:"feasibility"`
	Forecast           json.RawMessage `json:"forecast"`
	JurisdictionChoice json.RawMessage `json:"jurisdiction_choice"`
	Ranking            json.RawMessage `json:"ranking"`
	Resolution         json.RawMessage `json:"resolution"`
	RespondsTo         json.RawMessage `json:"responds_to"`
	Translation        json.RawMessage `json:"translation"`

	// Storage the fast path points the members above into, so that a
	// plain body costs a handful of allocations (fast.go).
	strs [7]string
	subj Subject
}

type wireDisclosure struct {
	Operator         *string         `json:"operator"`
	Tool             *string         `json:"tool"`
	Principal        *string         `json:"principal"`
	Funding          *[]Funding      `json:"funding"`
	Affiliations     *[]string       `json:"affiliations"`
	AIAssistance     *string         `json:"ai_assistance"`
	Stakes           *[]wireStake    `json:"stakes"`
	ForeignPrincipal json.RawMessage `json:"foreign_principal"` // "null" when null, nil when absent
}

type wireStake struct {
	Subject   string  `json:"subject"`
	Direction string  `json:"direction"`
	Venue     string  `json:"venue"`
	SizeBand  *string `json:"size_band"`
}

type wireEvidence struct {
	URI  string  `json:"uri"`
	Hash *string `json:"hash"`
}

type wireQuote struct {
	AsOf   *string `json:"as_of"`
	NID    *string `json:"nid"`
	Object *string `json:"object"`
	Text   *string `json:"text"`
}

type wireFinding struct {
	Target        *Target         `json:"target"`
	Claim         *wireClaim      `json:"claim"`
	Verdict       *string         `json:"verdict"`
	Rationale     *string         `json:"rationale"`
	Evidence      []wireEvidence  `json:"evidence"`
	Assertion     json.RawMessage `json:"assertion"`
	RelatedQuotes []int           `json:"related_quotes"`
}

type wireClaim struct {
	Quote *int    `json:"quote"`
	Text  *string `json:"text"`
}

type wireMethod struct {
	Inputs []string `json:"inputs"`
}

type wireFormal struct {
	Language        *string  `json:"language"`
	LanguageVersion *string  `json:"language_version"`
	Source          *string  `json:"source"`
	Anchors         []Anchor `json:"anchors"`
	Terms           []string `json:"terms"`
}

type wireMirror struct {
	Kind      string `json:"kind"`
	SourceURI string `json:"source_uri"`
	Archived  string `json:"archived"`
	SaidAt    string `json:"said_at"`
}

// Decode decodes an opinion.publish body. Every error is a
// *dag.ProtocolError: schema for a malformed body, assertion_unknown for
// an assertion of a kind outside the registry (D22).
func Decode(b []byte) (*Opinion, error) {
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return nil, schemaf("opinion.publish body: %v", err)
	}
	return DecodeCanonical(canon)
}

// DecodeCanonical is Decode for a body already in canonical form under
// witan's profile, as the Body of every decoded envelope is: it spares
// the canonicalisation, and reads the usual members without reflection
// (fast.go). Bytes that are not canonical may be refused.
func DecodeCanonical(b []byte) (*Opinion, error) {
	w, err := fastWire(b)
	if err != nil {
		return nil, schemaf("opinion.publish body: %v", err)
	}
	return fromWire(w)
}

// decodeReference is the plain decoder DecodeCanonical must agree with:
// every member name checked, then encoding/json with unknown fields
// refused.
func decodeReference(b []byte) (*Opinion, error) {
	var w wireOpinion
	if err := checkKeys(b); err != nil {
		return nil, schemaf("opinion.publish body: %v", err)
	}
	// A name the schema uses elsewhere is still refused where it does
	// not belong: DisallowUnknownFields.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, schemaf("opinion.publish body: %v", err)
	}
	return fromWire(&w)
}

func fromWire(w *wireOpinion) (*Opinion, error) {
	o := &Opinion{}
	var err error
	if w.Subject == nil || w.AuthorKind == nil || w.Stance == nil || w.Summary == nil || w.Body == nil {
		return nil, schemaf("subject, author_kind, stance, summary and body are required")
	}
	o.Subject = *w.Subject
	if !oneOf(o.Subject.Type, SubjectTypes) {
		return nil, schemaf("subject.type %q is not one of %v", dag.Trunc(o.Subject.Type), SubjectTypes)
	}
	if o.Subject.ID == "" || len(o.Subject.ID) > MaxText {
		return nil, schemaf("subject.id must be 1 to %d bytes", MaxText)
	}
	switch o.Subject.Type {
	case "change", "mr", "opinion":
		if _, err := dag.ParseID(o.Subject.ID); err != nil {
			return nil, schemaf("subject.id of a %s must be a sha256 id: %v", o.Subject.Type, err)
		}
	}
	o.AuthorKind = *w.AuthorKind
	if !oneOf(o.AuthorKind, AuthorKinds) {
		return nil, schemaf("author_kind %q is not one of %v", dag.Trunc(o.AuthorKind), AuthorKinds)
	}
	if w.OnBehalfOf != nil {
		id, ok := strings.CutPrefix(*w.OnBehalfOf, "group:")
		if !ok || id == "" || len(id) > MaxText || strings.ContainsAny(id, ":") {
			return nil, schemaf("on_behalf_of %q is not group:<id>", dag.Trunc(*w.OnBehalfOf))
		}
		o.OnBehalfOf = id
	}
	if (o.AuthorKind == "group") != (o.OnBehalfOf != "") {
		return nil, schemaf("on_behalf_of names a group exactly when author_kind is group")
	}
	o.Stance = *w.Stance
	if !oneOf(o.Stance, Stances) {
		return nil, schemaf("stance %q is not one of %v", dag.Trunc(o.Stance), Stances)
	}
	o.Summary, o.Body = *w.Summary, *w.Body
	if utf8.RuneCountInString(o.Summary) > MaxSummary {
		return nil, schemaf("summary is longer than %d characters", MaxSummary)
	}
	if len(o.Body) > MaxBody {
		return nil, schemaf("body is longer than %d bytes", MaxBody)
	}
	if w.Disclosure != nil {
		if o.Disclosure, err = decodeDisclosure(w.Disclosure); err != nil {
			return nil, err
		}
	}
	if o.Proposes, err = ids(w.Proposes, "proposes"); err != nil {
		return nil, err
	}
	if o.RepliesTo, err = optID(w.RepliesTo, "replies_to"); err != nil {
		return nil, err
	}
	if o.Corrects, err = optID(w.Corrects, "corrects"); err != nil {
		return nil, err
	}
	if o.Evidence, err = evidence(w.Evidence, "evidence"); err != nil {
		return nil, err
	}
	if len(w.Quotes) > MaxList {
		return nil, schemaf("more than %d quotes", MaxList)
	}
	for i, q := range w.Quotes {
		x, err := decodeQuote(q, i)
		if err != nil {
			return nil, err
		}
		o.Quotes = append(o.Quotes, x)
	}
	if len(w.Findings) > MaxList {
		return nil, schemaf("more than %d findings", MaxList)
	}
	for i := range w.Findings {
		f, err := decodeFinding(&w.Findings[i], i, len(o.Quotes))
		if err != nil {
			return nil, err
		}
		o.Findings = append(o.Findings, f)
	}
	if w.Method != nil {
		in, err := ids(w.Method.Inputs, "method.inputs")
		if err != nil {
			return nil, err
		}
		o.Method = &Method{Inputs: in}
	}
	if w.Formalization != nil {
		if o.Formalization, err = decodeFormal(w.Formalization); err != nil {
			return nil, err
		}
	}
	if w.Mirror != nil {
		if o.Mirror, err = decodeMirror(w.Mirror); err != nil {
			return nil, err
		}
	}
	if len(w.Complaint) > 0 && string(w.Complaint) != "null" {
		if o.Complaint, err = decodeComplaint(w.Complaint); err != nil {
			return nil, err
		}
	}
	if len(w.RespondsTo) > 0 && string(w.RespondsTo) != "null" {
		if o.RespondsTo, err = decodeRespondsTo(w.RespondsTo); err != nil {
			return nil, err
		}
	}
	for _, x := range []struct {
		name string
		raw  json.RawMessage
	}{{"attest", w.Attest}, {"estimate", w.Estimate}, {"exchange", w.Exchange},
		{"feasibility", w.Feasibility}, {"forecast", w.Forecast}, {"jurisdiction_choice", w.JurisdictionChoice},
		{"ranking", w.Ranking}, {"resolution", w.Resolution}, {"translation", w.Translation}} {
		if len(x.raw) > 0 && string(x.raw) != "null" {
			o.Restricted = append(o.Restricted, x.name)
		}
	}
	if err := decodeMarkets(w, o); err != nil { // markets.go
		return nil, err
	}
	if err := decodeParts(w, o); err != nil { // members.go
		return nil, err
	}
	return o, nil
}

func decodeDisclosure(w *wireDisclosure) (*Disclosure, error) {
	d := &Disclosure{}
	if w.Operator != nil {
		d.Operator = *w.Operator
	}
	if w.Tool != nil {
		d.Tool = *w.Tool
	}
	if len(d.Operator) > MaxText || len(d.Tool) > MaxText {
		return nil, schemaf("disclosure.operator and disclosure.tool are at most %d bytes", MaxText)
	}
	if w.Principal != nil {
		k, err := dag.ParseKey(*w.Principal)
		if err != nil {
			return nil, schemaf("disclosure.principal: %v", err)
		}
		d.Principal = k
	}
	if w.Funding != nil {
		d.HasFunding, d.Funding = true, *w.Funding
		if len(d.Funding) == 0 || len(d.Funding) > MaxList {
			return nil, schemaf("disclosure.funding lists 1 to %d sources ([{\"kind\":\"none\"}] if unfunded)", MaxList)
		}
		for _, f := range d.Funding {
			if !oneOf(f.Kind, FundingKinds) {
				return nil, schemaf("disclosure.funding kind %q is not one of %v", dag.Trunc(f.Kind), FundingKinds)
			}
			if len(f.Source) > MaxText {
				return nil, schemaf("disclosure.funding source is longer than %d bytes", MaxText)
			}
		}
	}
	if w.Affiliations != nil {
		d.HasAffiliations, d.Affiliations = true, *w.Affiliations
		if len(d.Affiliations) > MaxList {
			return nil, schemaf("more than %d affiliations", MaxList)
		}
		for _, a := range d.Affiliations {
			if a == "" || len(a) > MaxText {
				return nil, schemaf("an affiliation must be 1 to %d bytes", MaxText)
			}
		}
	}
	if w.AIAssistance != nil {
		d.AIAssistance = *w.AIAssistance
		if !oneOf(d.AIAssistance, AIAssistances) {
			return nil, schemaf("disclosure.ai_assistance %q is not one of %v", dag.Trunc(d.AIAssistance), AIAssistances)
		}
	}
	if w.Stakes != nil {
		d.HasStakes = true
		if len(*w.Stakes) > MaxList {
			return nil, schemaf("more than %d stakes", MaxList)
		}
		for _, s := range *w.Stakes {
			id, err := dag.ParseID(s.Subject)
			if err != nil {
				return nil, schemaf("stakes subject: %v", err)
			}
			if !oneOf(s.Direction, Directions) {
				return nil, schemaf("stakes direction %q is not one of %v", dag.Trunc(s.Direction), Directions)
			}
			if s.Venue == "" || len(s.Venue) > MaxText {
				return nil, schemaf("stakes venue is required, at most %d bytes", MaxText)
			}
			if s.SizeBand != nil && !oneOf(*s.SizeBand, SizeBands) {
				return nil, schemaf("stakes size_band %q is not one of %v or null", dag.Trunc(*s.SizeBand), SizeBands)
			}
			d.Stakes = append(d.Stakes, Stake{Subject: id, Direction: s.Direction, Venue: s.Venue, SizeBand: s.SizeBand})
		}
	}
	if w.ForeignPrincipal != nil {
		d.HasForeign = true
		if raw := w.ForeignPrincipal; string(raw) != "null" {
			var fp ForeignPrincipal
			if err := strict(raw, &fp, "disclosure.foreign_principal"); err != nil {
				return nil, err
			}
			if fp.Country == "" || fp.Relationship == "" || len(fp.Country) > MaxText || len(fp.Relationship) > MaxRationale {
				return nil, schemaf("disclosure.foreign_principal needs country and relationship")
			}
			d.ForeignPrincipal = &fp
		}
	}
	return d, nil
}

func decodeQuote(q wireQuote, i int) (Quote, error) {
	var x Quote
	if q.Text == nil || *q.Text == "" || len(*q.Text) > MaxQuoteText {
		return x, schemaf("quotes[%d].text must be 1 to %d bytes", i, MaxQuoteText)
	}
	x.Text = *q.Text
	switch {
	case q.Object != nil && q.AsOf == nil && q.NID == nil:
		id, err := dag.ParseID(*q.Object)
		if err != nil {
			return x, schemaf("quotes[%d].object: %v", i, err)
		}
		x.Object = id
	case q.Object == nil && q.AsOf != nil && q.NID != nil:
		id, err := dag.ParseID(*q.AsOf)
		if err != nil {
			return x, schemaf("quotes[%d].as_of: %v", i, err)
		}
		if *q.NID == "" || len(*q.NID) > MaxText {
			return x, schemaf("quotes[%d].nid must be 1 to %d bytes", i, MaxText)
		}
		x.AsOf, x.NID = id, *q.NID
	default:
		return x, schemaf("quotes[%d] is either {as_of, nid, text} or {object, text}", i)
	}
	return x, nil
}

func decodeFinding(w *wireFinding, i, quotes int) (Finding, error) {
	f := Finding{ClaimQuote: -1}
	if w.Target == nil || w.Claim == nil || w.Verdict == nil || w.Rationale == nil {
		return f, schemaf("findings[%d]: target, claim, verdict and rationale are required", i)
	}
	f.Target = *w.Target
	if !oneOf(f.Target.Type, TargetTypes) {
		return f, schemaf("findings[%d].target.type %q is not one of %v", i, dag.Trunc(f.Target.Type), TargetTypes)
	}
	if f.Target.Type == "external" {
		if f.Target.ID == "" || len(f.Target.ID) > 2048 {
			return f, schemaf("findings[%d].target.id of an external claim is its URI", i)
		}
	} else if _, err := dag.ParseID(f.Target.ID); err != nil && f.Target.Type != "node" {
		return f, schemaf("findings[%d].target.id: %v", i, err)
	} else if f.Target.Type == "node" && (f.Target.ID == "" || len(f.Target.ID) > MaxText) {
		return f, schemaf("findings[%d].target.id must be 1 to %d bytes", i, MaxText)
	}
	f.Verdict = *w.Verdict
	if !oneOf(f.Verdict, Verdicts) {
		return f, schemaf("findings[%d].verdict %q is not one of %v", i, dag.Trunc(f.Verdict), Verdicts)
	}
	f.Rationale = *w.Rationale
	if utf8.RuneCountInString(f.Rationale) > MaxRationale {
		return f, schemaf("findings[%d].rationale is longer than %d characters", i, MaxRationale)
	}
	var err error
	if f.Evidence, err = evidence(w.Evidence, fmt.Sprintf("findings[%d].evidence", i)); err != nil {
		return f, err
	}
	if w.Claim.Quote != nil {
		if *w.Claim.Quote < 0 || *w.Claim.Quote >= quotes {
			return f, schemaf("findings[%d].claim.quote %d is not an index into quotes", i, *w.Claim.Quote)
		}
		f.ClaimQuote = *w.Claim.Quote
	}
	f.ClaimText = w.Claim.Text
	if f.ClaimText != nil && len(*f.ClaimText) > MaxQuoteText {
		return f, schemaf("findings[%d].claim.text is longer than %d bytes", i, MaxQuoteText)
	}
	if f.ClaimQuote < 0 && f.ClaimText == nil {
		return f, schemaf("findings[%d].claim names a quote or a text", i)
	}
	if f.Target.Type == "external" {
		// A claim made outside the protocol: its words, and evidence
		// hashing the source (D20).
		hashed := false
		for _, e := range f.Evidence {
			hashed = hashed || e.Hash.Valid()
		}
		if f.ClaimText == nil || !hashed {
			return f, schemaf("findings[%d]: an external claim needs claim.text and evidence with a hash", i)
		}
	}
	if len(w.RelatedQuotes) > MaxList {
		return f, schemaf("findings[%d]: more than %d related_quotes", i, MaxList)
	}
	for _, q := range w.RelatedQuotes {
		if q < 0 || q >= quotes {
			return f, schemaf("findings[%d].related_quotes: %d is not an index into quotes", i, q)
		}
	}
	f.RelatedQuotes = w.RelatedQuotes
	if f.Verdict == "inconsistent" {
		seen := map[int]bool{}
		if f.ClaimQuote >= 0 {
			seen[f.ClaimQuote] = true
		}
		for _, q := range f.RelatedQuotes {
			seen[q] = true
		}
		if len(seen) < 2 {
			return f, schemaf("findings[%d]: inconsistent needs at least two verified quotes (claim.quote plus related_quotes)", i)
		}
	}
	if len(w.Assertion) > 0 && string(w.Assertion) != "null" {
		a, err := DecodeAssertion(w.Assertion)
		if err != nil {
			return f, err
		}
		f.Assertion = a
	}
	return f, nil
}

func decodeFormal(w *wireFormal) (*Formalization, error) {
	if w.Language == nil || w.Source == nil {
		return nil, schemaf("formalization: language and source are required")
	}
	f := &Formalization{Language: *w.Language, Anchors: w.Anchors, Terms: w.Terms}
	if !oneOf(f.Language, Languages) {
		return nil, schemaf("formalization.language %q is not one of %v", dag.Trunc(f.Language), Languages)
	}
	if w.LanguageVersion != nil {
		f.LanguageVersion = *w.LanguageVersion
	}
	id, err := dag.ParseID(*w.Source)
	if err != nil {
		return nil, schemaf("formalization.source: %v", err)
	}
	f.Source = id
	if len(f.Anchors) == 0 || len(f.Anchors) > MaxList || len(f.Terms) > MaxList {
		return nil, schemaf("formalization: 1 to %d anchors, at most %d terms", MaxList, MaxList)
	}
	for _, a := range f.Anchors {
		if a.Rule == "" || len(a.Rule) > MaxText {
			return nil, schemaf("formalization anchor rule must be 1 to %d bytes", MaxText)
		}
	}
	for _, t := range f.Terms {
		rest, ok := strings.CutPrefix(t, "term:")
		if !ok || !strings.Contains(rest, "#") || len(t) > MaxText {
			return nil, schemaf("formalization term %q is not term:<scope nid>#<term>", dag.Trunc(t))
		}
	}
	if f.Terms == nil {
		f.Terms = []string{}
	}
	return f, nil
}

func decodeMirror(w *wireMirror) (*Mirror, error) {
	if !oneOf(w.Kind, MirrorKinds) {
		return nil, schemaf("mirror.kind %q is not one of %v", dag.Trunc(w.Kind), MirrorKinds)
	}
	if w.SourceURI == "" || len(w.SourceURI) > 2048 {
		return nil, schemaf("mirror.source_uri is required")
	}
	id, err := dag.ParseID(w.Archived)
	if err != nil {
		return nil, schemaf("mirror.archived: %v", err)
	}
	if !isDate(w.SaidAt) {
		return nil, schemaf("mirror.said_at %q is not YYYY-MM-DD", dag.Trunc(w.SaidAt))
	}
	return &Mirror{Kind: w.Kind, SourceURI: w.SourceURI, Archived: id, SaidAt: w.SaidAt}, nil
}

func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	m, d := (s[5]-'0')*10+s[6]-'0', (s[8]-'0')*10+s[9]-'0'
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}

func ids(in []string, what string) ([]dag.ID, error) {
	if len(in) > MaxList {
		return nil, schemaf("%s lists more than %d ids", what, MaxList)
	}
	var out []dag.ID
	for _, s := range in {
		id, err := dag.ParseID(s)
		if err != nil {
			return nil, schemaf("%s: %v", what, err)
		}
		out = append(out, id)
	}
	return out, nil
}

func optID(p *string, what string) (dag.ID, error) {
	if p == nil {
		return dag.ID{}, nil
	}
	id, err := dag.ParseID(*p)
	if err != nil {
		return dag.ID{}, schemaf("%s: %v", what, err)
	}
	return id, nil
}

func evidence(in []wireEvidence, what string) ([]Evidence, error) {
	if len(in) > MaxList {
		return nil, schemaf("%s lists more than %d sources", what, MaxList)
	}
	var out []Evidence
	for _, e := range in {
		if e.URI == "" || len(e.URI) > 2048 {
			return nil, schemaf("%s: uri is required, at most 2048 bytes", what)
		}
		x := Evidence{URI: e.URI}
		if e.Hash != nil {
			id, err := dag.ParseID(*e.Hash)
			if err != nil {
				return nil, schemaf("%s hash: %v", what, err)
			}
			x.Hash = id
		}
		out = append(out, x)
	}
	return out, nil
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

func strict(b []byte, v any, what string) error {
	if err := dag.DecodeStrict(b, v); err != nil {
		return schemaf("%s: %s", what, dag.ErrorDetail(err))
	}
	return nil
}
