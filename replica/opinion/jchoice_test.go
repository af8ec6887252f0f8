package opinion_test

import (
	"testing"

	"github.com/witan-dev/witan/replica/opinion"
)

// TestJurisdictionChoiceVectors runs the hand-derived jurisdiction_choice
// vectors (D73), decoded inside a member's opinion body.
func TestJurisdictionChoiceVectors(t *testing.T) {
	runPartVectors(t, "testdata/vectors/jurisdiction_choices.json", "jurisdiction_choice", 10, func(o *opinion.Opinion) (bool, any) {
		return o.JurisdictionChoice != nil && o.JurisdictionChoice.Program == "medicaid-x", o.JurisdictionChoice
	})
}
