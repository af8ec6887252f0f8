package harness

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// RuleText is the plain-language text every harness rule names
// (text_ref): a plain-text object named by the hash of its bytes.
var RuleText = []byte("Synthetic rule text of the witan conformance harness (simulation only).")

// Session is a session the harness drives: its synthetic roster, the
// trees of the changes it made, and the parents of its next envelope.
type Session struct {
	s       *sc
	ID      string
	Members []*Signer
	Seed    *Node
	Genesis string
	Trees   map[string]*Node // change id → result
	Last    []string         // parents of the next envelope
	Create  Tx
	TextRef string
	c       *Client
	mu      chanMutex
	// LastReceipt is the receipt of the last transaction Accept took.
	LastReceipt map[string]any
}

type chanMutex chan struct{}

func (m chanMutex) lock()   { m <- struct{}{} }
func (m chanMutex) unlock() { <-m }

// member is the i-th member's key, derived from the seed and the run id.
func (r *run) member(i int) *Signer {
	return NewSigner(fmt.Sprintf("witan harness %s run %s member %d", r.cfg.Seed, r.cfg.RunID, i))
}

// Rule references (30k §4 "Rule reference").
func (ss *Session) ref(kind string, params map[string]any, minNotice any) map[string]any {
	return map[string]any{"kind": kind, "version": 1, "params": params, "min_notice": minNotice, "text_ref": ss.TextRef}
}

func textRef() string { return Hash(RuleText) }

func majorityParams() map[string]any {
	return map[string]any{"num": 1, "den": 2, "cmp": "gt", "basis": "electorate", "quorum_num": 1, "quorum_den": 2, "closing": "on_threshold"}
}

// Majority is threshold_vote: more than half of the electorate, quorum
// 1/2, on_threshold.
func (ss *Session) Majority(minNotice any) map[string]any {
	return ss.ref("threshold_vote", majorityParams(), minNotice)
}

// TwoThirds is the entrenched root governance rule (D38).
func (ss *Session) TwoThirds() map[string]any {
	return ss.ref("threshold_vote", map[string]any{"num": 2, "den": 3, "cmp": "gte", "basis": "electorate", "quorum_num": 1, "quorum_den": 2, "closing": "on_threshold"}, nil)
}

// AlwaysAllow is always_allow.
func (ss *Session) AlwaysAllow() map[string]any { return ss.ref("always_allow", map[string]any{}, nil) }

// Approvers is designated_approvers.
func (ss *Session) Approvers(group string, required int) map[string]any {
	return ss.ref("designated_approvers", map[string]any{"approvers": "group:" + group, "required": required}, nil)
}

// RootNotice is the D42 floor on the root's merge rule.
const RootNotice = 259200

// SessionOpts shapes a new session.
type SessionOpts struct {
	Label    string
	Roster   int
	Sections int
	RootRule map[string]any
	// Extra members of the session.create body (observers, districts...).
	Extra  map[string]any
	Attach [][]byte
	// KeySpace, when set, gives the session a roster of its own keys
	// (S8 spends its members' opinion budgets; other scenarios must not
	// find them spent).
	KeySpace string
}

// newSession creates a session on the first node: the session.create
// with the seed's node objects and the rule text attached, then the
// groups roster (members 0..n-1, admin 0), registrar (member 0) and
// drafters (members 1, 2; admin 1). It reads the root's head and checks
// that it is a change whose result is the seed the harness hashed.
func (s *sc) newSession(o SessionOpts) *Session {
	r := s.r
	if o.Roster == 0 {
		o.Roster = r.cfg.Roster
	}
	if o.Sections == 0 {
		o.Sections = 3
	}
	ss := &Session{s: s, Seed: SeedStatute(o.Sections), Trees: map[string]*Node{}, TextRef: textRef(), c: r.clients[0], mu: make(chanMutex, 1)}
	ss.Members = make([]*Signer, o.Roster)
	for i := range ss.Members {
		ss.Members[i] = r.member(i)
		if o.KeySpace != "" {
			ss.Members[i] = NewSigner(fmt.Sprintf("witan harness %s run %s %s member %d", r.cfg.Seed, r.cfg.RunID, o.KeySpace, i))
		}
	}
	if o.RootRule == nil {
		o.RootRule = ss.Majority(RootNotice)
	}
	body := map[string]any{"label": fmt.Sprintf("witan harness %s run %s %s (simulated)", r.cfg.Seed, r.cfg.RunID, o.Label), "seed": ss.Seed.Hash(),
		"simulation": true, "education": false, "registrar": "group:registrar", "profile": "uslm-1", "roster": "group:roster",
		"root_rule": o.RootRule, "root_governance_rule": ss.TwoThirds()}
	for k, v := range o.Extra {
		body[k] = v
	}
	attach := append(ss.Seed.Objects(), RuleText)
	attach = append(attach, o.Attach...)
	ss.ID = ObjectID(body)
	ss.Create = Seal(ss.Members[0], "session.create", ss.ID, []string{}, body, r.ts(), attach...)
	ss.Accept(ss.Create)
	keys := func(from, to int) []string {
		out := []string{}
		for i := from; i < to; i++ {
			out = append(out, ss.Members[i].Key)
		}
		return out
	}
	ss.Accept(ss.Tx(0, "group.create", map[string]any{"id": "roster", "members": keys(0, o.Roster), "admins": keys(0, 1)}))
	ss.Accept(ss.Tx(0, "group.create", map[string]any{"id": "registrar", "members": keys(0, 1), "admins": keys(0, 1)}))
	ss.Accept(ss.Tx(1, "group.create", map[string]any{"id": "drafters", "members": keys(1, 3), "admins": keys(1, 2)}))
	a := ss.c.Get(r.ctx, q("/branches/root", ss.ID))
	ss.Genesis = Str(a.JSON, "branch", "heads", 0)
	s.must("the root branch has a head", a.OK() && ss.Genesis != "", a, "no head")
	ob := ss.c.Get(r.ctx, q("/objects/"+ss.Genesis, ss.ID))
	obj, _ := Field(ob.JSON, "object").(map[string]any)
	s.must("the root's first head is a change whose result is the seed snapshot the harness hashed",
		ob.OK() && obj != nil && ObjectID(obj) == ss.Genesis && Str(obj, "result") == ss.Seed.Hash(), ob,
		"object %v, want a change with id %s and result %s", obj, ss.Genesis, ss.Seed.Hash())
	ss.Trees[ss.Genesis] = ss.Seed
	return ss
}

// Tx seals an envelope by member i with the session's last entries as
// parents.
func (ss *Session) Tx(i int, typ string, body any, attach ...[]byte) Tx {
	return ss.TxBy(ss.Members[i], typ, body, attach...)
}

// TxBy seals an envelope by any signer.
func (ss *Session) TxBy(k *Signer, typ string, body any, attach ...[]byte) Tx {
	ss.mu.lock()
	parents := append([]string(nil), ss.Last...)
	ss.mu.unlock()
	return Seal(k, typ, ss.ID, parents, body, ss.s.r.ts(), attach...)
}

// TxOn seals an envelope with explicit parents.
func (ss *Session) TxOn(i int, parents []string, typ string, body any, attach ...[]byte) Tx {
	return Seal(ss.Members[i], typ, ss.ID, parents, body, ss.s.r.ts(), attach...)
}

// submitTo posts tx to c and checks the answer: accepted with a signed
// receipt for the id the harness computed.
func (ss *Session) submitTo(c *Client, tx Tx) (*Answer, bool) {
	a := c.Submit(ss.s.r.ctx, tx)
	rc, _ := Field(a.JSON, "receipt").(map[string]any)
	ok := a.Status == http.StatusOK && rc != nil && Str(rc, "status") == "accepted" && Str(rc, "tx") == tx.ID && VerifySigned(rc, ReceiptDomain, "node")
	return a, ok
}

// Accept submits tx to the first node and ends the entry unless it is
// accepted; it becomes the parent of the next envelope.
func (ss *Session) Accept(tx Tx) string {
	return ss.AcceptOn(ss.c, tx)
}

// AcceptOn is Accept on node c.
func (ss *Session) AcceptOn(c *Client, tx Tx) string {
	a, ok := ss.submitTo(c, tx)
	ss.s.must(tx.Type+" accepted with a signed receipt for the id the harness computed", ok, a,
		"%s %s", tx.Type, tx.ID)
	ss.mu.lock()
	ss.Last = []string{tx.ID}
	ss.LastReceipt, _ = Field(a.JSON, "receipt").(map[string]any)
	ss.mu.unlock()
	return tx.ID
}

// AcceptQuiet submits tx without moving Last and without recording a
// passed check (bulk ballots); it reports failure as a check.
func (ss *Session) AcceptQuiet(c *Client, tx Tx) bool {
	a, ok := ss.submitTo(c, tx)
	if !ok {
		ss.s.check(tx.Type+" accepted with a signed receipt", false, a, "%s %s", tx.Type, tx.ID)
	}
	return ok
}

// Refuse submits tx and checks that it is refused: problem+json with
// code (any code when code is ""), a signed rejection receipt for the
// id, and nothing stored (/objects/{id} is 404). It returns the code.
func (ss *Session) Refuse(tx Tx, code string, what string) string {
	r := ss.s.r
	a := ss.c.Submit(r.ctx, tx)
	got := Str(a.JSON, "code")
	rc, _ := Field(a.JSON, "receipt").(map[string]any)
	ok := a.Status >= 400 && strings.HasPrefix(a.Type, "application/problem+json") && (code == "" || got == code) &&
		rc != nil && Str(rc, "status") == "rejected" && Str(rc, "tx") == tx.ID && VerifySigned(rc, ReceiptDomain, "node")
	want := code
	if want == "" {
		want = "any code"
	}
	ss.s.check(what+": refused "+want+" with a signed rejection receipt", ok, a, "got %d %q", a.Status, got)
	if ok {
		o := ss.c.Get(r.ctx, q("/objects/"+tx.ID, ss.ID))
		ss.s.check(what+": the refused transaction is not stored", o.Status == http.StatusNotFound, o, "GET /objects/%s answers %d", tx.ID, o.Status)
	}
	return got
}

// Branch creates an unprotected branch owned by drafters, forked from
// from at change at, with merge rule merge and governance rule 2/3.
func (ss *Session) Branch(name, from, at string, merge map[string]any) string {
	obj := map[string]any{"name": name, "session": ss.ID, "owner": "group:drafters",
		"source": map[string]any{"branch": from, "change": at}, "head": at, "visibility": "public", "protected": false,
		"merge_rule": merge, "governance_rule": ss.TwoThirds()}
	id := ObjectID(obj)
	ss.Accept(ss.Tx(1, "branch.create", map[string]any{"branch": id}, MustCanon(obj)))
	ss.Trees[at] = ss.tree(at)
	return id
}

// tree returns the result of change id as the harness knows it.
func (ss *Session) tree(id string) *Node {
	t := ss.Trees[id]
	if t == nil {
		ss.s.must("the harness knows the change it builds on", false, nil, "unknown change %s", id)
	}
	return t
}

// AmendTx builds a branch.append by drafter 2 on branch at parent.
func (ss *Session) AmendTx(author int, branch, parent string, edits ...Edit) (Tx, Change) {
	base := ss.tree(parent)
	ops, res, err := ReplaceOps(base, edits...)
	if err != nil {
		ss.s.must("the harness builds its change", false, nil, "%v", err)
	}
	ch := NewChange(ss.Members[author].Key, parent, base, res, ops, "amend")
	attach := append([][]byte{MustCanon(ch.Object)}, res.Objects()...)
	tx := ss.Tx(author, "branch.append", map[string]any{"branch": branch, "change": ch.ID}, attach...)
	return tx, ch
}

// Amend appends a change on branch and returns its id.
func (ss *Session) Amend(branch, parent string, edits ...Edit) string {
	tx, ch := ss.AmendTx(2, branch, parent, edits...)
	ss.Accept(tx)
	ss.Trees[ch.ID] = ch.Result
	return ch.ID
}

// MR is a merge request's body (30k §4 "MergeRequest").
type MR struct {
	Kind        string // merge (default) or governance
	Source      string
	SourceHead  string
	Target      string // default root
	TargetHead  string
	Group       string // default roster
	Electorate  []string
	Rule        map[string]any
	Summary     string
	Supersedes  string
	Set         map[string]any
	Resolutions []any
}

// electorateSnapshot is sha256 of the canonical JSON array of the sorted
// member ids.
func electorateSnapshot(keys []string) string {
	s := append([]string(nil), keys...)
	sort.Strings(s)
	return ObjectID(s)
}

// Body returns the MR's body; its id is ObjectID(body).
func (ss *Session) Body(m MR) map[string]any {
	if m.Kind == "" {
		m.Kind = "merge"
	}
	if m.Target == "" {
		m.Target = "root"
	}
	if m.Group == "" {
		m.Group = "roster"
	}
	if m.Electorate == nil {
		for _, k := range ss.Members {
			m.Electorate = append(m.Electorate, k.Key)
		}
	}
	var sup any
	if m.Supersedes != "" {
		sup = m.Supersedes
	}
	body := map[string]any{"kind": m.Kind, "session": ss.ID, "target": map[string]any{"branch": m.Target, "head": m.TargetHead},
		"electorate": map[string]any{"group": "group:" + m.Group, "snapshot": electorateSnapshot(m.Electorate)},
		"rule":       m.Rule, "effective": map[string]any{"type": "on_merge"}, "emergency": false, "fiscal": false,
		"variant_of": nil, "supersedes": sup}
	if m.Summary != "" {
		body["summary"] = m.Summary
	}
	if m.Kind == "merge" {
		body["source"] = map[string]any{"branch": m.Source, "head": m.SourceHead}
		res := m.Resolutions
		if res == nil {
			res = []any{}
		}
		body["resolutions"] = res
	} else {
		body["set"] = m.Set
	}
	return body
}

// OpenTx builds an mr.open by member 1 and returns it with the MR id.
func (ss *Session) OpenTx(m MR) (Tx, string) {
	body := ss.Body(m)
	return ss.Tx(1, "mr.open", body), ObjectID(body)
}

// Open opens m and returns the MR id the harness computed.
func (ss *Session) Open(m MR) string {
	tx, id := ss.OpenTx(m)
	ss.Accept(tx)
	return id
}

// BallotTx builds member i's ballot.
func (ss *Session) BallotTx(i int, mr, choice, supersedes string) Tx {
	var sup any
	if supersedes != "" {
		sup = supersedes
	}
	return ss.Tx(i, "ballot.cast", map[string]any{"mr": mr, "choice": choice, "supersedes": sup})
}

// Vote casts choice for members from..to-1 and returns the ballot ids.
func (ss *Session) Vote(mr, choice string, from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, ss.Accept(ss.BallotTx(i, mr, choice, "")))
	}
	return ids
}

// DetermineTx builds a determination by member i.
func (ss *Session) DetermineTx(i int, mr string, ballots []string, outcome string) Tx {
	if ballots == nil {
		ballots = []string{}
	}
	return ss.Tx(i, "mr.determine", map[string]any{"mr": mr, "ballots": ballots, "outcome": outcome})
}

// Get reads a path of the session on the first node.
func (ss *Session) Get(path string) *Answer { return ss.c.Get(ss.s.r.ctx, q(path, ss.ID)) }

// Tally reads an MR's live tally: outcome, if_closed and A, R, V.
func (ss *Session) Tally(mr string) (*Answer, string, string, [3]int64) {
	a := ss.Get("/merge-requests/" + mr + "/tally")
	tl := Field(a.JSON, "result", "tally")
	return a, Str(a.JSON, "result", "outcome"), Str(a.JSON, "result", "if_closed"), [3]int64{Int(tl, "approve"), Int(tl, "reject"), Int(tl, "void")}
}

// Status reads an MR's status.
func (ss *Session) Status(mr string) (*Answer, string) {
	a := ss.Get("/merge-requests/" + mr)
	return a, Str(a.JSON, "status")
}

// RootHead reads the root's head.
func (ss *Session) RootHead() (*Answer, string) {
	a := ss.Get("/branches/root")
	return a, Str(a.JSON, "branch", "heads", 0)
}

// BranchHead reads a branch's head.
func (ss *Session) BranchHead(name string) (*Answer, string) {
	a := ss.Get("/branches/" + name)
	return a, Str(a.JSON, "branch", "heads", 0)
}
