// Package housetest builds signed 30k sessions for tests, benchmarks and
// fuzz seeds: synthetic member keys, a seed statute, and one method per L1
// transaction type that returns the sealed envelope with its attachments.
// The envelopes are built by replica/author (the author API embedders
// use) with a clock one second per envelope; housetest adds the fixed
// keys, the seed and the bookkeeping (Objects, Trees). Production code
// and examples use replica/author directly: this package links testing
// and rapid.
//
// Rosters are synthetic (30k §3: simulation only). Nothing here is
// random unless the caller's inputs are.
package housetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
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

// Tx is one sealed envelope with the objects it needs (the author API's).
type Tx = author.Tx

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
	// Jurisdictions (D73), when set, are declared in the session.create.
	Jurisdictions []house.Jurisdiction
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
	sc := author.Session{Label: o.Label, Seed: seed, Simulation: o.Simulation, Education: o.Education,
		Registrar: "registrar", Roster: "roster", RootRule: rr, RootGovernanceRule: TwoThirds(), Districts: o.Districts, Texts: [][]byte{RuleText},
		Jurisdictions: o.Jurisdictions}
	if o.Observers {
		sc.Observers = "observers"
	}
	b.Create = b.must(b.author(o.Author).SessionCreate(context.Background(), sc))
	b.Body = b.Create.Env.Body
	b.Session = b.Create.Made
	gen, _ := house.Genesis(seed.Hash()).ID()
	b.Genesis = gen
	b.Trees[gen] = seed
	return b
}

// author returns an author API for signer s whose clock is the builder's:
// each envelope one second after the one before.
func (b *Builder) author(s *dag.Signer) *author.Author {
	a, err := author.New(author.Options{Signer: s, Clock: func() time.Time {
		b.t = b.t.Add(time.Second)
		return b.t
	}})
	if err != nil {
		panic(err)
	}
	return a
}

// must records tx's attachments in b.Objects and returns it; an error is
// a bug in the test.
func (b *Builder) must(tx Tx, err error) Tx {
	if err != nil {
		panic(err)
	}
	for _, a := range tx.Attach {
		b.Objects[dag.Sum(a)] = a
	}
	return tx
}

// given is parents as the builder's callers mean them: none named is none
// (never the node's heads).
func given(parents []dag.ID) []dag.ID {
	if parents == nil {
		return []dag.ID{}
	}
	return parents
}

// Sign seals an envelope of type typ with body (marshalled canonically) and
// parents, and records its attachments in b.Objects.
func (b *Builder) Sign(s *dag.Signer, typ dag.TxType, body any, parents []dag.ID, attach ...[]byte) Tx {
	return b.must(b.author(s).Seal(context.Background(), author.Draft{Type: typ, Session: b.Session, Parents: given(parents), Body: body, Attach: attach}))
}

// GroupCreate creates group id.
func (b *Builder) GroupCreate(s *dag.Signer, id string, members, admins []dag.Key, parents ...dag.ID) Tx {
	return b.must(b.author(s).GroupCreate(context.Background(), b.Session, author.Group{ID: id, Members: members, Admins: admins}, given(parents)))
}

// GroupUpdate publishes a new version of group id.
func (b *Builder) GroupUpdate(s *dag.Signer, id string, members, admins []dag.Key, parents ...dag.ID) Tx {
	return b.must(b.author(s).GroupUpdate(context.Background(), b.Session, author.Group{ID: id, Members: members, Admins: admins}, given(parents)))
}

// BranchCreate creates a public branch forked from srcBranch at srcChange.
func (b *Builder) BranchCreate(s *dag.Signer, name, owner, srcBranch string, srcChange dag.ID, protected bool, merge, gov rules.Ref, parents ...dag.ID) Tx {
	return b.must(b.author(s).BranchCreate(context.Background(), b.Session, author.Branch{Name: name, Owner: owner,
		SourceBranch: srcBranch, SourceChange: srcChange, Protected: protected, MergeRule: merge, GovernanceRule: gov, Texts: [][]byte{RuleText}}, given(parents)))
}

// Replace returns the op setting the text of leaf nid in t.
func Replace(t *statute.Tree, nid, text string) statute.Op {
	op, err := author.Replace(t, nid, text)
	if err != nil {
		panic("housetest: " + err.Error())
	}
	return op
}

// Append appends a change with ops on top of parent (the branch head) to
// branch and returns the transaction and the change id.
func (b *Builder) Append(s *dag.Signer, branch string, parent dag.ID, ops []statute.Op, parents ...dag.ID) (Tx, dag.ID) {
	base := b.Trees[parent]
	if base == nil {
		panic("housetest: unknown parent change")
	}
	tx, made, err := b.author(s).BranchAppend(context.Background(), b.Session, author.Change{Branch: branch, Parent: parent, Base: base, Ops: ops}, given(parents))
	tx = b.must(tx, err)
	b.Trees[made.Change] = made.Result
	return tx, made.Change
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
	// Resolutions resolve conflicts (§6 item 2).
	Resolutions []author.Resolution
}

// Resolution is one entry of an MR's resolutions.
type Resolution = author.Resolution

// authorMR is m as the author API takes it.
func authorMR(m MR) author.MR {
	am := author.MR{Kind: m.Kind, Source: m.Source, SourceHead: m.SourceHead, Target: m.Target, TargetHead: m.TargetHead,
		Group: m.Group, Members: m.Members, Rule: m.Rule, Summary: m.Summary, Supersedes: m.Supersedes,
		Fiscal: m.Fiscal, Resolutions: m.Resolutions}
	for k, v := range m.Set {
		r, ok := v.(rules.Ref)
		switch {
		case k == "merge_rule" && ok:
			am.Set.MergeRule = &r
		case k == "governance_rule" && ok:
			am.Set.GovernanceRule = &r
		case k == "owner":
			am.Set.Owner = strings.TrimPrefix(v.(string), "group:")
		default:
			panic(fmt.Sprintf("housetest: MR.Set[%q] = %T", k, v))
		}
	}
	return am
}

// MRBody returns the canonical body of an MR and its id.
func (b *Builder) MRBody(m MR) ([]byte, dag.ID) {
	raw, id, err := author.MRBody(b.Session, authorMR(m))
	if err != nil {
		panic(err)
	}
	return raw, id
}

// Open opens an MR.
func (b *Builder) Open(s *dag.Signer, m MR, parents ...dag.ID) (Tx, dag.ID) {
	tx := b.must(b.author(s).MROpen(context.Background(), b.Session, authorMR(m), given(parents)))
	return tx, tx.Made
}

// Ballot casts a ballot; supersedes may be the zero ID.
func (b *Builder) Ballot(s *dag.Signer, mr dag.ID, choice string, supersedes dag.ID, parents ...dag.ID) Tx {
	return b.must(b.author(s).BallotCast(context.Background(), b.Session, author.Ballot{MR: mr, Choice: choice, Supersedes: supersedes}, given(parents)))
}

// Determine submits a determination.
func (b *Builder) Determine(s *dag.Signer, mr dag.ID, ballots []dag.ID, outcome string, parents ...dag.ID) Tx {
	return b.must(b.author(s).Determine(context.Background(), b.Session, author.Determination{MR: mr, Ballots: ballots, Outcome: outcome}, given(parents)))
}

// KeyRegister registers s's own key.
func (b *Builder) KeyRegister(s *dag.Signer, parents ...dag.ID) Tx {
	return b.must(b.author(s).KeyRegister(context.Background(), b.Session, given(parents)))
}

// Input returns the transactions as house.Derive inputs.
func Input(txs ...Tx) []house.Input {
	out := make([]house.Input, len(txs))
	for i, t := range txs {
		out[i] = house.Input{ID: t.ID, Env: t.Env}
	}
	return out
}

// BallotLoad builds a session for write-path benchmarks, where each
// ballot is independent of the others (the load of many clients): the
// create, a roster of perMR members and a registrar, then as many MRs of
// those members (on the root branch, majority rule) as n ballots need,
// each ballot member i's approval of one MR, a child of its open. The
// create, the groups and each open are handed to submit, in order, as
// they are made (an open before its ballots are made); the n ballots are
// returned, not submitted.
func (b *Builder) BallotLoad(n, perMR int, submit func(Tx)) []Tx {
	submit(b.Create)
	roster := b.GroupCreate(Member(0), "roster", Members(0, perMR), Members(0, 1), b.Create.ID)
	submit(roster)
	registrar := b.GroupCreate(Member(0), "registrar", Members(0, 1), Members(0, 1), roster.ID)
	submit(registrar)
	last := registrar.ID
	ballots := make([]Tx, 0, n)
	for len(ballots) < n {
		open, mr := b.Open(Member(0), MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
			Members: Members(0, perMR), Rule: Majority(house.MinRootNotice), Summary: fmt.Sprintf("MR %d", len(ballots))}, last)
		submit(open)
		last = open.ID
		for i := 0; i < perMR && len(ballots) < n; i++ {
			ballots = append(ballots, b.Ballot(Member(i), mr, "approve", dag.ID{}, open.ID))
		}
	}
	return ballots
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
