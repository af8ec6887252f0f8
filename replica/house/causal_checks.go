package house

// This file holds the admission checks decided from an entry's causal
// past: the reversion
// threshold of D41 fed from the MR's causal past, "published in the
// session" (D56) decided from the causal past only, the district table
// (D72) and rule texts (text_ref) checked at admission, and fiscal notice
// (D53). Every check reads only the entry and its causal past, so every
// replica admits or refuses the same entries.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// shaRefs returns the sha256 references of a body: each "sha256:"
// followed by 64 lowercase hex digits, leftmost first, not overlapping
// (what the regexp `sha256:[0-9a-f]{64}` finds, without a regexp: a
// roster's group.create is large, and a regexp scan of every governance
// body made an S11 derivation several times slower).
func shaRefs(b []byte) [][]byte {
	var out [][]byte
	eachShaRef(b, func(m []byte) { out = append(out, m) })
	return out
}

// eachShaRef calls fn with each reference shaRefs returns, in order,
// without collecting them.
func eachShaRef(b []byte, fn func(m []byte)) {
	const prefix = "sha256:"
	for {
		i := bytes.Index(b, []byte(prefix))
		if i < 0 {
			return
		}
		rest := b[i+len(prefix):]
		if len(rest) >= 64 && lowerHex(rest[:64]) {
			fn(b[i : i+len(prefix)+64])
			b = rest[64:]
			continue
		}
		b = rest
	}
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// refID is the id of a reference eachShaRef found ("sha256:" and 64
// lowercase hex digits), decoded without allocating.
func refID(m []byte) dag.ID {
	var d [sha256.Size]byte
	hex.Decode(d[:], m[len("sha256:"):]) // checked by eachShaRef
	return dag.IDFromDigest(d)
}

// namedBy returns the ids an entry's body names and, for a branch.create,
// those its branch object names (the rule texts, the source change),
// deduplicated and sorted. These are what the entry publishes in the
// session besides itself. What a change's text cites is not published by
// the change: that is the question D56 asks of it.
//
// The ids of entries already admitted are left out: publishedIn answers
// an admitted entry's id from the entry itself and never asks what names
// it, and the id index only grows. (A determination lists hundreds of
// ballots: recording each as named was most of an S11 derivation's
// allocations.)
func (h *House) namedBy(typ dag.TxType, body []byte) []dag.ID {
	var first []dag.ID
	eachShaRef(body, func(m []byte) { first = append(first, refID(m)) })
	out := first
	if h.objs != nil && typ == dag.TxBranchCreate {
		out = slices.Clone(first)
		for _, id := range first {
			b, err := h.objs.Object(context.Background(), id)
			if err != nil || len(b) == 0 || b[0] != '{' {
				continue
			}
			eachShaRef(b, func(m []byte) { out = append(out, refID(m)) })
		}
	}
	out = slices.DeleteFunc(out, func(id dag.ID) bool {
		_, admitted := h.idx.get(id, h.ents)
		return admitted
	})
	slices.SortFunc(out, dag.ID.Compare)
	return slices.Compact(out)
}

// recordNamed notes what governance entry ei (already in h.ents) names.
// det is the admitted determination when the entry is an mr.determine:
// its canonical body names only its MR and the ballots it lists (mr,
// ballots and a fixed outcome word; strict decoding refuses any other
// member), and admission has found every listed ballot admitted, so
// what it names is its MR alone unless that is an admitted entry's id.
// Scanning the hundreds of ballot ids a determination lists only to drop
// them again was a tenth of an S11 derivation (TestDeterminationNamesItsMR
// holds the shortcut to the scan).
func (h *House) recordNamed(ei int32, typ dag.TxType, body []byte, det *Determination) {
	var ids []dag.ID
	if det != nil {
		if _, admitted := h.idx.get(det.MR, h.ents); !admitted {
			ids = []dag.ID{det.MR}
		}
	} else {
		ids = h.namedBy(typ, body)
	}
	if len(ids) == 0 {
		return
	}
	if h.named == nil {
		h.named = map[dag.ID][]int32{}
	}
	for _, id := range ids {
		h.named[id] = append(h.named[id], ei)
	}
}

// publishedIn reports whether ref is published in the session as seen
// from an entry with the given parents and governance state st (D56):
// the tx id of an entry in its causal past, the id of an MR opened in its
// causal past, or an object that a governance entry of its causal past
// names (a rule text, a group, branch or change object, the seed, the
// district table). What the replica's store happens to hold plays no
// part. It takes no *admission so that the closure publishedRecorder
// returns does not move each entry's admission record to the heap (one
// ~0.5 KB allocation per envelope, S11 derivation).
func publishedIn(h *House, st *govState, parents []int32, ref dag.ID) bool {
	if i, ok := h.idx.get(ref, h.ents); ok {
		return len(h.ancestorsMissing(parents, []int32{i})) == 0
	}
	if st.mrs[ref] != nil {
		return true
	}
	for _, ei := range h.named[ref] {
		if len(h.ancestorsMissing(parents, []int32{ei})) == 0 {
			return true
		}
	}
	return false
}

// publishedRecorder wraps publishedIn and records every answer in info, so
// that /checks later answers exactly what admission decided.
func (v *admission) publishedRecorder(info *mrInfo) func(dag.ID) bool {
	h, st, parents := v.h, v.st, v.parents
	return func(ref dag.ID) bool {
		if info.published == nil {
			info.published = map[dag.ID]bool{}
		}
		ok, seen := info.published[ref]
		if !seen {
			ok = publishedIn(h, st, parents, ref)
			info.published[ref] = ok
		}
		return ok
	}
}

// mergeOpen folds a concurrent open of the same MR body (fresh, judged in
// its own causal past) into the MR already admitted (old): a reference is
// published only when every open's causal past publishes it, as the
// electorate of concurrent opens is what every open agrees on. The
// structure check is run again when that changes anything, so the MR's
// state is a function of the set of its opens, not of their order.
func (v *admission) mergeOpen(old, fresh *mrInfo) {
	if old.patch == nil || fresh.published == nil {
		return
	}
	changed := false
	for ref, ok := range fresh.published {
		if !ok && old.published[ref] {
			old.published[ref] = false
			changed = true
		}
	}
	if !changed {
		return
	}
	h := v.h
	env := v.env0(h.body, h.profile)
	env.MR, env.Fiscal, env.Effective = old.id, old.body.Fiscal, old.body.Effective
	pub := old.published
	env.Published = func(ref dag.ID) bool { return pub[ref] }
	old.checks = statute.Structure(old.patch.Result, env)
	old.facts.StructureFailed = len(old.checks) > 0
}

// Published returns, for merge MR mr, whether each sha256 reference in
// its merged text was published in the session in the causal past of its
// open, as admission decided it. Pass it as statute.Env.Published so
// that /checks agrees with admission. It answers false for any other
// reference, and is nil for an MR this House never admitted.
func (h *House) Published(mr dag.ID) func(dag.ID) bool {
	info := h.mrs[mr]
	if info == nil {
		return nil
	}
	pub := maps.Clone(info.published)
	return func(ref dag.ID) bool { return pub[ref] }
}

// RuleFacts returns the facts merge MR mr is evaluated with (whether it
// reverts text, D41; whether structure fails), as decided at its open.
func (h *House) RuleFacts(mr dag.ID) (rules.Facts, bool) {
	info := h.mrs[mr]
	if info == nil {
		return rules.Facts{}, false
	}
	return info.facts, true
}

// revertFacts sets info.facts.Reverts (D41) for a merge MR into the root:
// whether a node of its patch gets back a node_hash that the same nid had
// at an earlier root head, other than the current one. The earlier root
// heads are those of the MR's causal past (the genesis change and the
// merges into the root executed there, up to the MR's target head), so
// the answer is the same on every replica. The fact sheet's reverts list
// (/facts) is computed from the same heads.
func (v *admission) revertFacts(info *mrInfo, m *MR) error {
	if m.Target.Branch != RootBranch || info.patch == nil {
		return nil
	}
	h := v.h
	hist, ok := v.rootHistory(m.Target.Head)
	if !ok {
		return nil
	}
	target, err := h.tree(m.Target.Head)
	if err != nil {
		return err
	}
	fs, err := statute.Facts(statute.ReviewOf(target, info.patch), statute.Env{MR: info.id, Profile: h.profile}, statute.FactInputs{History: hist})
	if err != nil {
		return nil // the ops do not apply: structure already fails
	}
	info.facts.Reverts = len(fs.Reverts) > 0
	return nil
}

// rootHistory records the root heads of the admission's causal past, from
// the genesis change up to head.
func (v *admission) rootHistory(head dag.ID) (*statute.RootHistory, bool) {
	h := v.h
	hist := statute.NewRootHistory()
	cur := h.genesis
	t, err := h.tree(cur)
	if err != nil {
		return nil, false
	}
	hist.Add(cur, t)
	for _, m := range v.st.rootMerges {
		if cur == head {
			break
		}
		cur = m.Change
		if t, err = h.tree(cur); err != nil {
			return nil, false
		}
		hist.Add(cur, t)
	}
	return hist, cur == head
}

// checkRuleTexts refuses a rule whose text_ref names no object the
// envelope or the store carries (30k §5: every sha256 reference must be
// resolvable; §7: each kind has a statute-ready text). The text is
// served from /objects/{id}.
func (h *House) checkRuleTexts(refs ...*rules.Ref) error {
	for _, r := range refs {
		if r == nil {
			continue
		}
		if _, err := h.object(r.TextRef, "rule text"); err != nil {
			return err
		}
	}
	return nil
}

// checkDistricts refuses, at admission, a session.create whose district
// table (D72) is missing, malformed or uses an attribute other than
// region and density (district_attribute_invalid).
func (h *House) checkDistricts(s *SessionBody) error {
	if !s.Districts.Valid() {
		return nil
	}
	raw, err := h.object(s.Districts, "district table")
	if err != nil {
		return err
	}
	_, err = DecodeDistricts(raw)
	return err
}

// checkFiscal is D53's fiscal notice on an eventual node: an approving
// determination of an MR with fiscal: true is refused (estimate_missing)
// unless an accepted opinion with an estimate on the MR is in its causal
// past. It reads only the MR and the determination's causal past, so it
// is a causal refusal every replica makes alike. This House accepts no
// opinions yet (L2), so every such approval is refused; rejections need
// no notice (§7) and are never refused here.
func (v *admission) checkFiscal(info *mrInfo, d *Determination) error {
	if !info.body.Fiscal || d.Outcome != rules.Approved {
		return nil
	}
	if v.h.estimateInPast != nil && v.h.estimateInPast(info.id, v.parents) {
		return nil
	}
	return &dag.ProtocolError{Code: dag.CodeEstimateMissing, Detail: fmt.Sprintf("house: fiscal MR %s has no accepted estimate in the determination's causal past (D53)", info.id)}
}

// Districts is a decoded district attribute table (D72), witan's format
// (docs/deviations.md): the canonical JSON object
//
//	{"attributes":{"density":["rural","urban"],"region":["north","south"]},
//	 "members":{"ed25519:…":{"density":"urban","region":"north"}, …}}
type Districts struct {
	// Values are the declared values of each attribute, in declared order.
	Values map[string][]string
	// Members maps a member to its value of each attribute.
	Members map[dag.Key]map[string]string
}

// The attributes D72 allows: any other is district_attribute_invalid.
const (
	AttrRegion  = "region"
	AttrDensity = "density"
)

// MaxDistrictValues bounds the values one attribute may declare.
const MaxDistrictValues = 1000

func districtErr(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeDistrictAttributeInvalid, Detail: fmt.Sprintf("districts: "+format, args...)}
}

func truncStr(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// DecodeDistricts decodes and checks a district attribute table. Bytes
// that are not canonical JSON of the table's shape are schema; an
// attribute other than region and density, a member without both, or a
// value not declared is district_attribute_invalid.
func DecodeDistricts(b []byte) (*Districts, error) {
	if !dag.IsCanonical(b) {
		if _, err := dag.Canonicalize(b); err != nil {
			return nil, err
		}
		return nil, dag.Errorf(dag.CodeSchema, "districts: the table is not in canonical form")
	}
	var w struct {
		Attributes map[string][]string          `json:"attributes"`
		Members    map[string]map[string]string `json:"members"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, dag.Errorf(dag.CodeSchema, "districts: %v", err)
	}
	if w.Attributes == nil || w.Members == nil {
		return nil, dag.Errorf(dag.CodeSchema, "districts: attributes and members are required")
	}
	d := &Districts{Values: map[string][]string{}, Members: make(map[dag.Key]map[string]string, len(w.Members))}
	for _, a := range slices.Sorted(maps.Keys(w.Attributes)) {
		if a != AttrRegion && a != AttrDensity {
			return nil, districtErr("attribute %q is not region or density (D72)", truncStr(a))
		}
		vs := w.Attributes[a]
		if len(vs) == 0 || len(vs) > MaxDistrictValues {
			return nil, districtErr("%s declares %d values, want 1 to %d", a, len(vs), MaxDistrictValues)
		}
		seen := make(map[string]bool, len(vs))
		for _, v := range vs {
			if v == "" || seen[v] {
				return nil, districtErr("%s values must be non-empty and distinct", a)
			}
			seen[v] = true
		}
		d.Values[a] = vs
	}
	if len(d.Values) != 2 {
		return nil, districtErr("the table must declare both region and density")
	}
	for _, ks := range slices.Sorted(maps.Keys(w.Members)) {
		k, err := dag.ParseKey(ks)
		if err != nil {
			return nil, err
		}
		m := w.Members[ks]
		if len(m) != 2 {
			return nil, districtErr("member %s must have exactly a region and a density", ks)
		}
		for _, a := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(d.Values[a], m[a]) {
				return nil, districtErr("member %s: %s %q is not declared", ks, truncStr(a), truncStr(m[a]))
			}
		}
		d.Members[k] = m
	}
	return d, nil
}
