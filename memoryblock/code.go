package memoryblock

import (
	"errors"
	"fmt"
)

// Code is a memory-block error code as it crosses the wire: in refusals,
// quarantine records and problem reports. Inside the program errors are
// values; an *Error is the bridge between the two.
type Code string

// The codes of the memory-sync spec, plus CodeBlockMalformed (see
// docs/deviations.md).
const (
	// CodeBlockHashMismatch: the hash a block carries is not the hash of its
	// seven fields (or it carries none).
	CodeBlockHashMismatch Code = "BLOCK_HASH_MISMATCH"
	// CodeBlockUnknownField: a block on the wire has a key that is not one of
	// the seven fields (or "hash").
	CodeBlockUnknownField Code = "BLOCK_UNKNOWN_FIELD"
	// CodeFieldNotAField: a name asked about is not one of the seven fields.
	CodeFieldNotAField Code = "FIELD_NOT_A_FIELD"
	// CodeFieldAlwaysRefused: the field is refused at every level; no
	// authority satisfies it (confidence).
	CodeFieldAlwaysRefused Code = "FIELD_ALWAYS_REFUSED"
	// CodeFieldBelowAuthority: the field costs more than the level offered.
	CodeFieldBelowAuthority Code = "FIELD_BELOW_AUTHORITY"
	// CodeFieldUndeclared: the field has no acceptance rule because a
	// receiver does not choose it. It is not a refusal: inherited fields are
	// always kept.
	CodeFieldUndeclared Code = "FIELD_UNDECLARED"
	// CodeBlockMissingParent: the block's lineage names an ancestor the
	// receiver cannot produce; the block is refused, never re-rooted.
	CodeBlockMissingParent Code = "BLOCK_MISSING_PARENT"
	// CodeBlockCycle: a walk over a store came back to a block it was still
	// walking from. Honest stores cannot hold one (it would need a hash
	// preimage); a store whose keys disagree with its blocks can.
	CodeBlockCycle Code = "BLOCK_CYCLE"
	// CodeBlockMalformed: bytes that are not a block at all: not canonical
	// JSON under witan's profile, too large, or a field of the wrong shape.
	CodeBlockMalformed Code = "BLOCK_MALFORMED"
)

// codeTable lists every code with what it means, in the order above.
var codeTable = []struct {
	code Code
	text string
}{
	{CodeBlockHashMismatch, "block hash does not match its seven fields"},
	{CodeBlockUnknownField, "block has a key that is not a CAT7 field"},
	{CodeFieldNotAField, "name is not a CAT7 field"},
	{CodeFieldAlwaysRefused, "field is refused at every authority level"},
	{CodeFieldBelowAuthority, "authority level is below the field's cost"},
	{CodeFieldUndeclared, "field has no acceptance rule: it is inherited, not chosen"},
	{CodeBlockMissingParent, "lineage names an ancestor the receiver cannot produce"},
	{CodeBlockCycle, "walk over the store closed a cycle"},
	{CodeBlockMalformed, "bytes are not a well-formed block"},
}

// Codes returns every code this package produces.
func Codes() []Code {
	out := make([]Code, len(codeTable))
	for i, e := range codeTable {
		out[i] = e.code
	}
	return out
}

// Known reports whether c is one of Codes.
func (c Code) Known() bool { return c.Text() != "" }

// Text describes the code in a few words, or "" for an unknown code.
func (c Code) Text() string {
	for _, e := range codeTable {
		if e.code == c {
			return e.text
		}
	}
	return ""
}

// String returns the code as written on the wire; a code that is not one of
// Codes is shown as unknown so that it stands out.
func (c Code) String() string {
	if c.Known() {
		return string(c)
	}
	return fmt.Sprintf("unknown_code(%q)", string(c))
}

// Error is an error that carries a Code. Detail is for people; programs
// look at Code (with errors.As or CodeOf), never at the text.
type Error struct {
	Code   Code
	Field  Field  // the field or key concerned, when there is one
	Detail string // human explanation
	Err    error  // optional cause
}

func (e *Error) Error() string {
	s := "memoryblock: " + string(e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of the first *Error in err's chain, or "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func errorf(c Code, f Field, format string, args ...any) *Error {
	return &Error{Code: c, Field: f, Detail: fmt.Sprintf(format, args...)}
}

// quote renders untrusted text for a detail string, bounded in length.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		// cut on a rune boundary
		i := max
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		return fmt.Sprintf("%q…", s[:i])
	}
	return fmt.Sprintf("%q", s)
}
