package memoryblock

// Field names one of the seven CAT7 fields. A Field is compared by its exact
// spelling: names are case-sensitive and there are no aliases.
type Field string

// The seven CAT7 fields, in the order that is part of the block hash.
const (
	Origin     Field = "origin"
	Subject    Field = "subject"
	Body       Field = "body"
	Evidence   Field = "evidence"
	Confidence Field = "confidence"
	ObservedAt Field = "observed_at"
	Lineage    Field = "lineage"
)

// fields is CAT7_FIELDS. index(f) is f's position in it.
var fields = [numFields]Field{Origin, Subject, Body, Evidence, Confidence, ObservedAt, Lineage}

const numFields = 7

// inherited and choosable partition fields (a test checks it). The order
// within each list is the order the spec lists them in.
var (
	inherited = []Field{Origin, ObservedAt, Lineage}
	choosable = []Field{Subject, Body, Evidence, Confidence}
)

// Fields returns the seven CAT7 fields in hash order: origin, subject, body,
// evidence, confidence, observed_at, lineage.
func Fields() []Field { return append([]Field(nil), fields[:]...) }

// InheritedFields returns the fields a receiver never chooses: where a block
// came from and when it was seen (origin, observed_at, lineage). They are
// kept by every receiver at every level.
func InheritedFields() []Field { return append([]Field(nil), inherited...) }

// ReceiverChoosableFields returns the fields a receiver decides whether to
// keep (subject, body, evidence, confidence), each by its own rule.
func ReceiverChoosableFields() []Field { return append([]Field(nil), choosable...) }

// ParseField returns the Field spelled name, or an *Error with code
// FIELD_NOT_A_FIELD when name is not one of the seven.
func ParseField(name string) (Field, error) {
	f := Field(name)
	if !f.Valid() {
		return "", errorf(CodeFieldNotAField, f, "%s is not one of the seven CAT7 fields", quote(name))
	}
	return f, nil
}

// Valid reports whether f is one of the seven fields.
func (f Field) Valid() bool { return f.index() >= 0 }

// Inherited reports whether f is one of InheritedFields.
func (f Field) Inherited() bool {
	switch f {
	case Origin, ObservedAt, Lineage:
		return true
	}
	return false
}

// ReceiverChoosable reports whether f is one of ReceiverChoosableFields.
func (f Field) ReceiverChoosable() bool { return f.Valid() && !f.Inherited() }

// String returns the field's name.
func (f Field) String() string { return string(f) }

func (f Field) index() int {
	for i, g := range fields {
		if g == f {
			return i
		}
	}
	return -1
}
