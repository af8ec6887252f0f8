package opinion

// This file decodes jurisdiction choices (30k §10 research mode, D73): a
// key a research session names for one of its declared jurisdictions
// records that the jurisdiction opts in to (or out of) a program from a
// date on, and /law?jurisdiction= applies [[opt_in:<program>]] nodes
// accordingly. Which key speaks for which jurisdiction is the session's
// (the caller checks it); everything is labeled hypothetical.

import (
	"encoding/json"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Choices are the values of jurisdiction_choice.choice.
var Choices = []string{"opt_in", "opt_out"}

// JurisdictionChoice is a decoded jurisdiction_choice member.
type JurisdictionChoice struct {
	Program   string `json:"program"`
	Choice    string `json:"choice"`
	Effective string `json:"effective"` // YYYY-MM-DD
}

func decodeJurisdictionChoice(raw json.RawMessage) (*JurisdictionChoice, error) {
	var c JurisdictionChoice
	if err := strict(raw, &c, "jurisdiction_choice"); err != nil {
		return nil, err
	}
	// A program id as an [[opt_in:<program id>]] marker can hold it: not
	// empty, no "]" that would end the marker, no surrounding space.
	if c.Program == "" || len(c.Program) > MaxText || strings.ContainsAny(c.Program, "[]") || strings.TrimSpace(c.Program) != c.Program {
		return nil, schemaf("jurisdiction_choice.program %q is not a program id", dag.Trunc(c.Program))
	}
	if !oneOf(c.Choice, Choices) {
		return nil, schemaf("jurisdiction_choice.choice %q is not one of %v", dag.Trunc(c.Choice), Choices)
	}
	if !isCalendarDate(c.Effective) {
		return nil, schemaf("jurisdiction_choice.effective %q is not YYYY-MM-DD", dag.Trunc(c.Effective))
	}
	return &c, nil
}

// isCalendarDate reports whether s is YYYY-MM-DD naming a real calendar
// date (proleptic Gregorian, year 0001 to 9999).
func isCalendarDate(s string) bool {
	if !isDate(s) {
		return false
	}
	num := func(a, b int) int {
		n := 0
		for _, c := range []byte(s[a:b]) {
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, d := num(0, 4), num(5, 7), num(8, 10)
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return y >= 1 && d <= days
}
