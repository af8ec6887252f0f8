package opinion_test

import (
	"testing"

	"github.com/witan-dev/witan/replica/opinion"
)

// TestFeasibilityVectors runs the hand-derived feasibility vectors (D70),
// decoded inside a member's opinion body.
func TestFeasibilityVectors(t *testing.T) {
	runPartVectors(t, "testdata/vectors/feasibility.json", "feasibility", 12, func(o *opinion.Opinion) (bool, any) {
		return o.Feasibility != nil && o.Feasibility.Earliest == "2027-06-01", o.Feasibility
	})
}
