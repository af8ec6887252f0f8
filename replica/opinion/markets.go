package opinion

// This file ties the members of 30k §8 "Resolutions, forecasts, and
// rankings" (D31, D34, D35) into the opinion: decoded with the body, and
// evaluated beside its quotes and assertions.

// decodeMarkets decodes resolution, forecast and ranking when present
// and not null.
func decodeMarkets(w *wireOpinion, o *Opinion) error {
	var err error
	if raw := w.Resolution; len(raw) > 0 && string(raw) != "null" {
		if o.Resolution, err = decodeResolution(raw); err != nil {
			return err
		}
	}
	if raw := w.Forecast; len(raw) > 0 && string(raw) != "null" {
		if o.Forecast, err = decodeForecast(raw); err != nil {
			return err
		}
	}
	if raw := w.Ranking; len(raw) > 0 && string(raw) != "null" {
		if o.Ranking, err = decodeRanking(raw); err != nil {
			return err
		}
	}
	return nil
}

// EvaluateMarkets evaluates what of an opinion's resolution and forecast
// the record alone decides: the resolution's assertion as this node
// reports it (Kind "resolution_assertion"; Resolve turns the listed
// nodes' reports into the outcome), and the forecast (Kind "forecast").
// A ranking needs the record as of its cut: EvaluateRanking.
func EvaluateMarkets(o *Opinion, f Facts) []Result {
	var out []Result
	if o.Resolution != nil {
		r := EvaluateAssertion(o.Resolution.Assertion, f)
		r.Kind = "resolution_assertion"
		out = append(out, r)
	}
	if o.Forecast != nil {
		out = append(out, EvaluateForecast(o.Forecast, f))
	}
	return out
}
