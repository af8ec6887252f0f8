package opinion

// This file is the forecast of 30k §8 (D34): a probability, as an
// integer fraction, that an assertion will hold. Nodes report it holds or
// fails once the assertion is decided, and never aggregate forecasts into
// odds or keep forecaster scores: nothing here sums, averages or counts
// forecasts, and no view does.

import (
	"encoding/json"

	"github.com/witan-dev/witan/dag"
)

// Forecast is a forecast (D34).
type Forecast struct {
	Assertion  *Assertion
	PNum, PDen uint64
	// AsOf is the checkpoint root the forecast was made at. It is the
	// forecaster's statement, kept and shown, never resolved: checkpoint
	// roots are per replica on an eventual node, and admission may not
	// depend on them (open point 13, docs/deviations.md).
	AsOf dag.ID
}

type wireForecast struct {
	Assertion json.RawMessage `json:"assertion"`
	PNum      *uint64         `json:"p_num"`
	PDen      *uint64         `json:"p_den"`
	AsOf      *string         `json:"as_of"`
}

// decodeForecast decodes a forecast: schema when malformed (the prompt
// names no code of its own), assertion_unknown for an assertion outside
// the registry.
func decodeForecast(raw json.RawMessage) (*Forecast, error) {
	var w wireForecast
	if err := strict(raw, &w, "forecast"); err != nil {
		return nil, err
	}
	if w.Assertion == nil || w.PNum == nil || w.PDen == nil || w.AsOf == nil {
		return nil, schemaf("forecast: assertion, p_num, p_den and as_of are required")
	}
	if *w.PDen == 0 || *w.PNum > *w.PDen {
		return nil, schemaf("forecast: 0 <= p_num <= p_den and p_den > 0 (got %d/%d)", *w.PNum, *w.PDen)
	}
	asOf, err := dag.ParseID(*w.AsOf)
	if err != nil {
		return nil, schemaf("forecast as_of: %v", err)
	}
	a, err := DecodeAssertion(w.Assertion)
	if err != nil {
		return nil, err
	}
	return &Forecast{Assertion: a, PNum: *w.PNum, PDen: *w.PDen, AsOf: asOf}, nil
}

// EvaluateForecast reports a forecast's assertion holds or fails once it
// is decided, else undetermined (D34). "Decided" is stricter than the
// assertion's own answer: a ballot_choice on an MR still open evaluates
// holds or fails now, but the ballot may still change, so the forecast
// stays undetermined until the MR's determination is executed.
func EvaluateForecast(fc *Forecast, f Facts) Result {
	r := EvaluateAssertion(fc.Assertion, f)
	r.Kind = "forecast"
	if r.Open {
		r.Result = Undetermined
	}
	return r
}
