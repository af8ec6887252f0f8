package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Results of an entry.
const (
	Pass          = "pass"
	Fail          = "fail"
	NotApplicable = "not_applicable"
	// Partial: every part the harness ran passed, and some parts of the
	// scenario's wording are not driven by the harness yet (listed in
	// NotRun). It counts neither as a failure nor as a pass.
	Partial = "partial"
	// NotRun: the harness does not drive this scenario yet.
	NotRun = "not_run"
)

// Check is one verified statement with its evidence.
type Check struct {
	Check    string  `json:"check"`
	OK       bool    `json:"ok"`
	Detail   string  `json:"detail,omitempty"`
	Evidence *Answer `json:"evidence,omitempty"`
}

// Entry is one scenario or requirement of the report.
type Entry struct {
	ID     string   `json:"id"`
	Kind   string   `json:"kind"` // scenario or requirement
	Level  string   `json:"level"`
	Title  string   `json:"title"`
	Result string   `json:"result"`
	Reason string   `json:"reason,omitempty"`
	NotRun []string `json:"not_run,omitempty"`
	// NotApplicable lists parts of the scenario that its own words limit
	// to nodes other than these (a strong node's, an L3 node's), each
	// with the reason; they do not make the entry partial.
	NotApplicable []string `json:"not_applicable,omitempty"`
	// Checks lists every check; a failed one carries the request and the
	// answer's excerpt.
	Checks   []Check `json:"checks"`
	Seconds  float64 `json:"seconds"`
	Failures int     `json:"failures"`
}

// NodeInfo is what a node declared.
type NodeInfo struct {
	URL              string   `json:"url"`
	Implementation   any      `json:"implementation,omitempty"`
	Consistency      string   `json:"consistency"`
	TrustModel       string   `json:"trust_model"`
	ConformanceLevel string   `json:"conformance_level"`
	RuleKinds        []string `json:"rule_kinds"`
	NodeKey          string   `json:"node_key,omitempty"`
}

// Report is conformance-report.json.
type Report struct {
	Notice   string     `json:"notice"`
	Harness  HarnessID  `json:"harness"`
	Nodes    []NodeInfo `json:"nodes"`
	Claimed  string     `json:"claimed_level"`
	Entries  []*Entry   `json:"entries"`
	Metrics  Metrics    `json:"metrics"`
	Verdict  string     `json:"verdict"`
	Seconds  float64    `json:"seconds"`
	Failures []string   `json:"failures"`
}

// HarnessID names the run.
type HarnessID struct {
	Name    string  `json:"name"`
	Version string  `json:"version"`
	Seed    string  `json:"seed"`
	RunID   string  `json:"run_id"`
	Size    string  `json:"size"`
	Roster  int     `json:"roster"`
	S11     S11Size `json:"s11"`
	// Links are the harness's own links between the nodes (LISTEN=TARGET).
	Links []string `json:"links,omitempty"`
}

// Notice heads every report.
const Notice = "30k conformance harness report. Simulation only: synthetic rosters and programmed voting blocs; not for use in real elections or governance."

// levelRank orders levels.
func levelRank(l string) int {
	switch l {
	case "L0":
		return 0
	case "L1":
		return 1
	case "L2":
		return 2
	case "L3":
		return 3
	case "L2/L3":
		return 2
	}
	return 9
}

// finish sets the verdict: an entry at or below the claimed level that
// failed, or that the harness did not show whole (partial, not run),
// fails the claim: a claim holds only as far as the report shows it.
func (r *Report) finish() {
	r.Failures = nil
	for _, e := range r.Entries {
		if levelRank(e.Level) > levelRank(r.Claimed) {
			continue
		}
		switch e.Result {
		case Fail:
			r.Failures = append(r.Failures, e.ID)
		case Partial, NotRun:
			r.Failures = append(r.Failures, e.ID+" ("+e.Result+")")
		}
	}
	if len(r.Failures) == 0 {
		r.Verdict = "claimed level " + r.Claimed + " holds for every entry the harness ran"
	} else {
		r.Verdict = "claimed level " + r.Claimed + " fails: " + strings.Join(r.Failures, ", ")
	}
}

// Failed reports whether the claimed level fails.
func (r *Report) Failed() bool { return len(r.Failures) > 0 }

// WriteJSON writes the report.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteSummary writes the readable summary.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", Notice)
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "node %s: %s, %s, claims %s\n", n.URL, n.Consistency, n.TrustModel, n.ConformanceLevel)
	}
	fmt.Fprintf(w, "seed %s, size %s, roster %d\n\n", r.Harness.Seed, r.Harness.Size, r.Harness.Roster)
	for _, e := range r.Entries {
		line := fmt.Sprintf("%-5s %-5s %-14s %s", e.ID, e.Level, e.Result, e.Title)
		if e.Reason != "" {
			line += " — " + e.Reason
		}
		fmt.Fprintln(w, line)
		for _, c := range e.Checks {
			if !c.OK {
				fmt.Fprintf(w, "        FAILED %s: %s\n", c.Check, c.Detail)
				if c.Evidence != nil {
					fmt.Fprintf(w, "          %s\n", c.Evidence)
				}
			}
		}
		if len(e.NotRun) > 0 {
			fmt.Fprintf(w, "        not run: %s\n", strings.Join(e.NotRun, "; "))
		}
		if len(e.NotApplicable) > 0 {
			fmt.Fprintf(w, "        not applicable: %s\n", strings.Join(e.NotApplicable, "; "))
		}
	}
	fmt.Fprintln(w)
	r.Metrics.write(w)
	fmt.Fprintf(w, "\n%s (%.1f s)\n", r.Verdict, r.Seconds)
}

// Markdown renders the entries as the table docs/conformance.md shows:
// id, level, title, result and what was not run (or why not). It holds
// nothing that changes from run to run, so a document can be checked
// against a fresh report.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("| Entry | Level | Scenario or requirement | Result | Not run, or why |\n|---|---|---|---|---|\n")
	for _, e := range r.Entries {
		why := e.Reason
		if len(e.NotRun) > 0 {
			why = strings.Join(e.NotRun, "; ")
		}
		if len(e.NotApplicable) > 0 {
			if why != "" {
				why += "; "
			}
			why += "not applicable: " + strings.Join(e.NotApplicable, "; ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", e.ID, e.Level, e.Title, e.Result, why)
	}
	return b.String()
}
