package opinion

// This file is the resolution spec of 30k §8 (D31): decoding, the
// "simulated" word rule of D54, and Resolve, which turns the listed
// nodes' reports into resolved_true, resolved_false, unresolved or
// unsatisfiable. Fetching the reports is the caller's (I/O); what a
// report is and how it counts is decided here, so every replica given the
// same reports answers the same.

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// Resolution outcomes (D31).
const (
	ResolvedTrue  = "resolved_true"
	ResolvedFalse = "resolved_false"
	Unresolved    = "unresolved"
	Unsatisfiable = "unsatisfiable"
)

// Finality words a report may carry (30k §5).
const (
	FinalityProvisional   = "provisional"
	FinalityFinalAdvisory = "final_advisory"
	FinalityFinal         = "final"
)

// MaxResolutionNodes bounds the nodes a resolution spec lists (witan's
// bound: each is asked for a report).
const MaxResolutionNodes = 64

// Resolution is a resolution spec (D31): how a question resolves, stated
// ahead of time.
type Resolution struct {
	Question  string
	Assertion *Assertion
	// Finality is the finality the listed nodes must report the
	// assertion at: final or final_advisory.
	Finality string
	Nodes    []dag.Key // listed node keys, each once, in the spec's order
	MinAgree int
}

type wireResolution struct {
	Question  *string         `json:"question"`
	Assertion json.RawMessage `json:"assertion"`
	Finality  *string         `json:"finality"`
	Nodes     []string        `json:"nodes"`
	MinAgree  *int            `json:"min_agree"`
}

func resolutionf(format string, args ...any) error {
	return codef(dag.CodeResolutionInvalid, "resolution: "+format, args...)
}

// decodeResolution decodes a resolution spec. A malformed spec is
// resolution_invalid (D31); an assertion of a kind outside the registry
// stays assertion_unknown (D22).
func decodeResolution(raw json.RawMessage) (*Resolution, error) {
	var w wireResolution
	if err := dag.DecodeStrict(raw, &w); err != nil {
		return nil, resolutionf("%s", dag.ErrorDetail(err))
	}
	if w.Question == nil || w.Assertion == nil || w.Finality == nil || w.Nodes == nil || w.MinAgree == nil {
		return nil, resolutionf("question, assertion, finality, nodes and min_agree are required")
	}
	r := &Resolution{Question: *w.Question, Finality: *w.Finality, MinAgree: *w.MinAgree}
	if r.Question == "" || utf8.RuneCountInString(r.Question) > MaxSummary {
		return nil, resolutionf("question must be 1 to %d characters", MaxSummary)
	}
	if r.Finality != FinalityFinal && r.Finality != FinalityFinalAdvisory {
		return nil, resolutionf("finality %q is not final or final_advisory", dag.Trunc(r.Finality))
	}
	if len(w.Nodes) == 0 || len(w.Nodes) > MaxResolutionNodes {
		return nil, resolutionf("nodes lists 1 to %d node keys", MaxResolutionNodes)
	}
	seen := map[dag.Key]bool{}
	for _, s := range w.Nodes {
		k, err := dag.ParseKey(s)
		if err != nil {
			return nil, resolutionf("nodes: %v", err)
		}
		if seen[k] {
			return nil, resolutionf("nodes lists %s twice", k)
		}
		seen[k] = true
		r.Nodes = append(r.Nodes, k)
	}
	if r.MinAgree < 1 || r.MinAgree > len(r.Nodes) {
		return nil, resolutionf("min_agree %d is not between 1 and the %d listed nodes", r.MinAgree, len(r.Nodes))
	}
	a, err := DecodeAssertion(w.Assertion)
	if err != nil {
		var pe *dag.ProtocolError
		if errors.As(err, &pe) && pe.Code == dag.CodeAssertionUnknown {
			return nil, err
		}
		return nil, resolutionf("assertion: %s", dag.ErrorDetail(err))
	}
	r.Assertion = a
	return r, nil
}

// CheckSession judges what an opinion's resolution owes its session: in a
// simulated session (D54) the question must contain the word "simulated"
// (as a whole word, in any letter case), else resolution_invalid.
func CheckSession(o *Opinion, simulation bool) error {
	if o.Resolution != nil && simulation && !hasWord(o.Resolution.Question, "simulated") {
		return resolutionf("the session is simulated: the question must contain the word \"simulated\" (D54)")
	}
	return nil
}

// hasWord reports whether s contains word, case-folded, with no letter
// or digit directly before or after it.
func hasWord(s, word string) bool {
	l := strings.ToLower(s)
	for i := 0; ; {
		j := strings.Index(l[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		before, _ := utf8.DecodeLastRuneInString(l[:start])
		after, _ := utf8.DecodeRuneInString(l[end:])
		if (start == 0 || !isWordRune(before)) && (end == len(l) || !isWordRune(after)) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Report is what one listed node says about a resolution's assertion.
type Report struct {
	Node dag.Key
	// Consistency is the node's declared consistency (its capability
	// document): "strong", "eventual", or "" when unknown (never
	// reached).
	Consistency string
	// Reached is false when no report could be had (unreachable, or no
	// way to reach the node is known): it counts for neither side.
	Reached bool
	// Result is holds, fails or undetermined; Finality the finality the
	// node reported it at.
	Result, Finality string
}

// meets reports whether a report's finality satisfies the required one:
// final satisfies final and final_advisory; final_advisory only
// final_advisory (docs/wire-format.md).
func meets(got, required string) bool {
	if required == FinalityFinal {
		return got == FinalityFinal
	}
	return got == FinalityFinal || got == FinalityFinalAdvisory
}

// Resolve decides a resolution spec from the listed nodes' reports
// (D31). A report for a node the spec does not list is ignored, and so is
// a second report for one node; a listed node without a report is
// unreached. It answers:
//   - unsatisfiable when the spec requires final and fewer than min_agree
//     listed nodes may declare consistency strong (a node known to declare
//     eventual never reports final; a node not reached may);
//   - resolved_true when at least min_agree listed nodes report holds at
//     the required finality, resolved_false when at least min_agree
//     report fails at it;
//   - otherwise unresolved. When both sides reach min_agree (possible
//     when min_agree is at most half the nodes), the answer is unresolved
//     and conflicting is true: the nodes disagree and nothing here picks.
func Resolve(r *Resolution, reports []Report) (outcome string, conflicting bool) {
	by := make(map[dag.Key]Report, len(reports))
	for _, rp := range reports {
		if _, dup := by[rp.Node]; !dup {
			by[rp.Node] = rp
		}
	}
	if r.Finality == FinalityFinal {
		possible := 0
		for _, k := range r.Nodes {
			if rp, ok := by[k]; !ok || rp.Consistency != "eventual" {
				possible++
			}
		}
		if possible < r.MinAgree {
			return Unsatisfiable, false
		}
	}
	holds, fails := 0, 0
	for _, k := range r.Nodes {
		rp, ok := by[k]
		if !ok || !rp.Reached || !meets(rp.Finality, r.Finality) {
			continue
		}
		switch rp.Result {
		case Holds:
			holds++
		case Fails:
			fails++
		}
	}
	switch {
	case holds >= r.MinAgree && fails >= r.MinAgree:
		return Unresolved, true
	case holds >= r.MinAgree:
		return ResolvedTrue, false
	case fails >= r.MinAgree:
		return ResolvedFalse, false
	}
	return Unresolved, false
}
