package harness

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// commitment is a restricted change's salted commitment (§4
// "Restricted branches"): sha256(salt ‖ change id), the id written as
// "sha256:<hex>" (witan's reading of the open point, wire-format.md).
func commitment(salt []byte, change string) string {
	return Hash(append(append([]byte(nil), salt...), change...))
}

// s7: a restricted draft is revealed, then merged. A drafter appends to
// a restricted branch (an opaque name) only the salted commitment of a
// change setting section 1 to 47 days and its size. Before the reveal no
// node serves the change (/objects 404 on every node), an MR from the
// branch is refused unrevealed_source, and a reveal with the wrong salt
// is refused commitment_mismatch. The drafter's reveal (change, salt,
// objects) is accepted; every node then serves the change, and an MR from
// the revealed branch merges by 6/10: every node's /law is the seed with
// section 1 at 47 days (the harness's own hash).
//
// Signed-challenge reads (§4: content "served only to authorized
// owner-group members (signed-challenge auth)"; the spec names no
// endpoint, so the harness drives witan's, docs/http-api.md, and reports
// the part not run when a node does not serve them): the drafter deposits
// the draft with POST /restricted; with a nonce from POST
// /restricted/challenge and a signature over "oth/0.10-draft-read\n" +
// JCS {commitment, nonce, session}, drafter 1 (owner group drafters) reads
// the change back; member 5 (not in the owner group) and a reused nonce
// get 404.
func s7(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S7"})
	r.keep(ss)
	name := "r-" + Hash([]byte(r.cfg.Seed + r.cfg.RunID + "restricted"))[7:19]
	obj := map[string]any{"name": name, "session": ss.ID, "owner": "group:drafters",
		"source": map[string]any{"branch": "root", "change": ss.Genesis}, "head": ss.Genesis, "visibility": "restricted", "protected": false,
		"merge_rule": ss.AlwaysAllow(), "governance_rule": ss.TwoThirds()}
	ss.Accept(ss.Tx(1, "branch.create", map[string]any{"branch": ObjectID(obj)}, MustCanon(obj)))
	// Text no other scenario writes: objects are content-addressed, and a
	// node may serve an identical change another session made public.
	ops, res, err := ReplaceOps(ss.Seed, Edit{"/us/t1/s1", "The period is 47 days (a restricted draft, simulated)."})
	s.must("the harness builds its change", err == nil, nil, "%v", err)
	ch := NewChange(ss.Members[2].Key, ss.Genesis, ss.Seed, res, ops, "amend")
	chBytes := MustCanon(ch.Object)
	objects := append([][]byte{chBytes}, res.Objects()...)
	size := 0
	for _, o := range objects {
		size += len(o)
	}
	salt := sha256.Sum256([]byte(fmt.Sprintf("witan harness %s run %s salt", r.cfg.Seed, r.cfg.RunID)))
	com := commitment(salt[:], ch.ID)
	ss.Accept(ss.Tx(2, "branch.append", map[string]any{"branch": name, "commitment": com, "size": size}))
	ss.Trees[ch.ID] = res
	s.converge(ss)
	for _, c := range r.clients {
		a := c.Get(r.ctx, q("/objects/"+ch.ID, ss.ID))
		s.check("before the reveal no node serves the restricted change", a.Status == http.StatusNotFound, a, "GET /objects answers %d", a.Status)
	}
	s7Read(s, ss, name, com, salt[:], ch.ID, objects)
	early, _ := ss.OpenTx(MR{Source: name, SourceHead: ch.ID, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	ss.Refuse(early, "unrevealed_source", "an MR from the unrevealed branch")
	wrong := sha256.Sum256([]byte("not the salt"))
	reveal := func(salt []byte) Tx {
		return ss.Tx(2, "branch.reveal", map[string]any{"branch": name, "changes": []any{map[string]any{
			"commitment": com, "change": ch.ID, "salt": b64.EncodeToString(salt)}}}, objects...)
	}
	ss.Refuse(reveal(wrong[:]), "commitment_mismatch", "a reveal with the wrong salt")
	ss.Accept(reveal(salt[:]))
	s.converge(ss)
	for _, c := range r.clients {
		a := c.Get(r.ctx, q("/objects/"+ch.ID, ss.ID))
		obj, _ := Field(a.JSON, "object").(map[string]any)
		s.check("after the reveal every node serves the change the commitment named", a.OK() && ObjectID(obj) == ch.ID, a, "GET /objects answers %d", a.Status)
	}
	mr := ss.Open(MR{Source: name, SourceHead: ch.ID, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	yes := ss.Vote(mr, "approve", 0, 6)
	ss.Accept(ss.DetermineTx(0, mr, yes, "approved"))
	s.converge(ss)
	for _, c := range r.clients {
		law := c.Get(r.ctx, q("/law", ss.ID))
		s.check("the revealed draft merged: every node's /law is the seed with section 1 at 47 days (hash computed by the harness)",
			Str(law.JSON, "snapshot") == res.Hash(), law, "snapshot %q want %s", Str(law.JSON, "snapshot"), res.Hash())
	}
}

// s7Read: the signed-challenge read of a restricted draft (see s7).
func s7Read(s *sc, ss *Session, branch, com string, salt []byte, change string, objects [][]byte) {
	r := s.r
	objs := make([]json.RawMessage, len(objects))
	for i, o := range objects {
		objs[i] = o
	}
	a := ss.c.PostJSON(r.ctx, "/restricted", map[string]any{"session": ss.ID, "branch": branch, "commitment": com, "salt": b64.EncodeToString(salt), "objects": objs})
	if a.Status == http.StatusNotFound || a.Status == http.StatusMethodNotAllowed {
		s.notRun("signed-challenge reads of the draft by the owner group before the reveal (the node serves no POST /restricted; the spec names no endpoint)")
		return
	}
	s.check("the drafter deposits the draft (POST /restricted)", a.OK() && Field(a.JSON, "stored") == true, a, "%d", a.Status)
	read := func(k *Signer, nonce string) *Answer {
		sig := k.Sign("oth/0.10-draft-read\n", MustCanon(map[string]any{"commitment": com, "nonce": nonce, "session": ss.ID}))
		return ss.c.Get(r.ctx, "/restricted/"+url.PathEscape(com)+"?session="+url.QueryEscape(ss.ID)+"&key="+url.QueryEscape(k.Key)+"&nonce="+url.QueryEscape(nonce)+"&sig="+url.QueryEscape(sig))
	}
	nonce := func() string {
		a := ss.c.PostJSON(r.ctx, "/restricted/challenge", map[string]any{})
		s.must("a challenge nonce (POST /restricted/challenge)", a.OK() && Str(a.JSON, "nonce") != "", a, "%d", a.Status)
		return Str(a.JSON, "nonce")
	}
	n1 := nonce()
	a = read(ss.Members[1], n1)
	s.check("a member of the owner group reads the draft with a signed challenge before the reveal", a.OK() && Str(a.JSON, "change") == change, a, "%d change %q", a.Status, Str(a.JSON, "change"))
	a = read(ss.Members[1], n1)
	s.check("a used nonce reads nothing (404)", a.Status == http.StatusNotFound, a, "%d", a.Status)
	a = read(ss.Members[5], nonce())
	s.check("a member outside the owner group reads nothing (404)", a.Status == http.StatusNotFound, a, "%d", a.Status)
}
