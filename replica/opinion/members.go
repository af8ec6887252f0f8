package opinion

// This file attaches the opinion members beyond the opinion layer's first
// part (estimates D53/D69/D75, feasibility D70, attestations D76,
// translations D63, jurisdiction choices D73, exchanges D67) to a decoded
// opinion. Each member is
// decoded strictly in its own file; the other members of §8 that this
// node does not serve are still refused schema (CheckAuthor).

import "github.com/witan-dev/witan/dag"

// Parts are the served members of §8 beyond the opinion layer's first
// part; nil when absent or null.
type Parts struct {
	Estimate    *Estimate
	Attest      *Attest
	Feasibility *Feasibility
	Translation *Translation
	// JurisdictionChoice is D73's choice (jchoice.go).
	JurisdictionChoice *JurisdictionChoice
	// Exchange is D67's offer (exchange.go).
	Exchange *Exchange
	// err is the first error decoding them: CheckAuthor returns it after
	// the observer rule, so that an observer's opinion carrying one of
	// them is observer_not_allowed however it is written (D78).
	err error
}

// served are the member names Parts holds: present, they are decoded
// instead of refused.
var served = map[string]bool{"estimate": true, "exchange": true, "attest": true, "jurisdiction_choice": true, "feasibility": true, "translation": true,
	"forecast": true, "ranking": true, "resolution": true} // the last three: markets.go

// Served reports whether this node serves §8 member name.
func Served(name string) bool { return served[name] }

// decodeParts decodes the served members of w into o; a malformed one
// is kept in o.err for CheckAuthor.
func decodeParts(w *wireOpinion, o *Opinion) error {
	o.err = decodeEach(w, o)
	return nil
}

func decodeEach(w *wireOpinion, o *Opinion) error {
	var err error
	if present(w.Estimate) {
		if o.Estimate, err = decodeEstimate(w.Estimate); err != nil {
			return err
		}
	}
	if present(w.Attest) {
		if o.Attest, err = decodeAttest(w.Attest); err != nil {
			return err
		}
	}
	if present(w.Translation) {
		if o.Translation, err = decodeTranslation(w.Translation); err != nil {
			return err
		}
	}
	if present(w.Feasibility) {
		if o.Feasibility, err = decodeFeasibility(w.Feasibility); err != nil {
			return err
		}
	}
	if present(w.Exchange) {
		if o.Exchange, err = decodeExchange(w.Exchange); err != nil {
			return err
		}
	}
	if present(w.JurisdictionChoice) {
		if o.JurisdictionChoice, err = decodeJurisdictionChoice(w.JurisdictionChoice); err != nil {
			return err
		}
	}
	return nil
}

// CheckParts judges the served members against the signer and the
// opinion alone. Codes: attestation_invalid, quote_mismatch (a
// translation passage not anchored to a quote of its source; Check
// verifies the quotes).
func CheckParts(o *Opinion, signer dag.Key) error {
	if o.Translation != nil {
		if err := checkTranslation(o); err != nil {
			return err
		}
	}
	if o.Attest != nil {
		if err := checkAttest(o.Attest, signer); err != nil {
			return err
		}
	}
	return nil
}

func present(raw []byte) bool { return len(raw) > 0 && string(raw) != "null" }
