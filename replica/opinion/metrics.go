package opinion

// This file is the closed metric registry of 30k §8 (D35, with D50's
// shares) and the ranking evaluated against it. Metrics read the binding
// record only (MRs, their effective ballots, determinations), never
// opinions, and are integer fractions or counts: no float anywhere. The
// caller hands in a StatsRecord describing the record as of one cut (a
// checkpoint); everything here is a function of it.

import (
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Metrics is the registry (D35), sorted. Others are metric_unknown.
var Metrics = []string{"approve_of_electorate", "approve_share", "ballots_cast", "checkpoints_to_determination",
	"mrs_merged", "mrs_opened", "turnout"}

// metricScopes lists the scope types each metric is defined for (D35's
// table; session is the session the record is of).
var metricScopes = map[string][]string{
	"approve_share":                {"mr"},
	"approve_of_electorate":        {"mr"},
	"turnout":                      {"mr"},
	"ballots_cast":                 {"mr", "member", "session"},
	"mrs_opened":                   {"member", "group", "session"},
	"mrs_merged":                   {"member", "group", "session"},
	"checkpoints_to_determination": {"mr"},
}

// ScopesOf returns the scope types metric is defined for, or
// metric_unknown.
func ScopesOf(metric string) ([]string, error) {
	s, ok := metricScopes[metric]
	if !ok {
		return nil, codef(dag.CodeMetricUnknown, "metric %q is not in the registry %v", dag.Trunc(metric), Metrics)
	}
	return s, nil
}

// Value is a metric's value: an integer fraction Num/Den (Den may be 0:
// nothing to divide, written "0/0"), an integer Num, or Null (undefined:
// checkpoints_to_determination before an executed, checkpointed
// determination).
type Value struct {
	Num, Den uint64
	Frac     bool
	Null     bool
}

// String is the value's wire form: "<num>/<den>", "<int>" or "null".
func (v Value) String() string {
	switch {
	case v.Null:
		return "null"
	case v.Frac:
		return strconv.FormatUint(v.Num, 10) + "/" + strconv.FormatUint(v.Den, 10)
	}
	return strconv.FormatUint(v.Num, 10)
}

// MarshalJSON writes a fraction as the string "<num>/<den>", an integer
// as a number, and Null as null.
func (v Value) MarshalJSON() ([]byte, error) {
	switch {
	case v.Null:
		return []byte("null"), nil
	case v.Frac:
		return []byte(`"` + v.String() + `"`), nil
	}
	return []byte(v.String()), nil
}

// Compare orders two values: null below everything, 0/0 below every
// other fraction, fractions by cross-multiplication (exact, 128-bit), an
// integer as the fraction n/1.
func (v Value) Compare(w Value) int {
	switch {
	case v.Null || w.Null:
		return boolCmp(!v.Null, !w.Null)
	}
	vn, vd := v.Num, v.Den
	if !v.Frac {
		vd = 1
	}
	wn, wd := w.Num, w.Den
	if !w.Frac {
		wd = 1
	}
	if vd == 0 || wd == 0 {
		return boolCmp(vd != 0, wd != 0)
	}
	h1, l1 := bits.Mul64(vn, wd)
	h2, l2 := bits.Mul64(wn, vd)
	switch {
	case h1 != h2:
		return cmpU(h1, h2)
	}
	return cmpU(l1, l2)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MRStats is one MR of the record as of the cut.
type MRStats struct {
	ID     dag.ID
	Opener dag.Key // the signer of its mr.open (the smallest tx id if opened twice)
	// Group is "group:<id>", the owner of the MR's source branch (of its
	// target branch for a governance MR), or "".
	Group string
	// The live tally: electorate size N and effective approvals,
	// rejections and abstentions (D50's A, R, B).
	Electorate, Approve, Reject, Abstain uint64
	Merged                               bool
	// Decided: the MR has an executed determination in the record.
	Decided bool
	// RuleShare is the JSON of the share the MR's rule tests (D50's
	// rule_share, as the tally writes it), or nil for a rule with none.
	// It is shown beside approve_share, never computed here.
	RuleShare json.RawMessage
	// OpenCP and DetCP are the 1-based indexes of this replica's first
	// checkpoints including the MR's mr.open and its executed
	// determination; 0 when there is none.
	OpenCP, DetCP uint64
}

// StatsRecord is the binding record as of one cut.
type StatsRecord struct {
	MRs []MRStats
	// Voted counts, per member, the MRs on which the member has an
	// effective (counted, not void) ballot: O(members), not O(ballots).
	Voted map[dag.Key]uint64
}

// Scope is what a metric is about: Type mr (ID a sha256 id), member (an
// ed25519 key), group ("group:<id>") or session (no ID).
type Scope struct {
	Type, ID string
}

// ParseScope reads /stats's scope: "session", "sha256:…", "ed25519:…" or
// "group:<id>".
func ParseScope(s string) (Scope, error) {
	switch {
	case s == "session":
		return Scope{Type: "session"}, nil
	case strings.HasPrefix(s, "sha256:"):
		if _, err := dag.ParseID(s); err != nil {
			return Scope{}, schemaf("scope: %v", err)
		}
		return Scope{Type: "mr", ID: s}, nil
	case strings.HasPrefix(s, "ed25519:"):
		if _, err := dag.ParseKey(s); err != nil {
			return Scope{}, schemaf("scope: %v", err)
		}
		return Scope{Type: "member", ID: s}, nil
	case strings.HasPrefix(s, "group:") && len(s) > len("group:") && len(s) <= MaxText:
		return Scope{Type: "group", ID: s}, nil
	}
	return Scope{}, schemaf("scope %q is not session, an MR id, a member key or group:<id>", dag.Trunc(s))
}

// ErrNoSuchMR is returned by Stat for an MR scope the record does not
// hold.
var ErrNoSuchMR = errors.New("opinion: no such MR in the record")

// Stat computes metric for scope over rec: metric_unknown for a metric
// outside the registry, schema for a scope type the metric does not have,
// ErrNoSuchMR for an MR the record does not hold. A member or group the
// record never saw has counts of 0.
func Stat(rec *StatsRecord, metric string, sc Scope) (Value, error) {
	scopes, err := ScopesOf(metric)
	if err != nil {
		return Value{}, err
	}
	if !slices.Contains(scopes, sc.Type) {
		return Value{}, schemaf("metric %s has no scope %s (scopes: %v)", metric, sc.Type, scopes)
	}
	if sc.Type == "mr" {
		for i := range rec.MRs {
			if m := &rec.MRs[i]; m.ID.String() == sc.ID {
				return mrValue(m, metric), nil
			}
		}
		return Value{}, ErrNoSuchMR
	}
	if metric == "ballots_cast" && sc.Type == "member" {
		k, err := dag.ParseKey(sc.ID)
		if err != nil {
			return Value{}, schemaf("scope: %v", err)
		}
		return Value{Num: rec.Voted[k]}, nil
	}
	var n uint64
	for i := range rec.MRs {
		m := &rec.MRs[i]
		in := sc.Type == "session" || (sc.Type == "member" && m.Opener.String() == sc.ID) || (sc.Type == "group" && m.Group == sc.ID)
		switch metric {
		case "ballots_cast": // session scope
			n += m.Approve + m.Reject + m.Abstain
		case "mrs_opened":
			if in {
				n++
			}
		case "mrs_merged":
			if in && m.Merged {
				n++
			}
		}
	}
	return Value{Num: n}, nil
}

func mrValue(m *MRStats, metric string) Value {
	switch metric {
	case "approve_share":
		return Value{Num: m.Approve, Den: m.Approve + m.Reject, Frac: true}
	case "approve_of_electorate":
		return Value{Num: m.Approve, Den: m.Electorate, Frac: true}
	case "turnout":
		return Value{Num: m.Approve + m.Reject + m.Abstain, Den: m.Electorate, Frac: true}
	case "ballots_cast":
		return Value{Num: m.Approve + m.Reject + m.Abstain}
	case "checkpoints_to_determination":
		if m.OpenCP == 0 || m.DetCP == 0 || m.DetCP < m.OpenCP {
			return Value{Null: true}
		}
		return Value{Num: m.DetCP - m.OpenCP}
	}
	return Value{Null: true}
}

// Ranking is a ranking (D35): items of one scope type ordered by a
// metric as of a checkpoint.
type Ranking struct {
	Metric, ScopeType string
	Session           dag.ID // filter.session
	// AsOf names the cut: a checkpoint root of the evaluating replica, or
	// the id of an accepted entry (its causal past, open point 13).
	AsOf  dag.ID
	Order string // desc | asc
	Items []RankItem
}

// RankItem is one ranked item with its stated value.
type RankItem struct {
	ID    string
	Value Value
}

type wireRanking struct {
	Metric    *string `json:"metric"`
	ScopeType *string `json:"scope_type"`
	Filter    *struct {
		Session string `json:"session"`
	} `json:"filter"`
	AsOf  *string `json:"as_of"`
	Order *string `json:"order"`
	Items []struct {
		ID    string          `json:"id"`
		Value json.RawMessage `json:"value"`
	} `json:"items"`
}

// decodeRanking decodes a ranking: metric_unknown for a metric outside
// the registry, schema for anything else malformed.
func decodeRanking(raw json.RawMessage) (*Ranking, error) {
	var w wireRanking
	if err := strict(raw, &w, "ranking"); err != nil {
		return nil, err
	}
	if w.Metric == nil || w.ScopeType == nil || w.Filter == nil || w.AsOf == nil || w.Order == nil || w.Items == nil {
		return nil, schemaf("ranking: metric, scope_type, filter, as_of, order and items are required")
	}
	scopes, err := ScopesOf(*w.Metric)
	if err != nil {
		return nil, err
	}
	rk := &Ranking{Metric: *w.Metric, ScopeType: *w.ScopeType, Order: *w.Order}
	if rk.ScopeType == "session" || !slices.Contains(scopes, rk.ScopeType) {
		return nil, schemaf("ranking: metric %s does not rank scope_type %q", rk.Metric, dag.Trunc(rk.ScopeType))
	}
	if rk.Order != "desc" && rk.Order != "asc" {
		return nil, schemaf("ranking: order %q is not desc or asc", dag.Trunc(rk.Order))
	}
	if rk.Session, err = dag.ParseID(w.Filter.Session); err != nil {
		return nil, schemaf("ranking filter.session: %v", err)
	}
	if rk.AsOf, err = dag.ParseID(*w.AsOf); err != nil {
		return nil, schemaf("ranking as_of: %v", err)
	}
	if len(w.Items) == 0 || len(w.Items) > MaxList {
		return nil, schemaf("ranking: 1 to %d items", MaxList)
	}
	seen := map[string]bool{}
	for i, it := range w.Items {
		sc, err := ParseScope(it.ID)
		if err != nil || sc.Type != rk.ScopeType {
			return nil, schemaf("ranking items[%d].id %q is not a %s id", i, dag.Trunc(it.ID), rk.ScopeType)
		}
		if seen[it.ID] {
			return nil, schemaf("ranking lists %q twice", dag.Trunc(it.ID))
		}
		seen[it.ID] = true
		v, err := parseValue(it.Value)
		if err != nil {
			return nil, schemaf("ranking items[%d].value: %v", i, err)
		}
		rk.Items = append(rk.Items, RankItem{ID: it.ID, Value: v})
	}
	return rk, nil
}

// parseValue reads a stated value: a JSON integer, or a string
// "<num>/<den>" or "<int>".
func parseValue(raw json.RawMessage) (Value, error) {
	s := string(raw)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
		if n, d, ok := strings.Cut(s, "/"); ok {
			num, err1 := strconv.ParseUint(n, 10, 64)
			den, err2 := strconv.ParseUint(d, 10, 64)
			if err1 != nil || err2 != nil {
				return Value{}, errors.New("not <num>/<den> in non-negative integers")
			}
			return Value{Num: num, Den: den, Frac: true}, nil
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Value{}, errors.New("not an integer or \"<num>/<den>\"")
	}
	return Value{Num: n}, nil
}

// equalValue is value equality as a ranking's check reads it: fractions
// are equal as rationals (2/4 is 1/2), 0/0 only to 0/0, an integer n to
// n/1.
func equalValue(stated, computed Value) bool {
	if stated.Null || computed.Null {
		return stated.Null && computed.Null
	}
	return stated.Compare(computed) == 0
}

// EvaluateRanking recomputes a ranking over rec (D35): holds when every
// stated value equals the recomputed one and the items are in the stated
// order, ties (equal values) ordered by id ascending (code point order);
// else fails. An item the record does not hold (an MR not in it) fails
// the ranking. Items need not cover every scope of the record.
func EvaluateRanking(rk *Ranking, rec *StatsRecord) string {
	vals := make([]Value, len(rk.Items))
	for i, it := range rk.Items {
		sc, err := ParseScope(it.ID)
		if err != nil {
			return Fails
		}
		v, err := Stat(rec, rk.Metric, sc)
		if err != nil || !equalValue(it.Value, v) {
			return Fails
		}
		vals[i] = v
	}
	for i := 0; i+1 < len(vals); i++ {
		c := vals[i].Compare(vals[i+1])
		if rk.Order == "asc" {
			c = -c
		}
		if c < 0 || (c == 0 && rk.Items[i].ID >= rk.Items[i+1].ID) {
			return Fails
		}
	}
	return Holds
}
