package rules

import (
	"encoding/json"
	"slices"
)

// KindInfo describes one rule kind for the rule registry (GET /rules and
// /rules/{kind}, 30k §5 and §7).
type KindInfo struct {
	// Kind is the kind's name, for example "threshold_vote".
	Kind string `json:"kind"`
	// Version is the version of the kind witan implements.
	Version int64 `json:"version"`
	// Supported is false for kinds witan knows but, being an eventual node,
	// answers with rule_not_supported (capital_vote).
	Supported bool `json:"supported"`
	// Level is the conformance level that requires the kind (§10).
	Level string `json:"level"`
	// Closing lists the closing modes the kind offers.
	Closing []Closing `json:"closing"`
	// Description says in a sentence or two what the kind does. The
	// statute-ready text is the rule's text_ref, not this.
	Description string `json:"description"`
	// Params is a JSON Schema (draft 2020-12) of the kind's params object.
	Params json.RawMessage `json:"params_schema"`
}

// The registry is a constant table; Kinds and Lookup hand out copies so
// that no caller can change what another sees.
var kinds = []KindInfo{
	{
		Kind: KindAlwaysAllow, Version: 1, Supported: true, Level: "L1",
		Closing:     []Closing{OnThreshold},
		Description: "Approved once the merge request is open and its structure check passes. Takes no parameters; ballots are tallied but never change the outcome.",
		Params:      json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`),
	},
	{
		Kind: KindDesignatedApprovers, Version: 1, Supported: true, Level: "L1",
		Closing:     []Closing{OnThreshold},
		Description: "With n the size of the approvers group frozen at open: approved when at least required members approve; rejected when n - R - V < required (rejecters and void members can no longer approve); else pending.",
		Params:      json.RawMessage(`{"additionalProperties":false,"properties":{"approvers":{"pattern":"^group:.+$","type":"string"},"required":{"maximum":9007199254740991,"minimum":1,"type":"integer"}},"required":["approvers","required"],"type":"object"}`),
	},
	{
		Kind: KindThresholdVote, Version: 1, Supported: true, Level: "L1",
		Closing:     []Closing{OnThreshold, OnDeadline},
		Description: "D = N for basis electorate, A + R for votes_cast. Passes iff (A+R+B)*quorum_den >= quorum_num*N, D > 0 and A*den cmp num*D; reversion replaces num/den for an MR that reverts text (D41). on_threshold (basis electorate only) approves as soon as it passes and rejects once (N-R-V)*den cmp num*N fails or (N-V)*quorum_den < quorum_num*N. on_deadline stays pending until the deadline, then approves, expires (quorum unmet) or rejects.",
		Params:      json.RawMessage(`{"additionalProperties":false,"else":{"not":{"required":["deadline"]},"properties":{"basis":{"const":"electorate"}}},"if":{"properties":{"closing":{"const":"on_deadline"}}},"properties":{"basis":{"enum":["electorate","votes_cast"]},"closing":{"enum":["on_threshold","on_deadline"]},"cmp":{"enum":["gt","gte"]},"deadline":{"format":"date-time","pattern":"Z$","type":"string"},"den":{"maximum":9007199254740991,"minimum":1,"type":"integer"},"num":{"maximum":9007199254740991,"minimum":1,"type":"integer"},"quorum_den":{"maximum":9007199254740991,"minimum":1,"type":"integer"},"quorum_num":{"maximum":9007199254740991,"minimum":0,"type":"integer"},"reversion":{"additionalProperties":false,"properties":{"den":{"maximum":9007199254740991,"minimum":1,"type":"integer"},"num":{"maximum":9007199254740991,"minimum":1,"type":"integer"}},"required":["num","den"],"type":["object","null"]}},"required":["num","den","cmp","basis","quorum_num","quorum_den","closing"],"then":{"required":["deadline"]},"type":"object"}`),
	},
	{
		Kind: KindCapitalVote, Version: 1, Supported: false, Level: "L2",
		Closing:     []Closing{OnDeadline},
		Description: "Weighted ballots paid from a per-member budget (linear or quadratic cost). Strong nodes only: witan is an eventual node and answers rule_not_supported.",
		Params:      json.RawMessage(`{"additionalProperties":false,"properties":{"budget":{"maximum":9007199254740991,"minimum":0,"type":"integer"},"closing":{"const":"on_deadline"},"cmp":{"enum":["gt","gte"]},"cost":{"enum":["linear","quadratic"]},"den":{"maximum":9007199254740991,"minimum":1,"type":"integer"},"num":{"maximum":9007199254740991,"minimum":1,"type":"integer"}},"required":["budget","cost","num","den","cmp","closing"],"type":"object"}`),
	},
}

func (k KindInfo) clone() KindInfo {
	k.Closing = slices.Clone(k.Closing)
	k.Params = slices.Clone(k.Params)
	return k
}

// Kinds returns every rule kind witan knows, sorted by name, including
// those it does not support.
func Kinds() []KindInfo {
	out := make([]KindInfo, len(kinds))
	for i, k := range kinds {
		out[i] = k.clone()
	}
	slices.SortFunc(out, func(a, b KindInfo) int {
		switch {
		case a.Kind < b.Kind:
			return -1
		case a.Kind > b.Kind:
			return 1
		}
		return 0
	})
	return out
}

// Lookup returns the registry entry of kind; ok is false for a kind witan
// does not know (rule_unknown).
func Lookup(kind string) (info KindInfo, ok bool) {
	for _, k := range kinds {
		if k.Kind == kind {
			return k.clone(), true
		}
	}
	return KindInfo{}, false
}

// SupportedKinds returns the names of the kinds this node evaluates, sorted:
// the capability document's rule_kinds.
func SupportedKinds() []string {
	var out []string
	for _, k := range Kinds() {
		if k.Supported {
			out = append(out, k.Kind)
		}
	}
	return out
}
