package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Contests over HTTP on a real listener (30k §7, D47, D68, D71, D77; S18,
// S20 and S21's contest parts). Envelopes are signed and ids computed
// here; every expected count is derived by hand in the comments.

// deadlineMajority is the root rule of these sessions: more than half of
// the electorate, closing on a deadline far ahead (D74 needs 72 hours),
// with the root's 72-hour notice floor (D42).
func deadlineMajority() rules.Ref {
	return ht.Ref(rules.KindThresholdVote, `{"num":1,"den":2,"cmp":"gt","basis":"electorate","quorum_num":0,"quorum_den":1,"closing":"on_deadline","deadline":"2026-12-01T00:00:00Z"}`, house.MinRootNotice)
}

type contestSession struct {
	*session
	n    int
	rule rules.Ref
	// emergency: the next option asks for emergency handling (D49).
	emergency bool
}

// newContestSession starts a simulated session with a roster of n and a
// drafters group (members 1 and 2) that may create branches.
func newContestSession(t *testing.T, nd *apiNode, n int) *contestSession {
	t.Helper()
	rule := deadlineMajority()
	b := ht.New(ht.Options{Simulation: true, RootRule: &rule})
	s := &session{b: b, space: b.Session.String()}
	nd.submit(t, s, b.Create)
	nd.submit(t, s, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), s.last))
	nd.submit(t, s, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	nd.submit(t, s, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	return &contestSession{session: s, n: n, rule: rule}
}

// option drafts text for nid on a branch of its own and opens an MR of
// it against the root's genesis; variantOf, when valid, makes it a variant.
func (cs *contestSession) option(t *testing.T, nd *apiNode, name string, edits map[string]string, variantOf dag.ID) (ht.Tx, dag.ID) {
	t.Helper()
	b := cs.b
	nd.submit(t, cs.session, b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), cs.last))
	var ops []statute.Op
	tree := b.Trees[b.Genesis]
	for _, nid := range []string{"/us/t1/s1", "/us/t1/s2", "/us/t1/s3"} {
		if text, ok := edits[nid]; ok {
			ops = append(ops, ht.Replace(tree, nid, text))
		}
	}
	tx, change := b.Append(ht.Member(2), name, b.Genesis, ops, cs.last)
	nd.submit(t, cs.session, tx)
	raw, _ := b.MRBody(ht.MR{Source: name, SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, cs.n), Rule: cs.rule})
	if cs.emergency {
		raw = bytes.Replace(raw, []byte(`"emergency":false`), []byte(`"emergency":true`), 1)
	}
	if variantOf.Valid() {
		raw = bytes.Replace(raw, []byte(`"variant_of":null`), []byte(`"variant_of":"`+variantOf.String()+`"`), 1)
	}
	open := b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(raw), []dag.ID{cs.last})
	return open, dag.Sum(raw)
}

func (cs *contestSession) open(t *testing.T, nd *apiNode, options []dag.ID, deadline string) (ht.Tx, dag.ID) {
	body := map[string]any{"options": options}
	if deadline != "" {
		body["deadline"] = deadline
	}
	tx := cs.b.Sign(ht.Member(3), dag.TxContestOpen, body, []dag.ID{cs.last})
	return tx, tx.ID
}

// rank submits member m's ranking; S stands for the status quo.
func (cs *contestSession) rank(t *testing.T, nd *apiNode, contest dag.ID, m int, order ...dag.ID) dag.ID {
	t.Helper()
	names := []string{}
	for _, o := range order {
		if o.Valid() {
			names = append(names, o.String())
		} else {
			names = append(names, rules.StatusQuo)
		}
	}
	tx := cs.b.Sign(ht.Member(m), dag.TxContestRank, map[string]any{"contest": contest, "ranking": names, "supersedes": nil}, []dag.ID{cs.last})
	nd.submit(t, cs.session, tx)
	return tx.ID
}

func (cs *contestSession) determine(contest dag.ID, rankings []dag.ID, outcome string, winner any) ht.Tx {
	return cs.b.Sign(ht.Member(4), dag.TxContestDetermine, map[string]any{"contest": contest, "rankings": rankings, "outcome": outcome, "winner": winner}, []dag.ID{cs.last})
}

func refusedWith(t *testing.T, nd *apiNode, tx ht.Tx, code dag.Code) {
	t.Helper()
	_, err := nd.c.Submit(context.Background(), tx.Bytes, tx.Attach)
	var pe *httpapi.Error
	if !errors.As(err, &pe) || pe.Code() != code {
		t.Fatalf("%s: %v, want %s", tx.Env.Type, err, code)
	}
}

var sq = dag.ID{} // the status quo in rank()

func mrStatus(t *testing.T, nd *apiNode, mr dag.ID) (string, string) {
	m := nd.getMap(t, "/merge-requests/"+mr.String(), nil)
	r, _ := m["reason"].(string)
	return m["status"].(string), r
}

// S18: four MRs on one chapter grouped in a contest elect status_quo
// when none beats it with a majority of the electorate. N=10: four
// members rank only the status quo (every option below it), and each of
// options A, B, C gets one or two members ranking it above the status
// quo (the rest unranked, so below). Each option against S: at most 2
// above, at least 8 below; S beats every option, is unbeaten, and every
// option is rejected with contest_lost. Plain ballots on grouped MRs are
// ignored, and mr.determine on them is refused.
func TestContestS18StatusQuoWins(t *testing.T) {
	nd := newNode(t)
	cs := newContestSession(t, nd, 10)
	var opts []dag.ID
	for i, text := range []string{"30 to 45", "30 to 40", "30 to 35", "30 to 60"} {
		tx, mr := cs.option(t, nd, fmt.Sprintf("d%d", i), map[string]string{"/us/t1/s1": "The period is " + text + " days."}, dag.ID{})
		nd.submit(t, cs.session, tx)
		opts = append(opts, mr)
	}
	open, cid := cs.open(t, nd, opts, "")
	nd.submit(t, cs.session, open)
	var ranks []dag.ID
	for m := 0; m < 4; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, sq))
	}
	ranks = append(ranks,
		cs.rank(t, nd, cid, 4, opts[0], sq), cs.rank(t, nd, cid, 5, opts[0], sq),
		cs.rank(t, nd, cid, 6, opts[1], sq), cs.rank(t, nd, cid, 7, opts[1], sq),
		cs.rank(t, nd, cid, 8, opts[2], opts[3], sq))
	// A plain ballot on a grouped MR is admitted but ignored; mr.determine
	// on it is refused.
	nd.submit(t, cs.session, cs.b.Ballot(ht.Member(9), opts[0], "approve", dag.ID{}, cs.last))
	if tal := nd.getMap(t, "/merge-requests/"+opts[0].String()+"/tally", nil)["result"].(map[string]any)["tally"].(map[string]any); tal["approve"] != float64(0) {
		t.Fatalf("a plain ballot on a grouped MR counted: %v", tal)
	}
	refusedWith(t, nd, cs.b.Determine(ht.Member(4), opts[0], nil, "rejected", cs.last), dag.CodeNotAuthorized)
	// Finality follows the checkpoint: an open contest is provisional even
	// when a checkpoint covers its open and rankings.
	nd.checkpointNow(t, cs.space)
	if f := nd.getMap(t, "/contests/"+cid.String(), nil)["finality"]; f != "provisional" {
		t.Fatalf("open contest, checkpointed: finality %v", f)
	}
	// A wrong claim is refused; the right one is executed.
	refusedWith(t, nd, cs.determine(cid, ranks, "approved", opts[0]), dag.CodeNotAuthorized)
	nd.submit(t, cs.session, cs.determine(cid, ranks, "rejected", rules.StatusQuo))
	c := nd.getMap(t, "/contests/"+cid.String(), nil)
	if c["status"] != house.ContestDecided || c["simulation"] != true || c["finality"] != "provisional" {
		t.Fatalf("decided, not yet checkpointed: contest %v", c)
	}
	// Once a checkpoint includes the executed determination: final_advisory.
	nd.checkpointNow(t, cs.space)
	c = nd.getMap(t, "/contests/"+cid.String(), nil)
	if c["status"] != house.ContestDecided || c["finality"] != "final_advisory" {
		t.Fatalf("decided and checkpointed: status %v, finality %v", c["status"], c["finality"])
	}
	res := c["result"].(map[string]any)
	rounds := res["rounds"].([]any)
	if res["winner"] != rules.StatusQuo || len(rounds) != 1 || rounds[0].(map[string]any)["winner"] != rules.StatusQuo {
		t.Fatalf("result %v", res)
	}
	for _, o := range opts {
		if st, why := mrStatus(t, nd, o); st != house.StatusRejected || why != string(rules.ReasonContestLost) {
			t.Fatalf("option %s: %s %s", o, st, why)
		}
	}
}

// fallback builds S20's and S21's shape: options X, Y and extra ones
// nobody ranks; a ranks X>Y>S, b ranks only Y, c ranks S>X>Y. Then
// X>Y = a+c, Y>X = b; Y>S = a+b, S>Y = c; S>X = c, X>S = a. With
// a+c > b, a+b > c and c the weakest, S>X closes the cycle X>Y>S>X and is
// skipped: X wins round 1 with A = a and fails a majority of N unless
// 2a > N; Y wins round 2 with A = a+b.
func fallback(t *testing.T, n, a, b, c, extra int) (*apiNode, *contestSession, []dag.ID, dag.ID, []dag.ID) {
	nd := newNode(t)
	cs := newContestSession(t, nd, n)
	var opts []dag.ID
	for i := 0; i < 2+extra; i++ {
		tx, mr := cs.option(t, nd, fmt.Sprintf("d%d", i), map[string]string{"/us/t1/s1": fmt.Sprintf("The period is %d days.", 40+i)}, dag.ID{})
		nd.submit(t, cs.session, tx)
		opts = append(opts, mr)
	}
	open, cid := cs.open(t, nd, opts, "")
	nd.submit(t, cs.session, open)
	if _, err := nd.node.Replica().Checkpoint(context.Background(), dag.MustParseID(cs.space)); err != nil { // the options' opens
		t.Fatal(err)
	}
	x, y := opts[0], opts[1]
	var ranks []dag.ID
	m := 0
	for ; m < a; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, x, y, sq))
	}
	for ; m < a+b; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, y))
	}
	for ; m < a+b+c; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, sq, x, y))
	}
	return nd, cs, opts, cid, ranks
}

func checkFallback(t *testing.T, nd *apiNode, cs *contestSession, opts []dag.ID, cid dag.ID, ranks []dag.ID, aX, above, below int) {
	t.Helper()
	x, y := opts[0], opts[1]
	nd.submit(t, cs.session, cs.determine(cid, ranks, "approved", y))
	// The determination checkpointed 73 hours of this node's time after
	// the opens: the advisory notice (72 h, from the latest option's open)
	// is recorded as met; the rule's deadline (December) is not reached,
	// so a strong node's outcome would still be pending.
	nd.clk.t = nd.clk.t.Add(73 * time.Hour)
	if _, err := nd.node.Replica().Checkpoint(context.Background(), dag.MustParseID(cs.space)); err != nil {
		t.Fatal(err)
	}
	c := nd.getMap(t, "/contests/"+cid.String(), nil)
	if c["finality"] != "final_advisory" {
		t.Fatalf("decided and checkpointed: finality %v", c["finality"])
	}
	res := c["result"].(map[string]any)
	if tm := res["timing"].(map[string]any); tm["notice_met"] != true || tm["notice_elapsed"] != float64(73*3600) || tm["notice_required"] != float64(259200) || res["if_closed"] != "approved" || res["outcome"] != "pending" {
		t.Fatalf("timing %v, if_closed %v, outcome %v", tm, res["if_closed"], res["outcome"])
	}
	rounds := res["rounds"].([]any)
	if len(rounds) != 2 {
		t.Fatalf("rounds %v", rounds)
	}
	r1, r2 := rounds[0].(map[string]any), rounds[1].(map[string]any)
	if r1["winner"] != x.String() || r1["outcome"] != "rejected" || r2["winner"] != y.String() || r2["outcome"] != "approved" {
		t.Fatalf("round winners %v / %v", r1["winner"], r2["winner"])
	}
	if got := r1["tally"].(map[string]any)["approve"]; got != float64(aX) {
		t.Fatalf("round 1 approvals %v, want %d", got, aX)
	}
	if len(r1["locked"].([]any)) == 0 || len(r1["skipped"].([]any)) != 1 {
		t.Fatalf("round 1 locked %v skipped %v", r1["locked"], r1["skipped"])
	}
	want := fmt.Sprintf(`[map[above_winner:%d below_winner:%d option:%s]]`, above, below, x)
	if got := fmt.Sprint(c["ranked_above_winner"]); got != want {
		t.Fatalf("ranked_above_winner %s, want %s", got, want)
	}
	if st, why := mrStatus(t, nd, x); st != house.StatusRejected || why != string(rules.ReasonContestRuleFailed) {
		t.Fatalf("X: %s %s", st, why)
	}
	if st, _ := mrStatus(t, nd, y); st != house.StatusMerged {
		t.Fatalf("Y: %s", st)
	}
	for _, o := range opts[2:] {
		if st, why := mrStatus(t, nd, o); st != house.StatusRejected || why != string(rules.ReasonContestLost) {
			t.Fatalf("extra option: %s %s", st, why)
		}
	}
	f := nd.getMap(t, "/merge-requests/"+y.String()+"/facts", nil)["facts"].(map[string]any)
	if got := fmt.Sprint(f["ranked_above_winner"]); got != want {
		t.Fatalf("fact sheet ranked_above_winner %s, want %s", got, want)
	}
}

// S20: a six-option contest whose winner fails its rule by 34. N=100,
// a=17, b=34, c=35: X>Y 52:34, Y>S 51:35, S>X 35:17 (skipped). X wins
// with A=17, needs 51 (17*2 > 100 fails): short by 34. Y wins round 2
// with A=51 (102 > 100) and is approved; ranked_above_winner lists X
// above Y by 52, below by 34.
func TestContestS20Fallback(t *testing.T) {
	nd, cs, opts, cid, ranks := fallback(t, 100, 17, 34, 35, 4)
	checkFallback(t, nd, cs, opts, cid, ranks, 17, 52, 34)
}

// S21: a contest deadline 30 hours after open is refused
// deadline_too_short; a seven-option contest falls back from a winner
// that fails by 189. N=500, a=62, b=189, c=130: X>Y 192:189, Y>S 251:130,
// S>X 130:62 (skipped). X has A=62 and needs 251: short by 189. Y has
// A=251 (502 > 500): approved; X ranked above Y by 192, below by 189.
func TestContestS21Fallback(t *testing.T) {
	nd, cs, opts, cid, ranks := fallback(t, 500, 62, 189, 130, 5)
	checkFallback(t, nd, cs, opts, cid, ranks, 62, 192, 189)
}

// TestContestDeadlineTooShort (D74, S21): a contest's ranking deadline
// must be 72 hours of witnessed time after the later of the contest's
// open and any option's open (a variant joining it included).
func TestContestDeadlineTooShort(t *testing.T) {
	nd := newNode(t)
	cs := newContestSession(t, nd, 10)
	var opts []dag.ID
	for i := 0; i < 2; i++ {
		tx, mr := cs.option(t, nd, fmt.Sprintf("d%d", i), map[string]string{"/us/t1/s1": fmt.Sprintf("The period is %d days.", 40+i)}, dag.ID{})
		nd.submit(t, cs.session, tx)
		opts = append(opts, mr)
	}
	// The builder's clock is 2026-09-21T12:00 plus a second per entry: a
	// deadline at 2026-09-22T18:00 is 30 hours after the open.
	short, _ := cs.open(t, nd, opts, "2026-09-22T18:00:00Z")
	refusedWith(t, nd, short, dag.CodeDeadlineTooShort)
	ok, cid := cs.open(t, nd, opts, "2026-09-24T13:00:00Z")
	nd.submit(t, cs.session, ok)
	if c := nd.getMap(t, "/contests/"+cid.String(), nil); c["deadline"] != "2026-09-24T13:00:00Z" {
		t.Fatalf("contest %v", c)
	}
	// A variant joining that contest two hours later (builder clock
	// advanced 2 h: its open's witnessed time is after 2026-09-21T14:00)
	// would leave less than 71 hours to the ranking deadline, which D74
	// measures from the later of the two opens: deadline_too_short.
	cs.b.Advance(2 * time.Hour)
	late, _ := cs.option(t, nd, "late-variant", map[string]string{"/us/t1/s1": "The period is 50 days."}, opts[0])
	refusedWith(t, nd, late, dag.CodeDeadlineTooShort)
	if c := nd.getMap(t, "/contests/"+cid.String(), nil); len(c["options"].([]any)) != 2 {
		t.Fatalf("a refused variant joined: %v", c["options"])
	}
	// Too few options, an option twice: contest_invalid.
	one, _ := cs.open(t, nd, opts[:1], "")
	refusedWith(t, nd, one, dag.CodeContestInvalid)
	twice, _ := cs.open(t, nd, []dag.ID{opts[0], opts[0]}, "")
	refusedWith(t, nd, twice, dag.CodeContestInvalid)
}

// S20's variants: a variant touching a node its base does not touch is
// refused variant_invalid, as is a variant of a variant; a valid variant
// is grouped with its base automatically (the contest's id is the
// base's) and its fact sheet shows versus_base.
func TestContestVariants(t *testing.T) {
	nd := newNode(t)
	cs := newContestSession(t, nd, 10)
	tx, base := cs.option(t, nd, "package", map[string]string{"/us/t1/s1": "The period is 45 days.", "/us/t1/s2": "The fee is 10 dollars."}, dag.ID{})
	nd.submit(t, cs.session, tx)
	bad, _ := cs.option(t, nd, "wide", map[string]string{"/us/t1/s3": "Something else."}, base)
	refusedWith(t, nd, bad, dag.CodeVariantInvalid)
	good, variant := cs.option(t, nd, "narrow", map[string]string{"/us/t1/s1": "The period is 40 days."}, base)
	nd.submit(t, cs.session, good)
	c := nd.getMap(t, "/contests/"+base.String(), nil)
	if got := fmt.Sprint(c["options"]); got != fmt.Sprint(sortIDs(base, variant)) {
		t.Fatalf("contest options %s", got)
	}
	f := nd.getMap(t, "/merge-requests/"+variant.String()+"/facts", nil)["facts"].(map[string]any)
	vb, ok := f["versus_base"].(map[string]any)
	if !ok || fmt.Sprint(vb["modified"]) != "[/us/t1/s1 /us/t1/s2]" {
		t.Fatalf("versus_base %v", f["versus_base"])
	}
	if bf := nd.getMap(t, "/merge-requests/"+base.String()+"/facts", nil)["facts"].(map[string]any); bf["versus_base"] != nil {
		t.Fatalf("the base's versus_base %v", bf["versus_base"])
	}
	ofVariant, _ := cs.option(t, nd, "nested", map[string]string{"/us/t1/s1": "The period is 41 days."}, variant)
	refusedWith(t, nd, ofVariant, dag.CodeVariantInvalid)
}

func sortIDs(ids ...dag.ID) []string {
	out := make([]string, len(ids))
	for i, x := range ids {
		out[i] = x.String()
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// signAt seals an envelope at a chosen ts (the builder's clock moves one
// second per entry; D49 needs days).
func signAt(b *ht.Builder, s *dag.Signer, typ dag.TxType, body any, parents []dag.ID, ts time.Time) ht.Tx {
	raw, err := dag.Marshal(body)
	if err != nil {
		panic(err)
	}
	env := &dag.Envelope{Type: typ, Session: b.Session, Parents: parents, Body: raw, TS: ts.UTC().Format(time.RFC3339)}
	out, id, err := env.Seal(s)
	if err != nil {
		panic(err)
	}
	return ht.Tx{ID: id, Env: env, Bytes: out, Parents: parents}
}

func lawText(t *testing.T, nd *apiNode, nid string) string {
	t.Helper()
	var find func(n map[string]any) string
	find = func(n map[string]any) string {
		if n["nid"] == nid {
			s, _ := n["text"].(string)
			return s
		}
		cs, _ := n["children"].([]any)
		for _, c := range cs {
			if s := find(c.(map[string]any)); s != "" {
				return s
			}
		}
		return ""
	}
	return find(nd.getMap(t, "/law", nil)["root"].(map[string]any))
}

// S18's emergency: an MR with emergency true and 7 of 10 members
// answering emergency "yes" (7*3 >= 2*10) is designated, needs 24 hours
// of notice instead of 72, and merges on a determination 25 hours after
// its open. Its expiry change restores the text once an entry witnessed
// 30 days after the merge exists: not at 29 days, at 30 days and a
// second. A governance MR asking for emergency handling is refused
// emergency_invalid.
func TestEmergencyMergedAndExpired(t *testing.T) {
	nd := newNode(t)
	b := ht.New(ht.Options{Simulation: true})
	s := &session{b: b, space: b.Session.String()}
	nd.submit(t, s, b.Create)
	nd.submit(t, s, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	nd.submit(t, s, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	nd.submit(t, s, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	nd.submit(t, s, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 5 days."), ht.Replace(b.Trees[b.Genesis], "/us/t1/s2", "The period is 5 days.")}, s.last)
	nd.submit(t, s, tx)
	raw, _ := b.MRBody(ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)})
	raw = bytes.Replace(raw, []byte(`"emergency":false`), []byte(`"emergency":true`), 1)
	mr := dag.Sum(raw)
	open := b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(raw), []dag.ID{s.last})
	nd.submit(t, s, open)
	openedAt, _ := time.Parse(time.RFC3339, open.Env.TS)
	var ballots []dag.ID
	for m := 0; m < 7; m++ {
		bt := b.Sign(ht.Member(m), dag.TxBallotCast, map[string]any{"mr": mr, "choice": "approve", "emergency": "yes", "supersedes": nil}, []dag.ID{s.last})
		nd.submit(t, s, bt)
		ballots = append(ballots, bt.ID)
	}
	mergedAt := openedAt.Add(25 * time.Hour)
	nd.submit(t, s, signAt(b, ht.Member(3), dag.TxMRDetermine, map[string]any{"mr": mr, "ballots": ballots, "outcome": "approved"}, []dag.ID{s.last}, mergedAt))
	m := nd.getMap(t, "/merge-requests/"+mr.String(), nil)
	ev := m["evaluations"].([]any)[0].(map[string]any)["result"].(map[string]any)
	if m["status"] != house.StatusMerged || ev["emergency_designated"] != true || ev["timing"].(map[string]any)["notice_required"] != float64(86400) {
		t.Fatalf("emergency MR %v / %v", m["status"], ev)
	}
	if got := lawText(t, nd, "/us/t1/s1"); got != "The period is 5 days." {
		t.Fatalf("law after the emergency merge: %q", got)
	}
	// A later, ordinary MR changes s2 again (6 of 10 approve): the expiry
	// must leave s2 alone (D49 "except for nodes changed by a later
	// non-emergency MR").
	merge, _ := dag.ParseID(m["merge"].(string))
	b.Trees[merge] = b.Trees[change] // the merge into the untouched genesis is the draft's text
	nd.submit(t, s, b.BranchCreate(ht.Member(1), "later", "drafters", house.RootBranch, merge, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	ltx, lchange := b.Append(ht.Member(2), "later", merge, []statute.Op{ht.Replace(b.Trees[merge], "/us/t1/s2", "The period is 60 days.")}, s.last)
	nd.submit(t, s, ltx)
	lopen, lmr := b.Open(ht.Member(1), ht.MR{Source: "later", SourceHead: lchange, TargetHead: merge, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	nd.submit(t, s, lopen)
	var lballots []dag.ID
	for i := 0; i < 6; i++ {
		bt := b.Ballot(ht.Member(i), lmr, "approve", dag.ID{}, s.last)
		nd.submit(t, s, bt)
		lballots = append(lballots, bt.ID)
	}
	nd.submit(t, s, signAt(b, ht.Member(3), dag.TxMRDetermine, map[string]any{"mr": lmr, "ballots": lballots, "outcome": "approved"}, []dag.ID{s.last}, mergedAt.Add(4*24*time.Hour)))
	if st, _ := mrStatus(t, nd, lmr); st != house.StatusMerged || lawText(t, nd, "/us/t1/s2") != "The period is 60 days." {
		t.Fatalf("the later MR: %s, s2 %q", st, lawText(t, nd, "/us/t1/s2"))
	}
	// 29 days later: nothing expires yet.
	nd.submit(t, s, signAt(b, ht.Member(5), dag.TxKeyRegister, map[string]any{"key": ht.Member(5).Key()}, []dag.ID{s.last}, mergedAt.Add(29*24*time.Hour)))
	if got := lawText(t, nd, "/us/t1/s1"); got != "The period is 5 days." {
		t.Fatalf("law at 29 days: %q", got)
	}
	// 30 days and a second: the expiry change restores the text.
	nd.submit(t, s, signAt(b, ht.Member(6), dag.TxKeyRegister, map[string]any{"key": ht.Member(6).Key()}, []dag.ID{s.last}, mergedAt.Add(30*24*time.Hour+time.Second)))
	if got := lawText(t, nd, "/us/t1/s1"); got != "The period is 30 days." {
		t.Fatalf("law after the expiry: %q", got)
	}
	if got := lawText(t, nd, "/us/t1/s2"); got != "The period is 60 days." {
		t.Fatalf("the expiry restored s2, which a later ordinary MR changed: %q", got)
	}
	root := nd.getMap(t, "/branches/root", nil)["branch"].(map[string]any)
	if hs, _ := root["heads"].([]any); len(hs) != 1 || hs[0] == m["merge"] {
		t.Fatalf("the root head is still the emergency merge: %v", root["heads"])
	}
	// A governance MR asking for emergency handling: emergency_invalid.
	graw, _ := b.MRBody(ht.MR{Kind: "governance", TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.TwoThirds(), Set: map[string]any{"owner": "group:drafters"}})
	graw = bytes.Replace(graw, []byte(`"emergency":false`), []byte(`"emergency":true`), 1)
	refusedWith(t, nd, b.Sign(ht.Member(1), dag.TxMROpen, json.RawMessage(graw), []dag.ID{s.last}), dag.CodeEmergencyInvalid)
}

// S18's amendment notice (D48) and D68's: a version that supersedes an MR
// and touches only nodes the superseded one touched, and a variant, need
// min(min_notice, 86400) of notice; a version touching another node keeps
// the rule's 72 hours. Read from the live tally's timing.
func TestShortNotice(t *testing.T) {
	nd := newNode(t)
	cs := newContestSession(t, nd, 10)
	tx, first := cs.option(t, nd, "v1", map[string]string{"/us/t1/s1": "The period is 45 days.", "/us/t1/s2": "The fee is 10 dollars."}, dag.ID{})
	nd.submit(t, cs.session, tx)
	supersede := func(name string, edits map[string]string) dag.ID {
		nd.submit(t, cs.session, cs.b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, cs.b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), cs.last))
		var ops []statute.Op
		for _, nid := range []string{"/us/t1/s1", "/us/t1/s2", "/us/t1/s3"} {
			if text, ok := edits[nid]; ok {
				ops = append(ops, ht.Replace(cs.b.Trees[cs.b.Genesis], nid, text))
			}
		}
		atx, change := cs.b.Append(ht.Member(2), name, cs.b.Genesis, ops, cs.last)
		nd.submit(t, cs.session, atx)
		open, mr := cs.b.Open(ht.Member(1), ht.MR{Source: name, SourceHead: change, TargetHead: cs.b.Genesis, Members: ht.Members(0, 10), Rule: cs.rule, Supersedes: first}, cs.last)
		nd.submit(t, cs.session, open)
		return mr
	}
	notice := func(mr dag.ID) any {
		res := nd.getMap(t, "/merge-requests/"+mr.String()+"/tally", nil)["result"].(map[string]any)
		return res["timing"].(map[string]any)["notice_required"]
	}
	if got := notice(first); got != float64(259200) {
		t.Fatalf("the first version's notice %v", got)
	}
	v2 := supersede("v2", map[string]string{"/us/t1/s1": "The period is 40 days."})
	if got := notice(v2); got != float64(86400) {
		t.Fatalf("an amendment within the same nodes: notice %v, want 86400", got)
	}
	if got := notice(supersede("v3", map[string]string{"/us/t1/s3": "New."})); got != float64(259200) {
		t.Fatalf("an amendment touching another node: notice %v, want 259200", got)
	}
	// A variant of the (superseded) first version is refused; of v2, open,
	// it is a variant with 24 hours of notice.
	bad, _ := cs.option(t, nd, "v4", map[string]string{"/us/t1/s1": "The period is 41 days."}, first)
	refusedWith(t, nd, bad, dag.CodeVariantInvalid)
	vtx, variant := cs.option(t, nd, "v5", map[string]string{"/us/t1/s1": "The period is 42 days."}, v2)
	nd.submit(t, cs.session, vtx)
	if got := notice(variant); got != float64(86400) {
		t.Fatalf("a variant's notice %v, want 86400", got)
	}
}
