package opinion

// This file decodes and judges cost estimates (30k §8: D53, D69, D75). An
// estimate is an opinion member; any keyholder may publish one, nodes
// show every estimate on an MR side by side and none is official. What
// an estimate must contain depends on its MR (the effective year, the
// sunsets its fact sheet lists) and on the session (the declared regions
// and densities, D72): the caller gives those as an EstimateContext read
// from the opinion's causal past, so every replica judges alike.

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// Limits of an estimate's free text, in characters (§8).
const (
	MaxBaseline    = 500
	MaxAssumptions = 2000
	MaxReason      = 500
	// EstimateYears is how many years by_year must cover from the
	// effective year (D69).
	EstimateYears = 10
	// maxDigits bounds an amount's decimal digits (witan's limit).
	maxDigits = 30
)

// Bearers are the values of local_costs[].bearer (D75).
var Bearers = []string{"state", "county", "city", "other"}

// YearAmount is one year of a series: outlays in whole dollars as a
// decimal integer string (negative for savings), with an optional range.
type YearAmount struct {
	Year      int     `json:"year"`
	Outlays   string  `json:"outlays"`
	RangeLow  *string `json:"range_low,omitempty"`
	RangeHigh *string `json:"range_high,omitempty"`
}

// RegionSeries is one entry of distribution.by_region.
type RegionSeries struct {
	Region string       `json:"region"`
	ByYear []YearAmount `json:"by_year"`
}

// DensitySeries is one entry of distribution.by_density.
type DensitySeries struct {
	Density string       `json:"density"`
	ByYear  []YearAmount `json:"by_year"`
}

// LocalCost is one entry of distribution.local_costs.
type LocalCost struct {
	Region  *string      `json:"region"`
	Density *string      `json:"density"`
	Bearer  string       `json:"bearer"`
	ByYear  []YearAmount `json:"by_year"`
}

// Distribution is D75's distributional series.
type Distribution struct {
	ByRegion   []RegionSeries  `json:"by_region"`
	ByDensity  []DensitySeries `json:"by_density"`
	LocalCosts []LocalCost     `json:"local_costs"`
}

// Estimate is a decoded estimate member.
type Estimate struct {
	MR          dag.ID
	Baseline    string
	ByYear      []YearAmount
	Assumptions string
	// HasIfPermanent: if_permanent is present (an array or null);
	// IfPermanent is nil when it is null or absent.
	HasIfPermanent    bool
	IfPermanent       []YearAmount
	IfPermanentReason *string
	Distribution      *Distribution
}

type wireEstimate struct {
	MR                *string         `json:"mr"`
	Baseline          *string         `json:"baseline"`
	ByYear            []YearAmount    `json:"by_year"`
	Assumptions       *string         `json:"assumptions"`
	IfPermanent       json.RawMessage `json:"if_permanent"`
	IfPermanentReason *string         `json:"if_permanent_reason"`
	Distribution      *Distribution   `json:"distribution"`
}

func decodeEstimate(raw json.RawMessage) (*Estimate, error) {
	var w wireEstimate
	if err := strict(raw, &w, "estimate"); err != nil {
		return nil, err
	}
	if w.MR == nil || w.Baseline == nil || w.Assumptions == nil || w.ByYear == nil {
		return nil, schemaf("estimate: mr, baseline, by_year and assumptions are required")
	}
	id, err := dag.ParseID(*w.MR)
	if err != nil {
		return nil, schemaf("estimate.mr: %v", err)
	}
	e := &Estimate{MR: id, Baseline: *w.Baseline, Assumptions: *w.Assumptions, IfPermanentReason: w.IfPermanentReason, Distribution: w.Distribution}
	if utf8.RuneCountInString(e.Baseline) > MaxBaseline || utf8.RuneCountInString(e.Assumptions) > MaxAssumptions {
		return nil, schemaf("estimate: baseline is at most %d characters, assumptions at most %d", MaxBaseline, MaxAssumptions)
	}
	if e.ByYear, err = series(w.ByYear, "estimate.by_year"); err != nil {
		return nil, err
	}
	if w.IfPermanent != nil {
		e.HasIfPermanent = true
		if string(w.IfPermanent) != "null" {
			var ip []YearAmount
			if err := strict(w.IfPermanent, &ip, "estimate.if_permanent"); err != nil {
				return nil, err
			}
			if e.IfPermanent, err = series(ip, "estimate.if_permanent"); err != nil {
				return nil, err
			}
		}
	}
	if r := e.IfPermanentReason; r != nil && (*r == "" || utf8.RuneCountInString(*r) > MaxReason) {
		return nil, schemaf("estimate.if_permanent_reason is 1 to %d characters", MaxReason)
	}
	if d := e.Distribution; d != nil {
		if len(d.ByRegion)+len(d.ByDensity)+len(d.LocalCosts) > MaxList {
			return nil, schemaf("estimate.distribution lists more than %d series", MaxList)
		}
		for i, s := range d.ByRegion {
			if s.Region == "" || len(s.Region) > MaxText {
				return nil, schemaf("estimate.distribution.by_region[%d].region must be 1 to %d bytes", i, MaxText)
			}
			if d.ByRegion[i].ByYear, err = series(s.ByYear, "estimate.distribution.by_region"); err != nil {
				return nil, err
			}
		}
		for i, s := range d.ByDensity {
			if s.Density == "" || len(s.Density) > MaxText {
				return nil, schemaf("estimate.distribution.by_density[%d].density must be 1 to %d bytes", i, MaxText)
			}
			if d.ByDensity[i].ByYear, err = series(s.ByYear, "estimate.distribution.by_density"); err != nil {
				return nil, err
			}
		}
		for i, s := range d.LocalCosts {
			if !oneOf(s.Bearer, Bearers) {
				return nil, schemaf("estimate.distribution.local_costs[%d].bearer %q is not one of %v", i, dag.Trunc(s.Bearer), Bearers)
			}
			if d.LocalCosts[i].ByYear, err = series(s.ByYear, "estimate.distribution.local_costs"); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// series checks a by_year list: 1 to MaxList years, strictly increasing,
// each amount a decimal integer.
func series(in []YearAmount, what string) ([]YearAmount, error) {
	if len(in) == 0 || len(in) > MaxList {
		return nil, schemaf("%s lists 1 to %d years", what, MaxList)
	}
	for i, y := range in {
		if y.Year < 1 || y.Year > 9999 {
			return nil, schemaf("%s[%d].year %d is not a year", what, i, y.Year)
		}
		if i > 0 && y.Year <= in[i-1].Year {
			return nil, schemaf("%s: years must be strictly increasing (%d after %d)", what, y.Year, in[i-1].Year)
		}
		for _, a := range []*string{&y.Outlays, y.RangeLow, y.RangeHigh} {
			if a != nil && !IsAmount(*a) {
				return nil, schemaf("%s[%d]: %q is not an amount in whole dollars (a decimal integer)", what, i, dag.Trunc(*a))
			}
		}
	}
	return in, nil
}

// IsAmount reports whether s is a decimal integer as the estimate's
// amounts are written: an optional "-", then "0" or digits without a
// leading zero, at most 30 digits.
func IsAmount(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if d == "" || len(d) > maxDigits || (d[0] == '0' && len(d) > 1) || s == "-0" {
		return false
	}
	for _, c := range []byte(d) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// EstimateContext is what an estimate's MR and session say, read from the
// estimate's causal past.
type EstimateContext struct {
	// EffectiveYear is the first year by_year must cover (D69).
	EffectiveYear int
	// Sunsets: the MR's fact sheet lists a sunset (D69).
	Sunsets bool
	// Regions and Densities are the session's declared values (D72); nil
	// when the session declares no district table.
	Regions, Densities []string
}

// CheckEstimate judges an estimate against its MR and session. Code:
// estimate_incomplete.
func CheckEstimate(e *Estimate, c EstimateContext) error {
	for y := c.EffectiveYear; y < c.EffectiveYear+EstimateYears; y++ {
		if !slices.ContainsFunc(e.ByYear, func(a YearAmount) bool { return a.Year == y }) {
			return codef(dag.CodeEstimateIncomplete, "by_year must cover the %d years from the effective year %d; %d is missing", EstimateYears, c.EffectiveYear, y)
		}
	}
	if c.Sunsets {
		switch {
		case !e.HasIfPermanent:
			return codef(dag.CodeEstimateIncomplete, "the MR's fact sheet lists a sunset: the estimate must include if_permanent (a series, or null with if_permanent_reason)")
		case e.IfPermanent == nil && e.IfPermanentReason == nil:
			return codef(dag.CodeEstimateIncomplete, "if_permanent is null: if_permanent_reason is required")
		}
	}
	if e.IfPermanent != nil {
		if len(e.IfPermanent) != len(e.ByYear) {
			return codef(dag.CodeEstimateIncomplete, "if_permanent must cover the same years as by_year")
		}
		for i := range e.IfPermanent {
			if e.IfPermanent[i].Year != e.ByYear[i].Year {
				return codef(dag.CodeEstimateIncomplete, "if_permanent must cover the same years as by_year (%d is not %d)", e.IfPermanent[i].Year, e.ByYear[i].Year)
			}
		}
	}
	if d := e.Distribution; d != nil {
		in := func(v *string, set []string, what string) error {
			if v != nil && !slices.Contains(set, *v) {
				if set == nil {
					return codef(dag.CodeEstimateIncomplete, "distribution: the session declares no %s list (D72), so %q cannot be used", what, dag.Trunc(*v))
				}
				return codef(dag.CodeEstimateIncomplete, "distribution: %s %q is not one the session declares %v", what, dag.Trunc(*v), set)
			}
			return nil
		}
		for _, s := range d.ByRegion {
			if err := in(&s.Region, c.Regions, "region"); err != nil {
				return err
			}
		}
		for _, s := range d.ByDensity {
			if err := in(&s.Density, c.Densities, "density"); err != nil {
				return err
			}
		}
		for _, s := range d.LocalCosts {
			if err := in(s.Region, c.Regions, "region"); err != nil {
				return err
			}
			if err := in(s.Density, c.Densities, "density"); err != nil {
				return err
			}
		}
	}
	return nil
}

// Outlays returns a series' outlays as written, for the fact sheet's
// estimate_totals (D69).
func Outlays(s []YearAmount) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, y := range s {
		out[i] = y.Outlays
	}
	return out
}
