package rules

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
)

// Contests (30k §7, D47, D71, D77): competing MRs decided by ranked pairs,
// the winner held to its own rule against the status quo, and fallback
// rounds when it fails. Everything here is a function of the contest's
// options and the set of rankings given; the pairwise counts are integers
// and every comparison is exact.

// StatusQuo is the wire name of the status quo option in a ranking.
const StatusQuo = "status_quo"

// Contest sizes (§7: 2–9 options).
const (
	MinContestOptions = 2
	MaxContestOptions = 9
)

// Reasons a contest gives an option.
const (
	ReasonContestWon        Reason = "contest_won"         // the approved option
	ReasonContestLost       Reason = "contest_lost"        // another option (or the status quo) won
	ReasonContestRuleFailed Reason = "contest_rule_failed" // won a round, failed its own rule (D71)
)

// ContestOpenBody is the body of contest.open (§7, D74):
//
//	{"options":["sha256:<mr>",...],"deadline":"RFC 3339 UTC"?}
//
// Deadline, the ranking deadline, is witan's reading of D74's "a
// contest's ranking deadline"; zero means none.
type ContestOpenBody struct {
	Options  []dag.ID
	Deadline time.Time
}

func contestInvalidf(format string, args ...any) error {
	return dag.Errorf(dag.CodeContestInvalid, "rules: "+format, args...)
}

// DecodeContestOpen decodes and checks the body of a contest.open. Malformed
// JSON or ids are schema; fewer than 2 or more than 9 options, or an option
// listed twice, is contest_invalid.
func DecodeContestOpen(b []byte) (ContestOpenBody, error) {
	var body ContestOpenBody
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return body, schemaf("contest.open: %v", err)
	}
	f, err := object(canon, "contest.open")
	if err != nil {
		return body, err
	}
	if err := f.only("options", "deadline"); err != nil {
		return body, err
	}
	ids, err := f.ids("options", 16)
	if err != nil {
		return body, err
	}
	if err := checkOptions(ids); err != nil {
		return body, err
	}
	body.Options = ids
	if f.present("deadline") {
		if body.Deadline, err = f.time("deadline"); err != nil {
			return body, err
		}
	}
	return body, nil
}

func checkOptions(ids []dag.ID) error {
	if len(ids) < MinContestOptions || len(ids) > MaxContestOptions {
		return contestInvalidf("a contest has 2 to 9 options, not %d", len(ids))
	}
	s := slices.Clone(ids)
	slices.SortFunc(s, dag.ID.Compare)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return contestInvalidf("option %s is listed twice", s[i])
		}
	}
	return nil
}

// MarshalJSON writes the body canonically; deadline is left out when zero.
func (b ContestOpenBody) MarshalJSON() ([]byte, error) {
	w := struct {
		Deadline string   `json:"deadline,omitempty"`
		Options  []dag.ID `json:"options"`
	}{Options: b.Options}
	if !b.Deadline.IsZero() {
		w.Deadline = b.Deadline.UTC().Format(time.RFC3339Nano)
	}
	return dag.Marshal(w)
}

// RankBody is the body of contest.rank (§7):
//
//	{"contest":"sha256:...","ranking":["sha256:<mr>"|"status_quo",...],"supersedes":"sha256:<rank>"|null}
//
// In Ranking the zero ID stands for the status quo.
type RankBody struct {
	Contest    dag.ID
	Ranking    []dag.ID
	Supersedes dag.ID
}

// DecodeRankBody decodes and checks the body of a contest.rank. A ranking
// that lists an option twice, or more than ten entries, is schema; whether
// its options belong to the contest is the Contest's to judge.
func DecodeRankBody(b []byte) (RankBody, error) {
	var body RankBody
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return body, schemaf("contest.rank: %v", err)
	}
	f, err := object(canon, "contest.rank")
	if err != nil {
		return body, err
	}
	if err := f.only("contest", "ranking", "supersedes"); err != nil {
		return body, err
	}
	s, err := f.str("contest", true)
	if err != nil {
		return body, err
	}
	if body.Contest, err = dag.ParseID(s); err != nil {
		return body, schemaf("contest.rank: contest: %v", err)
	}
	raw, ok := f.raw["ranking"]
	if !ok || string(raw) == "null" {
		return body, schemaf("contest.rank: ranking missing")
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return body, schemaf("contest.rank: ranking must be an array of strings")
	}
	if len(names) > MaxContestOptions+1 {
		return body, schemaf("contest.rank: ranking of %d entries (at most %d)", len(names), MaxContestOptions+1)
	}
	body.Ranking = make([]dag.ID, len(names))
	for i, n := range names {
		if n == StatusQuo {
			continue
		}
		if body.Ranking[i], err = dag.ParseID(n); err != nil {
			return body, schemaf("contest.rank: ranking[%d]: %v", i, err)
		}
	}
	for i := range body.Ranking {
		for j := 0; j < i; j++ {
			if body.Ranking[i] == body.Ranking[j] {
				return body, schemaf("contest.rank: ranking lists %s twice", optionName(body.Ranking[i]))
			}
		}
	}
	if s, err = f.str("supersedes", false); err != nil {
		return body, err
	}
	if f.present("supersedes") {
		if body.Supersedes, err = dag.ParseID(s); err != nil {
			return body, schemaf("contest.rank: supersedes: %v", err)
		}
	}
	return body, nil
}

// MarshalJSON writes the body canonically, with supersedes null when unset.
func (b RankBody) MarshalJSON() ([]byte, error) {
	names := make([]string, len(b.Ranking))
	for i, o := range b.Ranking {
		names[i] = optionName(o)
	}
	w := struct {
		Contest    dag.ID   `json:"contest"`
		Ranking    []string `json:"ranking"`
		Supersedes *dag.ID  `json:"supersedes"`
	}{Contest: b.Contest, Ranking: names}
	if b.Supersedes.Valid() {
		s := b.Supersedes
		w.Supersedes = &s
	}
	return dag.Marshal(w)
}

func optionName(o dag.ID) string {
	if !o.Valid() {
		return StatusQuo
	}
	return o.String()
}

// ids reads an array of sha256 ids of at most max entries.
func (f fields) ids(key string, max int) ([]dag.ID, error) {
	raw, ok := f.raw[key]
	if !ok || string(raw) == "null" {
		return nil, schemaf("%s: %s missing", f.what, key)
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, schemaf("%s: %s must be an array of strings", f.what, key)
	}
	if len(names) > max {
		return nil, contestInvalidf("%s: %s has %d entries (at most %d)", f.what, key, len(names), max)
	}
	out := make([]dag.ID, len(names))
	for i, n := range names {
		id, err := dag.ParseID(n)
		if err != nil {
			return nil, schemaf("%s: %s[%d]: %v", f.what, key, i, err)
		}
		out[i] = id
	}
	return out, nil
}

// Ranking is one contest.rank as a Contest sees it: the transaction's id,
// its author (already verified by the caller) and its decoded body.
type Ranking struct {
	Tx     dag.ID
	Author dag.Key
	RankBody
}

// maxSlots is the most options a contest evaluates: nine MRs and the
// status quo.
const maxSlots = MaxContestOptions + 1

// rankRec is one ranking of a member, as positions: pos[i] is the place of
// option i (0 = first); unranked options share the place after the last.
type rankRec struct {
	tx, sup dag.ID
	pos     [maxSlots]uint8
}

// Contest folds the rankings of one contest. Its options are kept in the
// order of their ids, MR ids first and the status quo last (the order of
// their wire names: "sha256:..." < "status_quo"). A Contest's result is a
// function of its options and the set of rankings added, never of their
// order. It is not safe for concurrent use.
type Contest struct {
	rule     *Rule
	el       *Electorate
	id       dag.ID
	deadline time.Time
	options  []dag.ID // sorted MR ids; the status quo is index len(options)
	byMember [][]rankRec
	arena    []rankRec // first-ranking storage, handed out one element at a time
	invalid  []Invalid
}

// NewContest returns an empty contest id over the options of body, every
// one of them under rule, with the electorate el frozen for them. It
// answers contest_invalid for fewer than 2 or more than 9 options, an
// option listed twice, or a capital_vote rule (which a contest may not
// use, §7).
func NewContest(rule *Rule, el *Electorate, id dag.ID, body ContestOpenBody) (*Contest, error) {
	if rule == nil || rule.kind == KindCapitalVote {
		return nil, contestInvalidf("a contest's options must share one rule that is not capital_vote")
	}
	if err := checkOptions(body.Options); err != nil {
		return nil, err
	}
	opts := slices.Clone(body.Options)
	slices.SortFunc(opts, dag.ID.Compare)
	return &Contest{rule: rule, el: el, id: id, deadline: body.Deadline, options: opts,
		byMember: make([][]rankRec, el.Len())}, nil
}

// Options returns the contest's MR options in id order.
func (c *Contest) Options() []dag.ID { return slices.Clone(c.options) }

// index returns an option's index; the zero ID is the status quo.
func (c *Contest) index(o dag.ID) (int, bool) {
	if !o.Valid() {
		return len(c.options), true
	}
	for i := range c.options { // at most nine: a scan beats a search
		if c.options[i] == o {
			return i, true
		}
	}
	return 0, false
}

// Add folds one ranking. It returns nil when the ranking is folded
// (including one that voids its author, and a repeat). A ranking that can
// never count is recorded in ContestResult.Invalid and returned as a
// *dag.ProtocolError: ballot_invalid for another contest, a non-member, or
// an option not in the contest; schema for a zero id or an option twice.
func (c *Contest) Add(r Ranking) error {
	idx, rec, err := c.check(r)
	if err != nil {
		pe := err.(*dag.ProtocolError)
		c.invalid = append(c.invalid, Invalid{Tx: r.Tx, Code: pe.Code, Detail: pe.Detail})
		return err
	}
	recs := c.byMember[idx]
	for i := range recs {
		if recs[i].tx == rec.tx {
			// A repeat. The same tx id with another body cannot happen for
			// real ids; keep the smaller so that order does not matter.
			if rankRecLess(rec, recs[i]) {
				recs[i] = rec
			}
			return nil
		}
	}
	if len(recs) == 0 {
		// A member's first ranking takes one element of an arena, capped
		// so that a second one grows into memory of its own: a contest of
		// thousands of rankers then allocates a few chunks, not a slice
		// each.
		if len(c.arena) == 0 {
			c.arena = make([]rankRec, min(max(16, len(c.byMember)/4), 4096))
		}
		c.arena[0] = rec
		c.byMember[idx] = c.arena[0:1:1]
		c.arena = c.arena[1:]
		return nil
	}
	c.byMember[idx] = append(recs, rec)
	return nil
}

func rankRecLess(a, b rankRec) bool {
	if x := a.sup.Compare(b.sup); x != 0 {
		return x < 0
	}
	return slices.Compare(a.pos[:], b.pos[:]) < 0
}

func (c *Contest) check(r Ranking) (int, rankRec, error) {
	var rec rankRec
	switch {
	case !r.Tx.Valid():
		return 0, rec, schemaf("ranking has a zero tx id")
	case !r.Author.Valid():
		return 0, rec, schemaf("ranking %s has a zero author", r.Tx)
	case r.Contest != c.id:
		return 0, rec, dag.Errorf(dag.CodeBallotInvalid, "rules: ranking %s is on contest %s, not %s", r.Tx, r.Contest, c.id)
	case len(r.Ranking) > len(c.options)+1:
		return 0, rec, dag.Errorf(dag.CodeBallotInvalid, "rules: ranking %s lists %d options; the contest has %d", r.Tx, len(r.Ranking), len(c.options)+1)
	}
	idx, ok := c.el.Index(r.Author)
	if !ok {
		return 0, rec, dag.Errorf(dag.CodeBallotInvalid, "rules: ranking %s: author %s is not in the frozen electorate", r.Tx, r.Author)
	}
	rec.tx, rec.sup = r.Tx, r.Supersedes
	k := len(c.options) + 1
	unranked := uint8(len(r.Ranking))
	for i := 0; i < k; i++ {
		rec.pos[i] = unranked
	}
	var seen [maxSlots]bool
	for place, o := range r.Ranking {
		i, ok := c.index(o)
		if !ok {
			return 0, rec, dag.Errorf(dag.CodeBallotInvalid, "rules: ranking %s names %s, which is not an option of contest %s", r.Tx, optionName(o), c.id)
		}
		if seen[i] {
			return 0, rec, schemaf("ranking %s lists %s twice", r.Tx, optionName(o))
		}
		seen[i] = true
		rec.pos[i] = uint8(place)
	}
	return idx, rec, nil
}

// effective returns a member's effective ranking, or void when the
// member's rankings do not form one supersedes chain (two unlinked
// rankings void the member, as D10 for ballots). With k rankings they form
// one chain when there are k-1 supersedes links among them and no ranking
// is superseded twice; the effective one is the one nobody supersedes.
func effectiveRanking(recs []rankRec) (rec *rankRec, void bool) {
	if len(recs) == 0 {
		return nil, false
	}
	if len(recs) == 1 {
		return &recs[0], false
	}
	links := 0
	var indeg [64]uint8
	big := len(recs) > len(indeg)
	var in []int
	if big {
		in = make([]int, len(recs))
	}
	for i := range recs {
		if recs[i].sup == recs[i].tx || !recs[i].sup.Valid() {
			continue
		}
		for j := range recs {
			if j != i && recs[j].tx == recs[i].sup {
				links++
				if big {
					in[j]++
					if in[j] > 1 {
						return nil, true
					}
				} else {
					indeg[j]++
					if indeg[j] > 1 {
						return nil, true
					}
				}
				break
			}
		}
	}
	if links != len(recs)-1 {
		return nil, true
	}
	for j := range recs {
		d := 0
		if big {
			d = in[j]
		} else {
			d = int(indeg[j])
		}
		if d == 0 {
			return &recs[j], false
		}
	}
	return nil, true
}

// Pair is one pair of ranked pairs: Winner ranked above Loser by For
// members, below it by Against members (For > Against).
type Pair struct {
	Winner  string `json:"winner"`
	Loser   string `json:"loser"`
	For     uint64 `json:"for"`
	Against uint64 `json:"against"`
}

// Round is one run of ranked pairs over the options still in the contest.
type Round struct {
	Round   int      `json:"round"`
	Options []string `json:"options"` // the options in this round, status quo last
	// Locked lists the pairs locked, in the order they were considered;
	// Skipped those left out because they would have made a cycle.
	Locked  []Pair `json:"locked"`
	Skipped []Pair `json:"skipped"`
	Winner  string `json:"winner"`
	// Outcome is the winner's own rule against the status quo when the
	// winner is an MR (approved, rejected, expired or pending); empty when
	// the status quo wins.
	Outcome Outcome `json:"outcome,omitempty"`
	// Tally is the winner's tally against the status quo: A ranks it above
	// the status quo, R below, B equal.
	Tally *Tally `json:"tally"`
}

// OptionResult is what the contest decides for one MR option.
type OptionResult struct {
	Option  string  `json:"option"`
	Outcome Outcome `json:"outcome"`
	Reason  Reason  `json:"reason,omitempty"`
}

// AboveWinner is one entry of ranked_above_winner (D77): an option removed
// in a fallback round, with the members ranking it above and below the
// approved option.
type AboveWinner struct {
	Option      string `json:"option"`
	AboveWinner uint64 `json:"above_winner"`
	BelowWinner uint64 `json:"below_winner"`
}

// ContestResult is the evaluation of a contest.
type ContestResult struct {
	Contest dag.ID `json:"contest"`
	// Options lists the contest's options, MR ids in id order and the
	// status quo last; Pairwise[i][j] counts the members ranking
	// Options[i] above Options[j].
	Options  []string   `json:"options"`
	Pairwise [][]uint64 `json:"pairwise"`
	// Electorate is N; Rankers the members with an effective ranking; Void
	// the members voided by equivocation.
	Electorate uint64    `json:"electorate"`
	Rankers    uint64    `json:"rankers"`
	Void       uint64    `json:"void"`
	Voided     []dag.Key `json:"voided"`
	Invalid    []Invalid `json:"invalid"`
	Rounds     []Round   `json:"rounds"`
	// IfClosed is the contest's outcome over exactly these rankings, with
	// deadlines and notice taken as met: approved (Winner is the approved
	// MR), rejected (every option rejected; Winner is the status quo, or
	// the last option standing failed) or pending (a round's winner under
	// an on_threshold rule can still pass). Outcome is the same with the
	// contest's ranking deadline, the rule's deadline and the approved
	// option's notice honoured at Context.At, as a strong node would.
	IfClosed Outcome `json:"if_closed"`
	Outcome  Outcome `json:"outcome"`
	Winner   string  `json:"winner"`
	// Decisions gives every MR option its outcome, in option order.
	Decisions []OptionResult `json:"decisions"`
	// RankedAboveWinner is D77's list when the approved option is not the
	// first round's winner, else nil.
	RankedAboveWinner []AboveWinner `json:"ranked_above_winner"`
	// Timing is the approved option's timing (notice from the latest
	// option's open, the rule's deadline), plus the contest's deadline.
	Timing          Timing     `json:"timing"`
	Deadline        *time.Time `json:"deadline"`
	DeadlineReached bool       `json:"deadline_reached"`
}

// ContestContext is the input of a contest evaluation besides its
// rankings. NoticeStart is when notice began for the contest: the
// checkpoint time of the latest option's open (§7). Facts gives each MR
// option's facts (reverts, structure, short notice); a missing entry is
// the zero Facts.
type ContestContext struct {
	At          time.Time
	NoticeStart time.Time
	Facts       map[dag.ID]Facts
}

// Result evaluates the contest: pairwise counts over the effective
// rankings, then rounds of ranked pairs, each round's winner held to its
// rule against the status quo, until an option passes, the status quo
// wins or is left alone, or a winner is still pending. It costs
// O(rankings + members·k²) for k options, plus O(k⁴) for the rounds.
func (c *Contest) Result(ctx ContestContext) ContestResult {
	k := len(c.options) + 1
	sq := k - 1
	res := ContestResult{Contest: c.id, Electorate: uint64(c.el.Len()), Voided: []dag.Key{}}
	res.Options = make([]string, k)
	for i, o := range c.options {
		res.Options[i] = o.String()
	}
	res.Options[sq] = StatusQuo

	// Pairwise counts. Members with the same ranking add the same amounts,
	// so identical position vectors are counted once and multiplied: a
	// large contest has few distinct rankings.
	var d [maxSlots][maxSlots]uint64
	type group struct {
		pos [maxSlots]uint8
		n   uint64
	}
	var groups []group
	find := make(map[[maxSlots]uint8]int)
	for m := range c.byMember {
		rec, void := effectiveRanking(c.byMember[m])
		if void {
			res.Void++
			res.Voided = append(res.Voided, c.el.members[m])
			continue
		}
		if rec == nil {
			continue
		}
		res.Rankers++
		if g, ok := find[rec.pos]; ok {
			groups[g].n++
			continue
		}
		find[rec.pos] = len(groups)
		groups = append(groups, group{pos: rec.pos, n: 1})
	}
	for _, g := range groups {
		for i := 0; i < k; i++ {
			for j := i + 1; j < k; j++ {
				switch {
				case g.pos[i] < g.pos[j]:
					d[i][j] += g.n
				case g.pos[j] < g.pos[i]:
					d[j][i] += g.n
				}
			}
		}
	}
	res.Pairwise = make([][]uint64, k)
	for i := range res.Pairwise {
		res.Pairwise[i] = slices.Clone(d[i][:k])
	}
	res.Invalid = (&Poll{invalid: c.invalid}).Invalid()

	// Rounds.
	var in [maxSlots]bool
	for i := 0; i < k; i++ {
		in[i] = true
	}
	outcome := make([]OptionResult, k-1)
	for i := range outcome {
		outcome[i] = OptionResult{Option: res.Options[i], Outcome: Pending}
	}
	var removed []int
	approved := -1
	res.IfClosed = Pending
	for round := 1; ; round++ {
		var live []int
		for i := 0; i < k; i++ {
			if in[i] {
				live = append(live, i)
			}
		}
		r := Round{Round: round, Locked: []Pair{}, Skipped: []Pair{}}
		for _, i := range live {
			r.Options = append(r.Options, res.Options[i])
		}
		if len(live) == 1 { // the status quo alone
			r.Winner = StatusQuo
			res.Rounds = append(res.Rounds, r)
			res.IfClosed = Rejected
			break
		}
		w := rankedPairs(&d, live, sq, res.Options, &r)
		r.Winner = res.Options[w]
		if w == sq {
			res.Rounds = append(res.Rounds, r)
			res.IfClosed = Rejected
			break
		}
		p := c.versusStatusQuo(&d, w, sq, res)
		t := p.Tally(ctx.Facts[c.options[w]])
		r.Tally = &t
		o, _ := p.decide(ctx.Facts[c.options[w]])
		if o == Approved && ctx.Facts[c.options[w]].StructureFailed {
			o = Pending
		}
		r.Outcome = o
		res.Rounds = append(res.Rounds, r)
		if o == Approved {
			approved = w
			res.IfClosed = Approved
			break
		}
		if o == Pending {
			break
		}
		outcome[w] = OptionResult{Option: res.Options[w], Outcome: Rejected, Reason: ReasonContestRuleFailed}
		in[w] = false
		removed = append(removed, w)
	}
	switch res.IfClosed {
	case Approved:
		res.Winner = res.Options[approved]
		for i := range outcome {
			if i == approved {
				outcome[i] = OptionResult{Option: res.Options[i], Outcome: Approved, Reason: ReasonContestWon}
			} else if in[i] {
				outcome[i] = OptionResult{Option: res.Options[i], Outcome: Rejected, Reason: ReasonContestLost}
			}
		}
		if len(removed) > 0 {
			res.RankedAboveWinner = make([]AboveWinner, len(removed))
			for n, x := range removed {
				res.RankedAboveWinner[n] = AboveWinner{Option: res.Options[x], AboveWinner: d[x][approved], BelowWinner: d[approved][x]}
			}
			slices.SortFunc(res.RankedAboveWinner, func(a, b AboveWinner) int {
				switch {
				case a.Option < b.Option:
					return -1
				case a.Option > b.Option:
					return 1
				}
				return 0
			})
		}
	case Rejected:
		res.Winner = StatusQuo
		for i := range outcome {
			if in[i] {
				outcome[i] = OptionResult{Option: res.Options[i], Outcome: Rejected, Reason: ReasonContestLost}
			}
		}
	}
	res.Decisions = outcome

	// The clock: advisory on an eventual node, recorded beside IfClosed.
	res.Outcome = res.IfClosed
	res.Timing.NoticeMet = true
	if !c.deadline.IsZero() {
		dl := c.deadline
		res.Deadline = &dl
		res.DeadlineReached = !ctx.At.IsZero() && !ctx.At.Before(dl)
		if !res.DeadlineReached {
			res.Outcome = Pending
		}
	}
	if approved >= 0 {
		p := c.versusStatusQuo(&d, approved, sq, res)
		pr := p.Result(Context{Facts: ctx.Facts[c.options[approved]], At: ctx.At, NoticeStart: ctx.NoticeStart})
		res.Timing = pr.Timing
		if pr.Outcome != Approved {
			res.Outcome = Pending
		}
	} else if c.rule.kind == KindThresholdVote && c.rule.threshold.Closing == OnDeadline {
		dl := c.rule.threshold.Deadline
		res.Timing.Deadline = &dl
		res.Timing.DeadlineReached = !ctx.At.IsZero() && !ctx.At.Before(dl)
		if !res.Timing.DeadlineReached {
			res.Outcome = Pending
		}
	}
	return res
}

// versusStatusQuo returns a poll holding option w's counts against the
// status quo: A ranks w above it, R below, B equal (both placed alike,
// ranked or not); V the void members (§7).
func (c *Contest) versusStatusQuo(d *[maxSlots][maxSlots]uint64, w, sq int, res ContestResult) *Poll {
	a, r := d[w][sq], d[sq][w]
	return &Poll{rule: c.rule, el: c.el, n: res.Electorate, a: a, r: r, b: res.Rankers - a - r, v: res.Void}
}

// rankedPairs runs ranked pairs over the live options (§7): every pair
// with a majority one way, sorted by winning count descending, then by
// smaller losing count, then by the winner's option id and the loser's;
// each locked unless it would close a cycle. The winner is the option no
// locked pair beats. When several are unbeaten (pairs with equal counts
// both ways are never locked), the status quo wins if it is among them,
// else the one with the smallest id: a contest never lowers the bar.
func rankedPairs(d *[maxSlots][maxSlots]uint64, live []int, sq int, names []string, r *Round) int {
	type pr struct{ w, l int }
	var pairs []pr
	for _, i := range live {
		for _, j := range live {
			if i != j && d[i][j] > d[j][i] {
				pairs = append(pairs, pr{i, j})
			}
		}
	}
	// Option index order is option id order, so the id tie-break compares
	// indices.
	slices.SortFunc(pairs, func(a, b pr) int {
		switch {
		case d[a.w][a.l] != d[b.w][b.l]:
			if d[a.w][a.l] > d[b.w][b.l] {
				return -1
			}
			return 1
		case d[a.l][a.w] != d[b.l][b.w]:
			if d[a.l][a.w] < d[b.l][b.w] {
				return -1
			}
			return 1
		case a.w != b.w:
			return a.w - b.w
		}
		return a.l - b.l
	})
	var locked [maxSlots][maxSlots]bool
	var beaten [maxSlots]bool
	for _, p := range pairs {
		pair := Pair{Winner: names[p.w], Loser: names[p.l], For: d[p.w][p.l], Against: d[p.l][p.w]}
		if reaches(&locked, p.l, p.w) {
			r.Skipped = append(r.Skipped, pair)
			continue
		}
		locked[p.w][p.l] = true
		beaten[p.l] = true
		r.Locked = append(r.Locked, pair)
	}
	if !beaten[sq] {
		return sq
	}
	for _, i := range live {
		if !beaten[i] {
			return i
		}
	}
	return sq // unreachable: an acyclic locked graph has an unbeaten option
}

// reaches reports whether a path of locked pairs leads from a to b.
func reaches(locked *[maxSlots][maxSlots]bool, a, b int) bool {
	var seen [maxSlots]bool
	stack := []int{a}
	seen[a] = true
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == b {
			return true
		}
		for y := 0; y < maxSlots; y++ {
			if locked[x][y] && !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return false
}

// EvaluateContest is the pure function of a contest determination: it
// compiles ref, freezes electorate, folds rankings (in any order; repeats
// are ignored) and evaluates them in ctx. Refused rankings are reported in
// ContestResult.Invalid; the error is Compile's, NewElectorate's or
// NewContest's.
func EvaluateContest(ref Ref, electorate []dag.Key, contest dag.ID, body ContestOpenBody, rankings []Ranking, ctx ContestContext) (ContestResult, error) {
	if ref.Kind == KindCapitalVote {
		return ContestResult{}, contestInvalidf("a contest may not use capital_vote")
	}
	rule, err := Compile(ref)
	if err != nil {
		return ContestResult{}, err
	}
	el, err := NewElectorate(electorate)
	if err != nil {
		return ContestResult{}, err
	}
	c, err := NewContest(rule, el, contest, body)
	if err != nil {
		return ContestResult{}, err
	}
	for _, r := range rankings {
		_ = c.Add(r) // refusals are recorded in the contest
	}
	return c.Result(ctx), nil
}
