package author_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

func signer(t *testing.T, b byte) *dag.Signer {
	t.Helper()
	s, err := dag.SignerFromSeed(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fixedHeads answers every session with the same heads.
type fixedHeads []dag.ID

func (h fixedHeads) Heads(context.Context, string) ([]dag.ID, error) { return h, nil }

var (
	session = dag.Sum([]byte("a session"))
	mrID    = dag.Sum([]byte("an MR"))
	parentA = dag.Sum([]byte("parent a"))
	parentB = dag.Sum([]byte("parent b"))
)

// What Seal fills, worked out by hand: the ts is the clock's instant in
// UTC to the second; nil parents are the heads, given parents are kept;
// the body is canonical JSON (members sorted, null kept).
func TestSealFills(t *testing.T) {
	ctx := context.Background()
	// 12:00:30.7 at UTC+2 is 10:00:30Z.
	clock := func() time.Time { return time.Date(2026, 9, 21, 12, 0, 30, 700, time.FixedZone("", 2*3600)) }
	a, err := author.New(author.Options{Signer: signer(t, 1), Clock: clock, Heads: fixedHeads{parentA, parentB}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := a.BallotCast(ctx, session, author.Ballot{MR: mrID, Choice: "approve"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantBody := `{"choice":"approve","mr":"` + mrID.String() + `","supersedes":null}`
	if string(tx.Env.Body) != wantBody {
		t.Errorf("body %s, want %s", tx.Env.Body, wantBody)
	}
	if tx.Env.TS != "2026-09-21T10:00:30Z" {
		t.Errorf("ts %q", tx.Env.TS)
	}
	if !slices.Equal(tx.Env.Parents, []dag.ID{parentA, parentB}) || !slices.Equal(tx.Parents, tx.Env.Parents) {
		t.Errorf("parents %v, want the heads", tx.Env.Parents)
	}
	if tx.Env.Type != dag.TxBallotCast || tx.Env.Session != session || tx.Env.Author != signer(t, 1).Key() {
		t.Errorf("envelope %+v", tx.Env)
	}
	if tx.ID != dag.Sum(tx.Bytes) {
		t.Error("the id is not the hash of the envelope's bytes")
	}
	env, _, id, err := dag.DecodeEnvelope(tx.Bytes)
	if err != nil || id != tx.ID || env.Type != dag.TxBallotCast {
		t.Fatalf("the sealed envelope does not decode as itself: %v", err)
	}

	// Parents given are taken as given; a superseding ballot names the
	// ballot it replaces.
	tx, err = a.BallotCast(ctx, session, author.Ballot{MR: mrID, Choice: "reject", Supersedes: parentA}, []dag.ID{parentB})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tx.Env.Parents, []dag.ID{parentB}) {
		t.Errorf("given parents became %v", tx.Env.Parents)
	}
	if want := `{"choice":"reject","mr":"` + mrID.String() + `","supersedes":"` + parentA.String() + `"}`; string(tx.Env.Body) != want {
		t.Errorf("body %s, want %s", tx.Env.Body, want)
	}

	// Without Heads, a call naming no parents is refused; so is a
	// session-less draft of anything but session.create.
	bare, err := author.New(author.Options{Signer: signer(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.KeyRegister(ctx, session, nil); !errors.Is(err, author.ErrNoParents) {
		t.Errorf("no parents, no heads: %v", err)
	}
	if _, err := bare.Seal(ctx, author.Draft{Type: dag.TxKeyRegister, Parents: []dag.ID{}, Body: map[string]any{}}); err == nil {
		t.Error("a draft with no session was sealed")
	}
	if _, err := author.New(author.Options{}); err == nil {
		t.Error("New without a signer")
	}
}

// The ids an author fills: a session is the hash of its body, an object
// a body names is the hash of the attachment, an MR the hash of its body,
// a change the hash of the change. Each body decodes with the house's own
// decoder as what was asked for.
func TestConstructorsFillIDs(t *testing.T) {
	ctx := context.Background()
	s := signer(t, 2)
	a, err := author.New(author.Options{Signer: s, Clock: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	text := dag.Sum([]byte("rule text"))
	maj, _ := author.Majority(259200, text)
	two, _ := author.TwoThirds(text)
	allow, _ := author.AlwaysAllow(text)
	seed := statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{
		{NID: "/us/t1", Kind: "title", Heading: "T", Children: []statute.NodeSpec{{NID: "/us/t1/s1", Kind: "section", Heading: "S", Text: "old"}}}}})

	create, err := a.SessionCreate(ctx, author.Session{Label: "ids", Seed: seed, Education: true, Registrar: "reg", Roster: "all",
		RootRule: maj, RootGovernanceRule: two})
	if err != nil {
		t.Fatal(err)
	}
	if create.Made != dag.Sum(create.Env.Body) || create.Env.Session != create.Made || len(create.Env.Parents) != 0 {
		t.Fatalf("session.create: made %s, session %s, parents %v", create.Made, create.Env.Session, create.Env.Parents)
	}
	sb, err := house.DecodeSessionBody(create.Env.Body)
	if err != nil {
		t.Fatal(err)
	}
	// Education implies simulation (D59); the profile defaults to uslm-1.
	if !sb.Simulation || !sb.Education || sb.Registrar != "reg" || sb.Roster != "all" || sb.Seed != seed.Hash() || sb.Profile != "uslm-1" {
		t.Fatalf("session body %+v", sb)
	}
	if len(create.Attach) != len(seed.Objects()) {
		t.Fatalf("session.create carries %d attachments, want the seed's %d nodes", len(create.Attach), len(seed.Objects()))
	}
	sess := create.Made
	at := []dag.ID{create.ID}

	k1, k2 := signer(t, 3).Key(), signer(t, 4).Key()
	upd, err := a.GroupUpdate(ctx, sess, author.Group{ID: "all", Members: []dag.Key{k1, k2}, Admins: []dag.Key{k1}}, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(upd.Attach) != 1 || upd.Made != dag.Sum(upd.Attach[0]) || string(upd.Env.Body) != `{"group":"`+upd.Made.String()+`"}` {
		t.Fatalf("group.update: made %s, body %s", upd.Made, upd.Env.Body)
	}
	if g, err := house.DecodeGroup(upd.Attach[0]); err != nil || g.ID != "all" || len(g.Members) != 2 || len(g.Admins) != 1 {
		t.Fatalf("group object %+v, %v", g, err)
	}

	gen, _ := house.Genesis(seed.Hash()).ID()
	br, err := a.BranchCreate(ctx, sess, author.Branch{Name: "draft", Owner: "all", SourceBranch: house.RootBranch, SourceChange: gen,
		Restricted: true, MergeRule: allow, GovernanceRule: two}, at)
	if err != nil {
		t.Fatal(err)
	}
	bo, err := house.DecodeBranch(br.Attach[0])
	if err != nil || br.Made != dag.Sum(br.Attach[0]) || bo.Head != gen || !bo.Restricted || bo.Owner != "all" || bo.Session != sess {
		t.Fatalf("branch object %+v, %v", bo, err)
	}

	op, err := author.Replace(seed, "/us/t1/s1", "new")
	if err != nil {
		t.Fatal(err)
	}
	app, made, err := a.BranchAppend(ctx, sess, author.Change{Branch: "draft", Parent: gen, Base: seed, Ops: []statute.Op{op}}, at)
	if err != nil {
		t.Fatal(err)
	}
	c, _, cid, err := statute.DecodeChange(app.Attach[0])
	if err != nil || cid != made.Change || app.Made != cid || c.Base != seed.Hash() || c.Result != made.Result.Hash() ||
		c.Author != s.Key().String() || c.Message != "amend" || !slices.Equal(c.Parents, []dag.ID{gen}) {
		t.Fatalf("change %+v %s, %v", c, cid, err)
	}
	if spec, _ := made.Result.Spec("/us/t1/s1"); spec.Text != "new" {
		t.Fatalf("result text %q", spec.Text)
	}

	open, err := a.MROpen(ctx, sess, author.MR{Source: "draft", SourceHead: made.Change, TargetHead: gen, Members: []dag.Key{k1, k2}, Rule: maj}, at)
	if err != nil {
		t.Fatal(err)
	}
	m, err := house.DecodeMR(open.Env.Body)
	if err != nil || open.Made != dag.Sum(open.Env.Body) || m.Kind != "merge" || m.Target.Branch != house.RootBranch || m.Group != "roster" ||
		m.Source.Head != made.Change || m.Session != sess {
		t.Fatalf("mr.open %+v, %v", m, err)
	}
	el, _ := rules.NewElectorate([]dag.Key{k2, k1})
	if m.Snapshot != el.Snapshot() {
		t.Fatal("the MR does not freeze the electorate's snapshot")
	}
	gov, err := a.MROpen(ctx, sess, author.MR{Kind: author.KindGovernance, Target: "draft", TargetHead: made.Change,
		Members: []dag.Key{k1}, Rule: two, Set: author.GovSet{MergeRule: &maj}}, at)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := house.DecodeMR(gov.Env.Body); err != nil || g.Kind != "governance" || g.Set.MergeRule == nil || g.Set.GovernanceRule != nil {
		t.Fatalf("governance mr %+v, %v", g, err)
	}

	det, err := a.Determine(ctx, sess, author.Determination{MR: open.Made, Outcome: "rejected"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ballots":[],"mr":"` + open.Made.String() + `","outcome":"rejected"}`; string(det.Env.Body) != want {
		t.Fatalf("determination body %s, want %s", det.Env.Body, want)
	}
	key, err := a.KeyRegister(ctx, sess, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"key":"` + s.Key().String() + `"}`; string(key.Env.Body) != want {
		t.Fatalf("key.register body %s, want %s", key.Env.Body, want)
	}
}

// A session written with the author API, parents from the node's heads,
// submitted over HTTP to a real node on loopback: every envelope is
// accepted and the tally counts the ballots.
func TestAuthorOverHTTP(t *testing.T) {
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	srv, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := &httpapi.Client{BaseURL: hs.URL}

	t0 := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
	tick := func() time.Time { t0 = t0.Add(time.Second); return t0 }
	var members []*author.Author
	var keys []dag.Key
	for i := range 3 {
		a, err := author.New(author.Options{Signer: signer(t, byte(10+i)), Clock: tick, Heads: n})
		if err != nil {
			t.Fatal(err)
		}
		members, keys = append(members, a), append(keys, a.Key())
	}
	send := func(tx author.Tx, err error) author.Tx {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := c.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		if rc.Status != "accepted" || rc.Tx != tx.ID {
			t.Fatalf("%s: %s %+v", tx.Env.Type, rc.Status, rc.Errors)
		}
		return tx
	}
	ruleText := []byte("rules") // attached: a rule's text must resolve (30k §5)
	text := dag.Sum(ruleText)
	maj, _ := author.Majority(house.MinRootNotice, text)
	two, _ := author.TwoThirds(text)
	seed := statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{
		{NID: "/us/t1", Kind: "title", Heading: "T", Children: []statute.NodeSpec{{NID: "/us/t1/s1", Kind: "section", Heading: "S", Text: "x"}}}}})
	gen, _ := house.Genesis(seed.Hash()).ID()
	chair := members[0]
	create := send(chair.SessionCreate(ctx, author.Session{Label: "http", Seed: seed, Simulation: true, Registrar: "registrar", Roster: "roster",
		RootRule: maj, RootGovernanceRule: two, Texts: [][]byte{ruleText}}))
	sess := create.Made
	send(chair.GroupCreate(ctx, sess, author.Group{ID: "roster", Members: keys, Admins: keys[:1]}, nil))
	send(chair.GroupCreate(ctx, sess, author.Group{ID: "registrar", Members: keys[:1], Admins: keys[:1]}, nil))
	open := send(chair.MROpen(ctx, sess, author.MR{Source: house.RootBranch, SourceHead: gen, TargetHead: gen, Members: keys, Rule: maj}, nil))
	b1 := send(members[1].BallotCast(ctx, sess, author.Ballot{MR: open.Made, Choice: "approve"}, nil))
	if !slices.Equal(b1.Parents, []dag.ID{open.ID}) {
		t.Fatalf("the ballot's parents %v, want the node's head, the mr.open", b1.Parents)
	}
	send(members[2].BallotCast(ctx, sess, author.Ballot{MR: open.Made, Choice: "reject"}, nil))

	var ta httpapi.TallyAnswer
	if err := c.Get(ctx, "/merge-requests/"+open.Made.String()+"/tally", nil, &ta); err != nil {
		t.Fatal(err)
	}
	tl, err := n.Views().Tally(ctx, sess, open.Made)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Result.Tally.Approve != 1 || tl.Result.Tally.Reject != 1 || tl.Result.Tally.Electorate != 3 || tl.Finality != replica.Provisional {
		t.Fatalf("tally %+v", tl.Result.Tally)
	}
}
