// Package housetest builds signed 30k sessions for tests, benchmarks and
// fuzz seeds: synthetic member keys, a seed statute, and one method per L1
// transaction type that returns the sealed envelope with its attachments.
//
// Rosters are synthetic (30k §3: simulation only). Nothing here is
// random unless the caller's inputs are.
package housetest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

var (
	keysMu  sync.Mutex
	signers []*dag.Signer
)

// Member returns the i-th synthetic member signer, derived from a fixed
// seed so runs are reproducible.
func Member(i int) *dag.Signer {
	keysMu.Lock()
	defer keysMu.Unlock()
	for len(signers) <= i {
		seed := sha256.Sum256([]byte(fmt.Sprintf("witan housetest member %d", len(signers))))
		s, err := dag.SignerFromSeed(seed[:])
		if err != nil {
			panic(err)
		}
		signers = append(signers, s)
	}
	return signers[i]
}

// Members returns the keys of members from..to-1.
func Members(from, to int) []dag.Key {
	out := make([]dag.Key, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, Member(i).Key())
	}
	return out
}

// Tx is one sealed envelope with the objects it needs.
type Tx struct {
	ID      dag.ID
	Env     *dag.Envelope
	Bytes   []byte   // canonical envelope
	Attach  [][]byte // attachments
	Parents []dag.ID
}

// RuleText is the plain-language text of every rule of the test
// sessions, a plain-text object named by the hash of its bytes; the
// session.create and every branch.create carry it.
var RuleText = []byte("witan housetest rule text")

// TextRef names the rule texts of the test sessions.
var TextRef = dag.Sum(RuleText)

// Ref builds a rule reference; minNotice < 0 is null.
func Ref(kind, params string, minNotice int64) rules.Ref {
	mn := "null"
	if minNotice >= 0 {
		mn = fmt.Sprint(minNotice)
	}
	r, err := rules.ParseRef([]byte(fmt.Sprintf(`{"kind":%q,"version":1,"params":%s,"min_notice":%s,"text_ref":%q}`, kind, params, mn, TextRef)))
	if err != nil {
		panic(err)
	}
	return r
}

// Majority is a threshold_vote: more than half of the votes cast, quorum
// 1/2 of the electorate, closing on_threshold is not allowed with
// votes_cast, so it closes on a deadline.
func Majority(minNotice int64) rules.Ref {
	return Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"}`, minNotice)
}

// TwoThirds is the entrenched root governance rule of D38.
func TwoThirds() rules.Ref {
	return Ref(rules.KindThresholdVote, `{"num":2,"den":3,"cmp":"gte","basis":"electorate","quorum_num":1,"quorum_den":2,"closing":"on_threshold"}`, -1)
}

// AlwaysAllow is the always_allow rule.
func AlwaysAllow() rules.Ref { return Ref(rules.KindAlwaysAllow, `{}`, -1) }

// Approvers is a designated_approvers rule.
func Approvers(group string, required int) rules.Ref {
	return Ref(rules.KindDesignatedApprovers, fmt.Sprintf(`{"approvers":"group:%s","required":%d}`, group, required), -1)
}

// Options shapes a session.
type Options struct {
	Author     *dag.Signer // default Member(0)
	Label      string
	RootRule   *rules.Ref // default Majority(259200)
	Observers  bool       // name an "observers" group
	Simulation bool
	Education  bool
	// Sections is how many sections the seed's title holds (default 3).
	Sections int
	// Districts, when set, is a district attribute table (D72): the
	// session.create names it and carries it as an attachment.
	Districts []byte
}

// Builder makes the envelopes of one session.
type Builder struct {
	Author  *dag.Signer
	Session dag.ID
	Body    []byte
	Seed    *statute.Tree
	Genesis dag.ID
	Objects house.ObjectMap
	Trees   map[dag.ID]*statute.Tree // change id → snapshot
	Create  Tx                       // the session.create
	t       time.Time
}

// Seed returns the seed statute: a uslm-1 root with one title of n
// sections, section i reading "Section i: the period is 30 days."
func Seed(n int) *statute.Tree {
	title := statute.NodeSpec{NID: "/us/t1", Kind: "title", Heading: "Title 1"}
	for i := 1; i <= n; i++ {
		title.Children = append(title.Children, statute.NodeSpec{NID: fmt.Sprintf("/us/t1/s%d", i), Kind: "section", Heading: fmt.Sprintf("Section %d", i), Text: "The period is 30 days."})
	}
	return statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{title}})
}

// New starts a session and returns its builder; b.Create is the signed
// session.create with the seed's node objects attached.
func New(o Options) *Builder {
	if o.Author == nil {
		o.Author = Member(0)
	}
	if o.Label == "" {
		o.Label = "witan test session"
	}
	if o.Sections == 0 {
		o.Sections = 3
	}
	rr := Majority(house.MinRootNotice)
	if o.RootRule != nil {
		rr = *o.RootRule
	}
	seed := Seed(o.Sections)
	b := &Builder{Author: o.Author, Seed: seed, Objects: house.ObjectMap{}, Trees: map[dag.ID]*statute.Tree{},
		t: time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)}
	body := map[string]any{
		"label": o.Label, "seed": seed.Hash(), "simulation": o.Simulation || o.Education, "education": o.Education,
		"registrar": "group:registrar", "profile": "uslm-1", "roster": "group:roster",
		"root_rule": rr, "root_governance_rule": TwoThirds(),
	}
	if o.Observers {
		body["observers"] = "group:observers"
	}
	if o.Districts != nil {
		body["districts"] = dag.Sum(o.Districts)
	}
	raw, err := dag.Marshal(body)
	if err != nil {
		panic(err)
	}
	b.Body = raw
	b.Session = dag.Sum(raw)
	var attach [][]byte
	for _, n := range seed.Objects() {
		attach = append(attach, n.Canonical())
	}
	if o.Districts != nil {
		attach = append(attach, o.Districts)
	}
	attach = append(attach, RuleText)
	b.Create = b.Sign(o.Author, dag.TxSessionCreate, json.RawMessage(raw), nil, attach...)
	gen, _ := house.Genesis(seed.Hash()).ID()
	b.Genesis = gen
	b.Trees[gen] = seed
	return b
}

// Sign seals an envelope of type typ with body (marshalled canonically) and
// parents, and records its attachments in b.Objects.
func (b *Builder) Sign(s *dag.Signer, typ dag.TxType, body any, parents []dag.ID, attach ...[]byte) Tx {
	raw, err := dag.Marshal(body)
	if err != nil {
		panic(err)
	}
	b.t = b.t.Add(time.Second)
	if parents == nil {
		parents = []dag.ID{}
	}
	env := &dag.Envelope{Type: typ, Session: b.Session, Parents: parents, Body: raw, TS: b.t.Format(time.RFC3339)}
	if typ == dag.TxSessionCreate {
		env.Session = dag.Sum(raw)
	}
	bytes, id, err := env.Seal(s)
	if err != nil {
		panic(err)
	}
	for _, a := range attach {
		b.Objects[dag.Sum(a)] = a
	}
	return Tx{ID: id, Env: env, Bytes: bytes, Attach: attach, Parents: parents}
}

func keyStrings(ks []dag.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	return out
}

func groupObj(id string, members, admins []dag.Key) map[string]any {
	return map[string]any{"id": id, "members": keyStrings(members), "admins": keyStrings(admins)}
}

// GroupCreate creates group id.
func (b *Builder) GroupCreate(s *dag.Signer, id string, members, admins []dag.Key, parents ...dag.ID) Tx {
	return b.Sign(s, dag.TxGroupCreate, groupObj(id, members, admins), parents)
}

// GroupUpdate publishes a new version of group id.
func (b *Builder) GroupUpdate(s *dag.Signer, id string, members, admins []dag.Key, parents ...dag.ID) Tx {
	obj, err := dag.Marshal(groupObj(id, members, admins))
	if err != nil {
		panic(err)
	}
	return b.Sign(s, dag.TxGroupUpdate, map[string]any{"group": dag.Sum(obj)}, parents, obj)
}

// BranchCreate creates a public branch forked from srcBranch at srcChange.
func (b *Builder) BranchCreate(s *dag.Signer, name, owner, srcBranch string, srcChange dag.ID, protected bool, merge, gov rules.Ref, parents ...dag.ID) Tx {
	obj, err := dag.Marshal(map[string]any{
		"name": name, "session": b.Session, "owner": "group:" + owner,
		"source": map[string]any{"branch": srcBranch, "change": srcChange}, "head": srcChange,
		"visibility": "public", "protected": protected, "merge_rule": merge, "governance_rule": gov,
	})
	if err != nil {
		panic(err)
	}
	return b.Sign(s, dag.TxBranchCreate, map[string]any{"branch": dag.Sum(obj)}, parents, obj, RuleText)
}

// Replace returns the op setting the text of leaf nid in t.
func Replace(t *statute.Tree, nid, text string) statute.Op {
	spec, ok := t.Spec(nid)
	if !ok {
		panic("housetest: no node " + nid)
	}
	pre, _ := t.NodeHash(nid)
	spec.Text = text
	return statute.Op{Op: statute.OpReplace, NID: nid, Pre: pre, Node: spec}
}

// Append appends a change with ops on top of parent (the branch head) to
// branch and returns the transaction and the change id.
func (b *Builder) Append(s *dag.Signer, branch string, parent dag.ID, ops []statute.Op, parents ...dag.ID) (Tx, dag.ID) {
	base := b.Trees[parent]
	if base == nil {
		panic("housetest: unknown parent change")
	}
	res, err := statute.Apply(base, ops)
	if err != nil {
		panic(err)
	}
	c := &statute.Change{Base: base.Hash(), Ops: ops, Result: res.Hash(), Parents: []dag.ID{parent}, Message: "amend", Author: s.Key().String()}
	raw, err := c.Canonical()
	if err != nil {
		panic(err)
	}
	id := dag.Sum(raw)
	b.Trees[id] = res
	attach := [][]byte{raw}
	for _, n := range res.Objects() {
		attach = append(attach, n.Canonical())
	}
	return b.Sign(s, dag.TxBranchAppend, map[string]any{"branch": branch, "change": id}, parents, attach...), id
}

// MR describes a merge request body.
type MR struct {
	Kind       string // default "merge"
	Source     string
	SourceHead dag.ID
	Target     string // default root
	TargetHead dag.ID
	Group      string // default roster
	Members    []dag.Key
	Rule       rules.Ref
	Summary    string
	Supersedes dag.ID
	Set        map[string]any // governance
	Fiscal     bool           // D53
	// Resolutions resolve conflicts (§6 item 2): nid → the final node,
	// nil to delete.
	Resolutions []Resolution
}

// Resolution is one entry of an MR's resolutions.
type Resolution struct {
	NID  string
	Node *statute.NodeSpec
}

// MRBody returns the canonical body of an MR and its id.
func (b *Builder) MRBody(m MR) ([]byte, dag.ID) {
	if m.Kind == "" {
		m.Kind = "merge"
	}
	if m.Target == "" {
		m.Target = house.RootBranch
	}
	if m.Group == "" {
		m.Group = "roster"
	}
	el, err := rules.NewElectorate(m.Members)
	if err != nil {
		panic(err)
	}
	body := map[string]any{
		"kind": m.Kind, "session": b.Session, "target": map[string]any{"branch": m.Target, "head": m.TargetHead},
		"electorate": map[string]any{"group": "group:" + m.Group, "snapshot": el.Snapshot()},
		"rule":       m.Rule, "resolutions": []any{}, "effective": map[string]any{"type": "on_merge"},
		"emergency": false, "fiscal": m.Fiscal, "variant_of": nil, "supersedes": nil,
	}
	if m.Summary != "" {
		body["summary"] = m.Summary
	}
	if len(m.Resolutions) > 0 {
		rs := make([]any, len(m.Resolutions))
		for i, r := range m.Resolutions {
			rs[i] = map[string]any{"nid": r.NID, "node": r.Node}
		}
		body["resolutions"] = rs
	}
	if m.Supersedes.Valid() {
		body["supersedes"] = m.Supersedes
	}
	if m.Kind == "merge" {
		body["source"] = map[string]any{"branch": m.Source, "head": m.SourceHead}
	} else {
		body["set"] = m.Set
		delete(body, "resolutions")
	}
	raw, err := dag.Marshal(body)
	if err != nil {
		panic(err)
	}
	return raw, dag.Sum(raw)
}

// Open opens an MR.
func (b *Builder) Open(s *dag.Signer, m MR, parents ...dag.ID) (Tx, dag.ID) {
	raw, id := b.MRBody(m)
	return b.Sign(s, dag.TxMROpen, json.RawMessage(raw), parents), id
}

// Ballot casts a ballot; supersedes may be the zero ID.
func (b *Builder) Ballot(s *dag.Signer, mr dag.ID, choice string, supersedes dag.ID, parents ...dag.ID) Tx {
	body := map[string]any{"mr": mr, "choice": choice, "supersedes": nil}
	if supersedes.Valid() {
		body["supersedes"] = supersedes
	}
	return b.Sign(s, dag.TxBallotCast, body, parents)
}

// Determine submits a determination.
func (b *Builder) Determine(s *dag.Signer, mr dag.ID, ballots []dag.ID, outcome string, parents ...dag.ID) Tx {
	if ballots == nil {
		ballots = []dag.ID{}
	}
	return b.Sign(s, dag.TxMRDetermine, map[string]any{"mr": mr, "ballots": ballots, "outcome": outcome}, parents)
}

// KeyRegister registers s's own key.
func (b *Builder) KeyRegister(s *dag.Signer, parents ...dag.ID) Tx {
	return b.Sign(s, dag.TxKeyRegister, map[string]any{"key": s.Key()}, parents)
}

// Input returns the transactions as house.Derive inputs.
func Input(txs ...Tx) []house.Input {
	out := make([]house.Input, len(txs))
	for i, t := range txs {
		out[i] = house.Input{ID: t.ID, Env: t.Env}
	}
	return out
}

// BallotChain builds a session whose n ballots are chained one after
// another (each the child of the one before): the create, a roster of n
// members, the open of an MR on the root branch under a majority rule,
// then member i's approving ballot for i = 0 … n-1. It returns the first
// three (head), the MR's id and the ballots.
func (b *Builder) BallotChain(n int) (head []Tx, mr dag.ID, ballots []Tx) {
	roster := b.GroupCreate(Member(0), "roster", Members(0, n), Members(0, 1), b.Create.ID)
	open, mr := b.Open(Member(1), MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: Members(0, n), Rule: Majority(house.MinRootNotice)}, roster.ID)
	head = []Tx{b.Create, roster, open}
	last := open.ID
	for i := 0; i < n; i++ {
		tx := b.Ballot(Member(i), mr, "approve", dag.ID{}, last)
		ballots = append(ballots, tx)
		last = tx.ID
	}
	return head, mr, ballots
}
