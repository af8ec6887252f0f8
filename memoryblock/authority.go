package memoryblock

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Level is an actor's authority level. Levels are whole numbers from 0 up;
// a negative level is below every band and satisfies no cost.
type Level int

// Band names a range of levels.
type Band string

// The four bands. Their floors are 0, 50, 70 and 90; system_admin has no
// ceiling.
const (
	Ordinary    Band = "ordinary"     // 0–49
	Captain     Band = "captain"      // 50–69
	OrgAdmin    Band = "org_admin"    // 70–89
	SystemAdmin Band = "system_admin" // 90 and above
)

var bands = []struct {
	band  Band
	floor Level
}{{Ordinary, 0}, {Captain, 50}, {OrgAdmin, 70}, {SystemAdmin, 90}}

// Bands returns the four bands from lowest to highest.
func Bands() []Band {
	out := make([]Band, len(bands))
	for i, b := range bands {
		out[i] = b.band
	}
	return out
}

// Band returns the band l falls in, or "" for a negative level.
func (l Level) Band() Band {
	var in Band
	for _, b := range bands {
		if l >= b.floor {
			in = b.band
		}
	}
	return in
}

// Floor returns the lowest level in band b, and false for an unknown band.
func (b Band) Floor() (Level, bool) {
	for _, x := range bands {
		if x.band == b {
			return x.floor, true
		}
	}
	return 0, false
}

// Ceiling returns the highest level in band b. It is false for
// system_admin, which has none, and for an unknown band.
func (b Band) Ceiling() (Level, bool) {
	for i, x := range bands {
		if x.band == b && i+1 < len(bands) {
			return bands[i+1].floor - 1, true
		}
	}
	return 0, false
}

func (l Level) describe() string {
	b := string(l.Band())
	if b == "" {
		b = "no band"
	}
	return strconv.Itoa(int(l)) + " (" + b + ")"
}

// The per-field costs (FIELD_LEVELS). evidence costs the floor of the
// captain band, which is why the number is what it is.
var costs = []struct {
	field Field
	level Level
}{{Subject, 0}, {Body, 0}, {Evidence, 50}}

// confidenceReason is NEVER_ACCEPTED's reason. It says "invariant" on
// purpose: a reader who took it for a threshold would try to raise it.
const confidenceReason = "a receiver does not adopt the sender's certainty (invariant, not a default)"

// undeclaredReason is the reason AcceptField gives for each inherited field.
var undeclaredReason = map[Field]string{
	Origin:     undeclared(Origin),
	ObservedAt: undeclared(ObservedAt),
	Lineage:    undeclared(Lineage),
}

func undeclared(f Field) string {
	return string(f) + " is inherited: a receiver does not choose it, so no level applies and it is always kept (not a refusal)"
}

// Cost returns the level a receiver needs to keep field f, and false when
// no level applies: f is confidence (refused at every level), inherited
// (never chosen, always kept), or not a field.
func Cost(f Field) (Level, bool) {
	for _, c := range costs {
		if c.field == f {
			return c.level, true
		}
	}
	return 0, false
}

// Requirement is the level a rule requires: a Level, or none at all (JSON
// null) when no level can satisfy or no rule applies. The zero Requirement
// is none.
type Requirement struct {
	level Level
	set   bool
}

// Requires returns the Requirement of level l.
func Requires(l Level) Requirement { return Requirement{level: l, set: true} }

// Level returns the required level, and false when there is none.
func (r Requirement) Level() (Level, bool) { return r.level, r.set }

// String returns the level, or "null".
func (r Requirement) String() string {
	if !r.set {
		return "null"
	}
	return strconv.Itoa(int(r.level))
}

// MarshalJSON writes the level as a number, or null.
func (r Requirement) MarshalJSON() ([]byte, error) { return []byte(r.String()), nil }

// Decision is AcceptField's answer for one field at one level.
type Decision struct {
	Field Field
	// Allowed is true when a rule admits the field at this level. It is
	// false for inherited fields, which have no rule (see Keeps).
	Allowed bool
	// Code is empty when Allowed, else FIELD_BELOW_AUTHORITY,
	// FIELD_ALWAYS_REFUSED, FIELD_UNDECLARED or FIELD_NOT_A_FIELD.
	Code Code
	// Required is the level the rule asks for; none for confidence, for
	// inherited fields and for names that are not fields.
	Required Requirement
	// Reason says why, for people.
	Reason string
}

// Keeps reports whether a receiver keeps the field: a rule allows it, or it
// is inherited. FIELD_UNDECLARED is not a refusal; reading it as one would
// drop the ancestry that makes a block meaningful.
func (d Decision) Keeps() bool {
	return d.Allowed || d.Code == CodeFieldUndeclared && d.Field.Inherited()
}

// AcceptField decides whether an actor at level may keep field f of a block
// it receives (acceptField). The rules, per field:
//
//   - subject and body cost 0, evidence costs 50: allowed at or above the
//     cost, else FIELD_BELOW_AUTHORITY with the cost in Required;
//   - confidence: FIELD_ALWAYS_REFUSED at every level, Required none;
//   - origin, observed_at, lineage: FIELD_UNDECLARED, Required none. They
//     have no rule because no receiver chooses them; they are always kept;
//   - any other name: FIELD_NOT_A_FIELD.
func AcceptField(f Field, level Level) Decision {
	d := Decision{Field: f}
	switch {
	case !f.Valid():
		d.Code = CodeFieldNotAField
		d.Reason = fmt.Sprintf("%s is not one of the seven CAT7 fields", quote(string(f)))
	case f.Inherited():
		d.Code = CodeFieldUndeclared
		d.Reason = undeclaredReason[f]
	case f == Confidence:
		d.Code = CodeFieldAlwaysRefused
		d.Reason = confidenceReason
	default:
		cost, _ := Cost(f)
		d.Required = Requires(cost)
		costs := string(f) + " costs " + strconv.Itoa(int(cost)) + "; level " + level.describe()
		if level >= cost {
			d.Allowed = true
			d.Reason = costs + " covers it"
		} else {
			d.Code = CodeFieldBelowAuthority
			d.Reason = costs + " is below it"
		}
	}
	return d
}

// Refusal is one refused entry of a partition.
type Refusal struct {
	// Field is the refused field. It is empty when the block is refused as
	// a whole for a reason no one field carries (BLOCK_HASH_MISMATCH).
	Field    Field
	Code     Code
	Required Requirement
	Reason   string
	// Missing lists the ancestors the receiver cannot produce, for
	// BLOCK_MISSING_PARENT.
	Missing []dag.ID
}

// Why returns "CODE: reason", the form the spec writes refusals in.
func (r Refusal) Why() string { return string(r.Code) + ": " + r.Reason }

// MarshalJSON writes {"field","code","required","why"} and, when there are
// missing ancestors, "missing". An empty Field is written as null.
func (r Refusal) MarshalJSON() ([]byte, error) {
	w := struct {
		Field    *Field      `json:"field"`
		Code     Code        `json:"code"`
		Required Requirement `json:"required"`
		Why      string      `json:"why"`
		Missing  []dag.ID    `json:"missing,omitempty"`
	}{Code: r.Code, Required: r.Required, Why: r.Why(), Missing: r.Missing}
	if r.Field != "" {
		w.Field = &r.Field
	}
	return marshalCanonical(w)
}

// View is the accepted half of a partition: the fields a receiver keeps,
// each with the value (and presence) the block gave it. A field that was
// not accepted is absent from the View; nothing in a View, or anywhere in a
// partition, holds a refused field's value, so it cannot be reconstructed.
type View struct {
	has    [numFields]bool
	values [numFields]Value
	order  []Field // accepted fields, in the order they were accepted
}

// Has reports whether field f was accepted: the key is in the View. A
// field can be accepted and still omitted (or null, or empty) in the block;
// Get tells those apart.
func (v View) Has(f Field) bool {
	i := f.index()
	return i >= 0 && v.has[i]
}

// Get returns the value of an accepted field, and false when f was not
// accepted (or is not a field).
func (v View) Get(f Field) (Value, bool) {
	i := f.index()
	if i < 0 || !v.has[i] {
		return Value{}, false
	}
	return v.values[i], true
}

// Fields returns the accepted fields: the inherited fields first, then the
// receiver-choosable fields that were allowed, each group in spec order.
func (v View) Fields() []Field { return append([]Field(nil), v.order...) }

// Lineage returns the accepted lineage's parents. Lineage is inherited, so
// every View holds it.
func (v View) Lineage() []dag.ID {
	val, ok := v.Get(Lineage)
	if !ok {
		return nil
	}
	p, err := parentsOfValue(val)
	if err != nil {
		return nil // unreachable: a View's lineage came from a Parents
	}
	return p.IDs()
}

func parentsOfValue(v Value) (Parents, error) {
	switch v.presence {
	case Omitted:
		return Parents{}, nil
	case Null:
		return NullParents(), nil
	}
	return parseParents([]byte(v.json))
}

// MarshalJSON writes the View as a JSON object with one key per accepted
// field whose value is not omitted, in canonical form.
func (v View) MarshalJSON() ([]byte, error) {
	m := make(map[string]json.RawMessage, numFields)
	for i, f := range fields {
		if v.has[i] && v.values[i].presence != Omitted {
			m[string(f)] = json.RawMessage(v.values[i].json)
		}
	}
	return marshalCanonical(m)
}

// Partition is AcceptWithAuthority's answer: every one of the seven fields
// is either in Accepted or in Refused, never both.
type Partition struct {
	Accepted View
	Refused  []Refusal // in spec order (subject, body, evidence, confidence)
}

// AcceptWithAuthority partitions b's fields for an actor at level
// (acceptWithAuthority): the inherited fields are always accepted, each
// receiver-choosable field by AcceptField. It looks at neither the hash nor
// the lineage's ancestors; AcceptBlock does.
func AcceptWithAuthority(b Block, level Level) Partition {
	vals := b.values()
	var p Partition
	p.Accepted.order = make([]Field, 0, numFields)
	for _, group := range [][]Field{inherited, choosable} {
		for _, f := range group {
			d := AcceptField(f, level)
			i := f.index()
			if d.Keeps() {
				p.Accepted.has[i] = true
				p.Accepted.values[i] = vals[i]
				p.Accepted.order = append(p.Accepted.order, f)
				continue
			}
			p.Refused = append(p.Refused, Refusal{Field: f, Code: d.Code, Required: d.Required, Reason: d.Reason})
		}
	}
	return p
}

// Known is the set of blocks a receiver can produce.
type Known interface {
	// Has reports whether the receiver can produce the block named id.
	Has(id dag.ID) bool
}

var (
	_ Known  = Set(nil)
	_ Known  = Map(nil)
	_ Known  = KnownFunc(nil)
	_ Source = Map(nil)
	_ Source = SourceFunc(nil)
	_ Source = overlay{}
)

// KnownFunc is a function used as a Known. A caller whose blocks live in a
// store builds one per call, closing over that call's context, so the
// context is never kept in a struct and this package stays free of I/O.
type KnownFunc func(id dag.ID) bool

// Has implements Known.
func (f KnownFunc) Has(id dag.ID) bool { return f(id) }

// Set is a Known holding exactly its keys.
type Set map[dag.ID]struct{}

// Has implements Known.
func (s Set) Has(id dag.ID) bool { _, ok := s[id]; return ok }

// SetOf returns the Set of ids.
func SetOf(ids ...dag.ID) Set {
	s := make(Set, len(ids))
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

// Result is AcceptBlock's answer.
type Result struct {
	// Verified is true when the block's claimed hash is the hash of its
	// fields. A block refused for a missing parent is still verified: the
	// block is well formed, its ancestry is what is absent.
	Verified bool
	// Accepted is the kept half of the partition, or nil when the block is
	// refused as a whole (hash mismatch, missing parent).
	Accepted *View
	// Refused holds the refused fields with their reasons, or the one
	// refusal that refused the whole block.
	Refused []Refusal
}

// Err returns nil when the block was accepted (in part), and otherwise the
// refusal of the whole block as an *Error: BLOCK_HASH_MISMATCH, or
// BLOCK_MISSING_PARENT (whose missing ids are in Refused[0].Missing, for a
// caller that goes looking for them).
func (r Result) Err() error {
	if r.Accepted != nil || len(r.Refused) == 0 {
		return nil
	}
	ref := r.Refused[0]
	return &Error{Code: ref.Code, Field: ref.Field, Detail: ref.Reason}
}

// AcceptedFields returns Accepted.Fields(), or an empty list when the block
// was refused as a whole.
func (r Result) AcceptedFields() []Field {
	if r.Accepted == nil {
		return []Field{}
	}
	return r.Accepted.Fields()
}

// MarshalJSON writes {"accepted","accepted_fields","refused","verified"};
// accepted is null when the block was refused as a whole.
func (r Result) MarshalJSON() ([]byte, error) {
	refused := r.Refused
	if refused == nil {
		refused = []Refusal{}
	}
	return marshalCanonical(struct {
		Accepted       *View     `json:"accepted"`
		AcceptedFields []Field   `json:"accepted_fields"`
		Refused        []Refusal `json:"refused"`
		Verified       bool      `json:"verified"`
	}{r.Accepted, r.AcceptedFields(), refused, r.Verified})
}

// AcceptBlock decides what a receiver at level keeps of block b
// (acceptBlock). have is what the receiver can produce; nil holds nothing.
//
//  1. If b does not verify, nothing is accepted: Verified false, one
//     BLOCK_HASH_MISMATCH refusal naming no field.
//  2. If b's lineage names a parent have cannot produce, nothing is
//     accepted: Verified true, one refusal of lineage with
//     BLOCK_MISSING_PARENT listing every missing parent. The block is
//     refused rather than re-rooted: keeping it with its lineage emptied
//     would turn a claim with an unverifiable history into one with no
//     history, which reads as a fresh, independent assertion.
//  3. Otherwise the answer is AcceptWithAuthority's partition.
//
// The answer is a partition, never a filtered copy of b: the refused half
// is kept as evidence of what this receiver declined.
func AcceptBlock(b Block, level Level, have Known) Result {
	if err := VerifyBlock(b); err != nil {
		e := err.(*Error)
		return Result{Refused: []Refusal{{Code: e.Code, Reason: e.Detail}}}
	}
	var missing []dag.ID
	for i := 0; i < b.Lineage.Len(); i++ {
		if id := b.Lineage.At(i); have == nil || !have.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, id := range missing {
			names[i] = id.String()
		}
		return Result{Verified: true, Refused: []Refusal{{
			Field:   Lineage,
			Code:    CodeBlockMissingParent,
			Reason:  "cannot produce ancestor(s) " + strings.Join(names, ", ") + "; refusing rather than re-rooting",
			Missing: missing,
		}}}
	}
	p := AcceptWithAuthority(b, level)
	return Result{Verified: true, Accepted: &p.Accepted, Refused: p.Refused}
}

// marshalCanonical is json.Marshal followed by RFC 8785, so that every JSON
// this package writes is canonical (encoding/json escapes <, > and &).
func marshalCanonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return dag.CanonicalizeRFC8785(raw)
}
