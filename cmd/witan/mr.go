package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
)

// MRCommand opens and closes merge requests, so a whole vote can be
// walked from the command line:
//
//	witan mr open -key FILE NID TEXT   propose setting section NID's text:
//	                                   show the diff and the MR's id, then
//	                                   sign (a drafting group and branch of
//	                                   the key's own, the change, the MR)
//	witan mr close -key FILE MR        show the determination the MR's rule
//	                                   allows over every ballot the node
//	                                   holds, then sign it
//
// Both show what they will sign and ask before signing ("sign? [y/N]" on
// stdin); -yes signs without asking, -dry-run only shows. witan vote casts
// the ballots between.
type MRCommand struct {
	main *Main
	now  func() time.Time
}

// VoteCommand casts the key's ballot on an MR, superseding its previous
// ballot on that MR (two unlinked ballots would void the member, 30k §7).
type VoteCommand struct {
	main *Main
	now  func() time.Time
}

// verbHelp prints the usage of a command with verbs: each verb's line,
// what the command is for, its example, and where each verb's flags are.
func (m *Main) verbHelp(w io.Writer, name string, usages []string) {
	for i, u := range usages {
		if i == 0 {
			fmt.Fprintf(w, "Usage: witan %s\n", u)
		} else {
			fmt.Fprintf(w, "       witan %s\n", u)
		}
	}
	for _, c := range m.commands() {
		if c.name == name {
			fmt.Fprintf(w, "\n%s.\n\nExample:\n  %s\n", upperFirst(c.summary), c.example)
		}
	}
	fmt.Fprintf(w, "\n-node URL names the node ($WITAN_NODE sets the default, else %s); \"witan %s VERB -h\" lists a verb's flags.\n", "http://127.0.0.1:8030", name)
}

// errDeclined: the user did not confirm; nothing was signed.
var errDeclined = errors.New("not signed")

func (c *MRCommand) Run(ctx context.Context, args []string) error {
	verbs := map[string]int{"open": 2, "close": 1}
	if len(args) == 0 || verbs[args[0]] == 0 {
		w, err := c.main.Stderr, errUsage
		if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			w, err = c.main.Stdout, errHelp
		} else if len(args) > 0 {
			fmt.Fprintf(w, "witan mr: unknown verb %q (want open or close)\n", args[0])
		} else {
			fmt.Fprintln(w, "witan mr: say open or close")
		}
		c.main.verbHelp(w, "mr", []string{
			"mr open -key FILE [-node URL] [-session ID] [-summary TEXT] [-yes|-dry-run] NID TEXT",
			"mr close -key FILE [-node URL] [-session ID] [-yes|-dry-run] MR"})
		return err
	}
	verb := args[0]
	usage := map[string]string{
		"open":  "mr open -key FILE [-node URL] [-session ID] [-summary TEXT] [-yes|-dry-run] NID TEXT",
		"close": "mr close -key FILE [-node URL] [-session ID] [-yes|-dry-run] MR",
	}[verb]
	fs := c.main.newFlagSet("mr "+verb, usage)
	w := writeFlags(c.main, fs)
	summary := ""
	if verb == "open" {
		fs.StringVar(&summary, "summary", "", "your own description of the amendment (at most 280 characters; shown as yours)")
	}
	if err := parseArgs(fs, args[1:], verbs[verb]); err != nil {
		return err
	}
	s, err := w.open(ctx, c.now)
	if err != nil {
		return err
	}
	if verb == "open" {
		return c.open(ctx, s, fs.Arg(0), fs.Arg(1), summary)
	}
	mr, err := dag.ParseID(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("MR id %q: %w", fs.Arg(0), err)
	}
	return c.close(ctx, s, mr)
}

func (c *MRCommand) open(ctx context.Context, s *writer, nid, text, summary string) error {
	if len(summary) > 280 {
		return errors.New("-summary is longer than 280 characters")
	}
	st, err := s.state(ctx)
	if err != nil {
		return err
	}
	var law httpapi.LawAnswer
	if err := s.client.Get(ctx, "/law", nil, &law); err != nil {
		return err
	}
	tree, err := statute.NewTree(law.Root)
	if err != nil {
		return fmt.Errorf("the law the node sent: %w", err)
	}
	if tree.Hash() != law.Snapshot {
		return fmt.Errorf("the law the node sent hashes to %s, not its snapshot %s", tree.Hash(), law.Snapshot)
	}
	p, err := author.PlanAmendment(st, tree, law.Head, s.author.Key(), author.Amendment{NID: nid, Text: text, Summary: summary})
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "author: "))
	}
	out := c.main.Stdout
	fmt.Fprintf(out, "merge request %s\n", p.MRID)
	fmt.Fprintf(out, "  session     %s\n", p.Session)
	fmt.Fprintf(out, "  into        %s at %s\n", house.RootBranch, p.LawHead)
	fmt.Fprintf(out, "  from        branch %s (group %s%s)\n", p.Branch, p.Group, map[bool]string{true: ", new", false: ""}[p.NewGroup])
	fmt.Fprintf(out, "  electorate  %d members of the roster\n", len(p.MR.Members))
	if summary != "" {
		fmt.Fprintf(out, "  summary     %s (yours)\n", summary)
	}
	fmt.Fprintf(out, "what it changes:\n%s", p.Diff)
	n := 3
	if p.NewGroup {
		n++
	}
	if ok, err := s.confirm(fmt.Sprintf("sign these %d transactions with %s?", n, s.author.Key())); !ok {
		return err
	}
	txs, err := s.author.Amend(ctx, p, nil)
	if err != nil {
		return err
	}
	if err := s.submit(ctx, txs); err != nil {
		return err
	}
	fmt.Fprintf(out, "opened %s\n", p.MRID)
	return nil
}

func (c *MRCommand) close(ctx context.Context, s *writer, mr dag.ID) error {
	var m view.MR
	if err := s.client.Get(ctx, "/merge-requests/"+mr.String(), nil, &m); err != nil {
		return err
	}
	if m.Status != house.StatusOpen {
		return fmt.Errorf("MR %s is %s, not open: there is nothing to close", mr, m.Status)
	}
	ballots, err := s.ballots(ctx, func(env *dag.Envelope, b ballotBody) bool { return b.MR == mr })
	if err != nil {
		return err
	}
	var t httpapi.TallyAnswer
	if err := s.client.Get(ctx, "/merge-requests/"+mr.String()+"/tally", nil, &t); err != nil {
		return err
	}
	d, err := author.PlanClose(mr, t.Result, ballots)
	if err != nil {
		return fmt.Errorf("MR %s: %w", mr, err)
	}
	tl := t.Result.Tally
	out := c.main.Stdout
	fmt.Fprintf(out, "determination of %s\n", mr)
	fmt.Fprintf(out, "  outcome     %s\n", d.Outcome)
	fmt.Fprintf(out, "  ballots     %d, every ballot cast on it that the node holds\n", len(d.Ballots))
	fmt.Fprintf(out, "  tally       %d approve, %d reject, %d abstain", tl.Approve, tl.Reject, tl.Abstain)
	if tl.Void > 0 {
		fmt.Fprintf(out, ", %d voided", tl.Void)
	}
	fmt.Fprintf(out, " of an electorate of %d\n", tl.Electorate)
	if rs := tl.RuleShare; rs != nil {
		fmt.Fprintf(out, "  rule        %s %d/%d, threshold %s %d/%d\n", rs.Name, rs.Share.Num, rs.Share.Den, rs.Cmp, rs.Threshold.Num, rs.Threshold.Den)
	}
	fmt.Fprintln(out, "  every node re-counts exactly these ballots and refuses the determination if it disagrees")
	if ok, err := s.confirm(fmt.Sprintf("sign the determination %q with %s?", d.Outcome, s.author.Key())); !ok {
		return err
	}
	tx, err := s.author.Determine(ctx, s.session, d, nil)
	if err != nil {
		return err
	}
	if err := s.submit(ctx, []author.Tx{tx}); err != nil {
		return err
	}
	if err := s.client.Get(ctx, "/merge-requests/"+mr.String(), nil, &m); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is %s (%s)\n", mr, m.Status, m.Finality)
	return nil
}

func (c *VoteCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("vote", "vote -key FILE [-node URL] [-session ID] MR approve|reject|abstain")
	w := writeFlags(c.main, fs)
	if err := parseArgs(fs, args, 2); err != nil {
		return err
	}
	mr, err := dag.ParseID(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("MR id %q: %w", fs.Arg(0), err)
	}
	choice := fs.Arg(1)
	switch choice {
	case "approve", "reject", "abstain":
	default:
		fmt.Fprintf(c.main.Stderr, "witan vote: choice %q: say approve, reject or abstain\n", choice)
		return errUsage
	}
	*w.yes = true
	s, err := w.open(ctx, c.now)
	if err != nil {
		return err
	}
	me := s.author.Key()
	mine, err := s.ballots(ctx, func(env *dag.Envelope, b ballotBody) bool { return env.Author == me && b.MR == mr })
	if err != nil {
		return err
	}
	b := author.Ballot{MR: mr, Choice: choice}
	if len(mine) > 0 {
		b.Supersedes = mine[len(mine)-1]
		fmt.Fprintf(c.main.Stdout, "replaces your ballot %s\n", b.Supersedes)
	}
	tx, err := s.author.BallotCast(ctx, s.session, b, nil)
	if err != nil {
		return err
	}
	return s.submit(ctx, []author.Tx{tx})
}

// writeOpts are the flags of the commands that sign for a member.
type writeOpts struct {
	main    *Main
	key     *string
	node    *string
	session *string
	yes     *bool
	dry     *bool
}

func writeFlags(m *Main, fs *flag.FlagSet) *writeOpts {
	return &writeOpts{
		main:    m,
		key:     fs.String("key", "witan.key", "your member key (witan keygen)"),
		node:    fs.String("node", defaultNode(), nodeHelp),
		session: fs.String("session", "", "session id (default: the node's only session)"),
		yes:     fs.Bool("yes", false, "sign without asking"),
		dry:     fs.Bool("dry-run", false, "show what would be signed, and sign nothing"),
	}
}

// writer is a member's key, a node and one of its sessions.
type writer struct {
	client  *httpapi.Client
	author  *author.Author
	session dag.ID
	o       *writeOpts
	in      *bufio.Reader
}

func (o *writeOpts) open(ctx context.Context, now func() time.Time) (*writer, error) {
	signer, err := readKeyFile(*o.key)
	if err != nil {
		return nil, err
	}
	client := &httpapi.Client{BaseURL: *o.node}
	sid := *o.session
	if sid == "" {
		var s struct {
			Sessions []string `json:"sessions"`
		}
		if err := client.Get(ctx, "/sessions", nil, &s); err != nil {
			return nil, err
		}
		if len(s.Sessions) != 1 {
			return nil, fmt.Errorf("the node holds %d sessions: name one with -session (witan sessions lists them)", len(s.Sessions))
		}
		sid = s.Sessions[0]
	}
	id, err := dag.ParseID(sid)
	if err != nil {
		return nil, fmt.Errorf("-session %q: %w", sid, err)
	}
	client.Session = id.String()
	if now == nil {
		now = time.Now
	}
	a, err := author.New(author.Options{Signer: signer, Clock: now, Heads: clientHeads{client}})
	if err != nil {
		return nil, err
	}
	return &writer{client: client, author: a, session: id, o: o}, nil
}

func (s *writer) state(ctx context.Context) (*house.State, error) {
	var a httpapi.StateAnswer
	if err := s.client.Get(ctx, "/sessions/"+s.session.String()+"/state", nil, &a); err != nil {
		return nil, err
	}
	if a.State == nil {
		return nil, errors.New("the node sent no session state")
	}
	return a.State, nil
}

type ballotBody struct {
	MR dag.ID `json:"mr"`
}

// ballots lists the ballot.cast entries of the node's log that keep
// returns true for, in log order.
func (s *writer) ballots(ctx context.Context, keep func(*dag.Envelope, ballotBody) bool) ([]dag.ID, error) {
	var out []dag.ID
	q := url.Values{"limit": {strconv.Itoa(httpapi.MaxLogLimit)}}
	for {
		var p httpapi.LogPage
		if err := s.client.Get(ctx, "/log", q, &p); err != nil {
			return nil, err
		}
		for _, e := range p.Entries {
			env, _, _, err := dag.DecodeEnvelope(e.Envelope)
			if err != nil {
				return nil, fmt.Errorf("log index %d: %w", e.Position-1, err)
			}
			if env.Type != dag.TxBallotCast {
				continue
			}
			var b ballotBody
			if json.Unmarshal(env.Body, &b) == nil && keep(env, b) {
				out = append(out, e.Tx)
			}
		}
		if p.Next == nil {
			return out, nil
		}
		q.Set("after", *p.Next)
	}
}

// confirm asks question on stdout and reads the answer from stdin; -yes
// answers yes and -dry-run no. It returns false with errDeclined when
// nothing is to be signed, and false with nil after a dry run.
func (s *writer) confirm(question string) (bool, error) {
	out := s.m().Stdout
	switch {
	case *s.o.dry:
		fmt.Fprintln(out, "dry run: nothing signed")
		return false, nil
	case *s.o.yes:
		return true, nil
	}
	fmt.Fprintf(out, "%s [y/N] ", question)
	if s.in == nil {
		s.in = bufio.NewReader(s.m().Stdin)
	}
	line, err := s.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
		return true, nil
	}
	fmt.Fprintln(out, "nothing signed")
	return false, errDeclined
}

func (s *writer) m() *Main { return s.o.main }

// submit posts txs in order and prints each receipt; it stops at the
// first refused (exit 3).
func (s *writer) submit(ctx context.Context, txs []author.Tx) error {
	out := s.m().Stdout
	for _, tx := range txs {
		rc, err := s.client.Submit(ctx, tx.Bytes, tx.Attach)
		if rc == nil {
			return err
		}
		// The receipt's log_index counts from 0, as witan log, witan
		// submit and the page number entries.
		entry := ""
		if rc.LogIndex != nil {
			entry = fmt.Sprintf("  log index %d", *rc.LogIndex)
		}
		fmt.Fprintf(out, "%s  %-14s  %s%s\n", rc.Status, tx.Env.Type, tx.ID, entry)
		for _, e := range rc.Errors {
			fmt.Fprintf(out, "  error       %s: %s\n", e.Code, httpapi.PlainDetail(e.Detail))
		}
		if rc.Status != "accepted" {
			return errRejected
		}
	}
	return nil
}
