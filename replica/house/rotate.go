package house

// This file is key rotation (30k §4 "Keys", D62; open points 13 and 15 of
// 30K-OPEN-POINTS.md, decided in docs/deviations.md): key.rotate, signed by
// the member's new key with a registrar admin's co-signature in the body,
// and its effect on ballots (§7 ballot validity (a)).
//
// compromised_after is read as a causal cut: the id of an entry in the
// rotation's causal past. A ballot signed by a rotated key is ignored (not
// counted, not equivocation) when the rotation is in the ballot's causal
// past (the key is no longer current there), or when compromised_after is
// set and the ballot is not in that entry's causal past (it may be the
// thief's). Both are facts of the DAG, so every replica holding the same
// entries ignores the same ballots whatever order they arrived in.

import (
	"encoding/base64"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/rules"
)

// DomainCosig is the signing domain of a key.rotate co-signature: the
// registrar admin signs DomainCosig followed by the JCS of the body
// without its "cosig" member (docs/wire-format.md, provisional).
const DomainCosig = "oth/0.10-cosig\n"

// KeyRotate is a key.rotate body.
type KeyRotate struct {
	Member dag.Key
	New    dag.Key
	// CompromisedAfter is the id of the entry whose causal past holds the
	// last ballots the old key may still count for; zero when null.
	CompromisedAfter dag.ID
	Cosig            Cosig
}

// Cosig is the registrar admin's co-signature of a key.rotate body.
type Cosig struct {
	Key dag.Key
	Sig []byte
}

func rotationInvalid(format string, args ...any) error {
	return dag.Errorf(dag.CodeRotationInvalid, "house: "+format, args...)
}

// DecodeKeyRotate decodes a key.rotate body {member, new,
// compromised_after, cosig}. A missing or malformed cosig is
// rotation_invalid; anything else malformed is schema.
func DecodeKeyRotate(b []byte) (*KeyRotate, error) {
	var w struct {
		Member           *string `json:"member"`
		New              *string `json:"new"`
		CompromisedAfter *string `json:"compromised_after"`
		Cosig            *struct {
			Key *string `json:"key"`
			Sig *string `json:"sig"`
		} `json:"cosig"`
	}
	if err := strict(b, &w, "key.rotate"); err != nil {
		return nil, err
	}
	if w.Member == nil || w.New == nil {
		return nil, schemaf("key.rotate: member and new are required")
	}
	r := &KeyRotate{}
	var err error
	if r.Member, err = dag.ParseKey(*w.Member); err != nil {
		return nil, schemaf("key.rotate: member: %v", err)
	}
	if r.New, err = dag.ParseKey(*w.New); err != nil {
		return nil, schemaf("key.rotate: new: %v", err)
	}
	if r.New.SmallOrder() {
		return nil, schemaf("key.rotate: new: %s is a small-order point: anyone can forge its signatures", r.New)
	}
	if w.CompromisedAfter != nil {
		if r.CompromisedAfter, err = dag.ParseID(*w.CompromisedAfter); err != nil {
			return nil, schemaf("key.rotate: compromised_after: %v", err)
		}
	}
	if w.Cosig == nil {
		return nil, rotationInvalid("key.rotate needs a registrar admin's cosig")
	}
	c := w.Cosig
	if c.Key == nil || c.Sig == nil {
		return nil, rotationInvalid("key.rotate: cosig must be {\"key\":\"ed25519:…\",\"sig\":\"…\"}")
	}
	if r.Cosig.Key, err = dag.ParseKey(*c.Key); err != nil {
		return nil, rotationInvalid("key.rotate: cosig key: %v", err)
	}
	if r.Cosig.Sig, err = base64.RawURLEncoding.Strict().DecodeString(*c.Sig); err != nil || len(r.Cosig.Sig) != 64 {
		return nil, rotationInvalid("key.rotate: cosig sig is not 64 bytes of base64url without padding")
	}
	return r, nil
}

// CosigBytes returns what a key.rotate co-signature signs after
// DomainCosig: the JCS of the body without "cosig".
func (r *KeyRotate) CosigBytes() []byte {
	m := map[string]any{"member": r.Member.String(), "new": r.New.String(), "compromised_after": nil}
	if r.CompromisedAfter.Valid() {
		m["compromised_after"] = r.CompromisedAfter.String()
	}
	b, err := dag.Marshal(m)
	if err != nil {
		panic(err) // strings and null always marshal
	}
	return b
}

// rotRec is an admitted key.rotate.
type rotRec struct {
	gov    int32 // governance index
	member dag.Key
	new    dag.Key
	after  int32 // entry index of compromised_after, or -1
}

// rotAdm is what admission keeps of a key.rotate: the admission hook.
type rotAdm struct {
	rot *rotRec
}

func (v *admission) keyRotate() error {
	r, err := DecodeKeyRotate(v.env.Body)
	if err != nil {
		return err
	}
	h := v.h
	if v.env.Author != r.New {
		return rotationInvalid("key.rotate must be signed by the member's new key %s, not %s", r.New, v.env.Author)
	}
	if r.Member == r.New {
		return rotationInvalid("key.rotate: the new key is the member's key")
	}
	if r.Cosig.Key == r.New {
		return rotationInvalid("key.rotate: the registrar alone cannot rotate a member's key (the cosig is by the new key)")
	}
	if !dag.Verify(r.Cosig.Key, DomainCosig, r.CosigBytes(), r.Cosig.Sig) {
		return rotationInvalid("key.rotate: the cosig by %s does not verify", r.Cosig.Key)
	}
	reg := v.st.group(h.body.Registrar)
	if reg == nil || !reg.isAdmin(r.Cosig.Key) {
		return rotationInvalid("key.rotate: %s is not an admin of the registrar group %q in the causal past", r.Cosig.Key, h.body.Registrar)
	}
	front := h.pastFrontier(v.parents)
	for _, o := range h.rots {
		if !h.govInPast(o.gov, front) {
			continue
		}
		if o.member == r.Member {
			return rotationInvalid("key.rotate: %s was already rotated in the causal past", r.Member)
		}
		if o.new == r.New || o.member == r.New {
			return rotationInvalid("key.rotate: %s is already a member's key in the causal past", r.New)
		}
	}
	for _, id := range sortedKeys(v.st.groups) {
		if g := v.st.group(id); g != nil && g.isMember(r.New) {
			return rotationInvalid("key.rotate: %s is already a member of group %q", r.New, id)
		}
	}
	after := int32(-1)
	if r.CompromisedAfter.Valid() {
		ei, ok := h.idx.get(r.CompromisedAfter, h.ents)
		if !ok || len(h.ancestorsMissing(v.parents, []int32{ei})) > 0 {
			return rotationInvalid("key.rotate: compromised_after %s is not in the rotation's causal past", r.CompromisedAfter)
		}
		after = ei
	}
	v.rot = &rotRec{member: r.Member, new: r.New, after: after}
	return nil
}

// govInPast reports whether governance entry g is in the causal past whose
// frontier is front.
func (h *House) govInPast(g, front int32) bool {
	for _, f := range h.fronts[front] {
		if h.govAncestor(g, f) {
			return true
		}
	}
	return false
}

// commitRotate records an admitted rotation and ignores the ballots it
// makes invalid that were admitted before it, refolding their polls.
func (v *admission) commitRotate(g int32) {
	h := v.h
	r := *v.rot
	r.gov = g
	h.rots = append(h.rots, r)
	var refold []dag.ID
	for i := range h.ballots {
		b := &h.ballots[i]
		if b.rotIgnored || h.signer(int32(i)) != r.member || !h.rotIgnores(&r, b.ent) {
			continue
		}
		b.rotIgnored = true
		h.counts.IgnoredBallots++
		if !slices.Contains(refold, b.body.MR) {
			refold = append(refold, b.body.MR)
		}
	}
	for _, mr := range refold {
		if info := h.mrs[mr]; info != nil {
			h.refoldPoll(info)
		}
	}
}

// rotIgnores reports whether rotation r makes the ballot at entry ent,
// signed by r.member, invalid: r is in its causal past, or r names a
// compromise and the ballot is not in compromised_after's causal past.
func (h *House) rotIgnores(r *rotRec, ent int32) bool {
	if h.govInPast(r.gov, h.ents[ent].front) {
		return true
	}
	if r.after < 0 {
		return false
	}
	if r.after == ent {
		return false
	}
	e := &h.ents[r.after]
	return len(h.ancestorsMissing(h.par[e.pOff:e.pOff+e.pLen], []int32{ent})) > 0
}

// signer is the key that signed ballot i: its author unless it was cast
// with a rotated-in key.
func (h *House) signer(i int32) dag.Key {
	if k, ok := h.signers[i]; ok {
		return k
	}
	return h.ballots[i].author
}

// ballotMember maps a ballot's signing key to the electorate member it
// votes for (§7 (a)): the key itself, or the member a rotation in the
// ballot's causal past rotated to it (following rotations of rotated-in
// keys). It also reports whether the ballot is ignored for a rotation of
// its signing key known now (its entry is not admitted yet, so it is in
// no compromised_after's causal past).
func (v *admission) ballotMember(signer dag.Key, el *rules.Electorate) (member dag.Key, ignored bool) {
	h := v.h
	member = signer
	if len(h.rots) == 0 {
		return member, false
	}
	front := h.pastFrontier(v.parents)
	for _, r := range h.rots {
		if r.member == signer && (r.after >= 0 || h.govInPast(r.gov, front)) {
			ignored = true
		}
	}
	for n := 0; !el.Has(member) && n < len(h.rots); n++ {
		found := false
		for _, r := range h.rots {
			if r.new == member && h.govInPast(r.gov, front) {
				member, found = r.member, true
				break
			}
		}
		if !found {
			break
		}
	}
	return member, ignored
}

// RotationView is one admitted key rotation as derived.
type RotationView struct {
	Tx               dag.ID  `json:"tx"`
	Member           dag.Key `json:"member"`
	New              dag.Key `json:"new"`
	CompromisedAfter *dag.ID `json:"compromised_after"`
}

// rotationViews lists the admitted rotations by tx id, and sets each
// group's current keys (its members with rotated keys replaced).
func (h *House) rotationViews(s *State) {
	if len(h.rots) == 0 {
		return
	}
	cur := make(map[dag.Key][]dag.Key)
	for _, r := range h.rots {
		v := RotationView{Tx: h.ents[h.gov[r.gov]].id, Member: r.member, New: r.new}
		if r.after >= 0 {
			id := h.ents[r.after].id
			v.CompromisedAfter = &id
		}
		s.Rotations = append(s.Rotations, v)
		cur[r.member] = append(cur[r.member], r.new)
	}
	slices.SortFunc(s.Rotations, func(a, b RotationView) int { return a.Tx.Compare(b.Tx) })
	for i := range s.Groups {
		g := &s.Groups[i]
		var keys []dag.Key
		for _, m := range g.Members {
			keys = append(keys, h.currentKeys(cur, m, 0)...)
		}
		slices.SortFunc(keys, dag.Key.Compare)
		g.Current = slices.Compact(keys)
	}
}

// currentKeys follows rotations from key k to the keys that are current.
func (h *House) currentKeys(cur map[dag.Key][]dag.Key, k dag.Key, depth int) []dag.Key {
	next, ok := cur[k]
	if !ok || depth > len(h.rots) {
		return []dag.Key{k}
	}
	var out []dag.Key
	for _, n := range next {
		out = append(out, h.currentKeys(cur, n, depth+1)...)
	}
	return out
}

// detFront is the governance frontier of the causal past of the entry
// being judged, or -1 when the session has no rotation (nothing to look up).
func (v *admission) detFront() int32 {
	if len(v.h.rots) == 0 {
		return -1
	}
	return v.h.pastFrontier(v.parents)
}

// rotIgnoredAt reports whether ballot i is invalid by §7 (a) for an entry
// whose causal past has frontier front (from detFront): a rotation of its
// signing key in that past ignores it. Only rotations in that past count,
// so a determination is judged alike on every replica.
func (h *House) rotIgnoredAt(front int32, i int32) bool {
	if front < 0 || !h.ballots[i].rotIgnored {
		return false // no rotation admitted anywhere ignores it
	}
	k := h.signer(i)
	for j := range h.rots {
		r := &h.rots[j]
		if r.member == k && h.govInPast(r.gov, front) && h.rotIgnores(r, h.ballots[i].ent) {
			return true
		}
	}
	return false
}

// opinionIgnored reports whether opinion record ri is ignored (D62): a
// rotation of its signing key in the session makes it invalid by the
// rule ballots follow (rotIgnores: the rotation is in its causal past,
// or compromised_after is set and it is not in that entry's causal
// past). Judged over every admitted rotation when read, so every replica
// holding the same entries ignores the same opinions whatever order they
// arrived in; the opinion stays admitted.
func (h *House) opinionIgnored(ri int32) bool {
	rec := h.ops.recs.at(ri)
	for j := range h.rots {
		if r := &h.rots[j]; r.member == rec.author && h.rotIgnores(r, rec.ent) {
			return true
		}
	}
	return false
}

// stakesCounted is Stakes when member's latest declaration on subject is
// in an ignored opinion: the latest declaration among the member's
// opinions that are not ignored (decoded again: rare).
func (h *House) stakesCounted(member dag.Key, subject dag.ID) ([]opinion.Stake, dag.ID, bool) {
	x := h.ops.byAuthor[member]
	if x == nil {
		return nil, dag.ID{}, false
	}
	best := int32(-1)
	var stakes []opinion.Stake
	for _, ri := range x.recs {
		rec := h.ops.recs.at(ri)
		if !rec.member || h.opinionIgnored(ri) || (best >= 0 && !later(rec, h.ops.recs.at(best))) {
			continue
		}
		o, err := opinion.DecodeCanonical(rec.body)
		if err != nil || o.Disclosure == nil {
			continue
		}
		var on []opinion.Stake
		for _, s := range o.Disclosure.Stakes {
			if s.Subject == subject {
				on = append(on, s)
			}
		}
		if len(on) > 0 {
			best, stakes = ri, on
		}
	}
	if best < 0 {
		return nil, dag.ID{}, false
	}
	return stakes, h.ops.recs.at(best).id, true
}
