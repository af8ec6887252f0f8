// Command witan runs and talks to witan replicas. Not for use in real
// elections or governance.
//
//	witan up          run a node: Badger store in ./witan-data, node key,
//	                  libp2p sync (mDNS, -peer), HTTP API on 127.0.0.1:8030
//	witan keygen      make an Ed25519 signing key (file mode 0600)
//	witan submit      sign an envelope drafted in JSON and post it; print the
//	                  node's signed receipt
//	witan sync PEER   make the running node pull from a peer now
//	witan sessions    the sessions a node holds, or (-available) its peers'
//	witan join ID     make the running node join a peer's session and pull it
//	witan leave ID    undo a join that brought nothing
//	witan memory      put, read and trace CAT7 memory blocks on a node
//	witan class       start a class from the template; enrol students
//	witan mr open     propose a section's new text as an MR (diff shown first)
//	witan vote        cast a ballot on an MR
//	witan mr close    sign the determination an MR's rule allows (shown first)
//	witan verify URL  the L0 verifier: replay a node's log, match its checkpoint
//	witan verify-extract FILE
//	                  check an evidence extract offline (no network)
//	witan log         a session's log in the node's order, with finality
//	witan heads       a session's causal frontier
//	witan quarantine  what the node refused, with 30k codes
//	witan bench       the standard node benchmarks, as one table
//	witan meeting     replay a meeting transcript offline
//	witan version     version, VCS revision, Go version, store format
//
// Output is for people by default and JSON with -json. Exit codes: 0 done,
// 1 failed, 2 bad command line, 3 refused (a rejected submission or a failed
// verification), 130 interrupted (witan up stops on a signal and exits 0).
// main only builds the program and picks the exit code; each
// subcommand lives in its own file with its own type and flag.FlagSet, and
// uses witan's public API only. Every command that talks to a node names
// it the same way: -node URL, default $WITAN_NODE, else
// http://127.0.0.1:8030. "witan -h" and "witan COMMAND -h" print to stdout
// and exit 0.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // the command line was wrong
	exitRefused = 3 // a node rejected a submission, or a verification failed
	// exitInterrupted: SIGINT or SIGTERM stopped a command before it
	// finished (128 + SIGINT, as shells report it). witan up stops on a
	// signal by design and exits 0.
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	os.Exit(m.ExitCode(err))
}

// Main is the program: its streams and subcommands. Tests make their own
// with other streams.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// progressTo, if set, receives the progress bars, drawn even though
	// it is no terminal (tests read them there).
	progressTo io.Writer
}

// NewMain returns a Main on the process's standard streams.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

// errUsage marks command-line errors. Bare, its message has been printed;
// wrapped (fmt.Errorf("%w: …", errUsage, …)), ExitCode prints the wrapping.
var errUsage = errors.New("usage")

type command interface {
	Run(ctx context.Context, args []string) error
}

type commandInfo struct {
	name    string
	summary string // what the command is for: the usage list and its -h
	example string // one command line, shown by its -h
	make    func(m *Main) command
}

func (m *Main) commands() []commandInfo {
	return []commandInfo{
		{"up", "run a replica (Badger store, HTTP API on loopback)", "witan up -data ./witan-data -session sha256:…",
			func(m *Main) command { return &UpCommand{main: m} }},
		{"relay", "run a relay and DHT bootstrap node on a public address, for nodes behind NATs", "witan relay -listen /ip4/0.0.0.0/tcp/4001",
			func(m *Main) command { return &RelayCommand{main: m} }},
		{"keygen", "make an Ed25519 signing key", "witan keygen -out alice.key",
			func(m *Main) command { return &KeygenCommand{main: m} }},
		{"submit", "sign an envelope from JSON and post it to a node", "witan submit -key alice.key ballot.json",
			func(m *Main) command { return &SubmitCommand{main: m} }},
		{"sync", "pull sessions from a peer into the running node now", "witan sync /ip4/192.168.1.7/tcp/4001/p2p/12D3KooW…",
			func(m *Main) command { return &SyncCommand{main: m} }},
		{"peers", "list the node's peers and how each is connected: direct, hole-punched or relayed, since when", "witan peers",
			func(m *Main) command { return &PeersCommand{main: m} }},
		{"sessions", "list the sessions a node holds, or (-available) those its peers announce", "witan sessions -available",
			func(m *Main) command { return &SessionsCommand{main: m} }},
		{"join", "make the running node join a session a peer holds, and pull it", "witan join -wait 30s sha256:…",
			func(m *Main) command { return &JoinCommand{main: m} }},
		{"leave", "undo a join that brought nothing: stop pulling a session the node holds nothing of", "witan leave sha256:…",
			func(m *Main) command { return &LeaveCommand{main: m} }},
		{"class", "start a class from the template, or enrol students by their codes", "witan class start -key teacher.key -label 'Class rules'",
			func(m *Main) command { return &ClassCommand{main: m} }},
		{"mr", "open an MR amending a section (diff shown first), or close one (determination shown first)", "witan mr open -key me.key /us/t1/s1 'Homework is due 14 days after it is set.'",
			func(m *Main) command { return &MRCommand{main: m} }},
		{"vote", "cast your ballot on an MR (superseding your earlier one)", "witan vote -key me.key sha256:… approve",
			func(m *Main) command { return &VoteCommand{main: m} }},
		{"memory", "put, read and trace CAT7 memory blocks on a node", "witan memory get -level 2 notes sha256:…",
			func(m *Main) command { return &MemoryCommand{main: m} }},
		{"verify", "L0 verifier: replay a node's log and match its checkpoint", "witan verify -node http://127.0.0.1:8030",
			func(m *Main) command { return &VerifyCommand{main: m} }},
		{"harness", "run the 30k conformance harness against nodes: scenarios, convergence, metrics, conformance-report.json", "witan harness http://127.0.0.1:8030",
			func(m *Main) command { return &HarnessCommand{main: m} }},
		{"verify-extract", "check an evidence extract offline (GET /extract/{hash})", "witan verify-extract extract.json",
			func(m *Main) command { return &VerifyExtractCommand{main: m} }},
		{"log", "list a session's log in the node's order, by log index (from 0)", "witan log -limit 20",
			func(m *Main) command { return &LogCommand{main: m} }},
		{"heads", "show a session's causal frontier", "witan heads -session sha256:…",
			func(m *Main) command { return &HeadsCommand{main: m} }},
		{"quarantine", "list the entries a node refused, with their codes", "witan quarantine -json",
			func(m *Main) command { return &QuarantineCommand{main: m} }},
		{"bench", "run the standard benchmarks and print one table", "witan bench -n 1000",
			func(m *Main) command { return &BenchCommand{main: m} }},
		{"meeting", "replay a meeting transcript offline: outcomes and the note", "witan meeting replay transcript.jsonl",
			func(m *Main) command { return &MeetingCommand{main: m} }},
		{"version", "print witan's version, VCS revision, Go version and store format", "witan version -json",
			func(m *Main) command { return &VersionCommand{main: m} }},
	}
}

// Run runs the subcommand named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		m.usage(m.Stdout)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	for _, c := range m.commands() {
		if c.name == args[0] {
			return c.make(m).Run(ctx, args[1:])
		}
	}
	fmt.Fprintf(m.Stderr, "witan: unknown command %q\n\n", args[0])
	m.usage(m.Stderr)
	return errUsage
}

// ExitCode maps Run's error to the process's exit code and prints it.
func (m *Main) ExitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK // the help asked for has been printed on stdout
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		if err != errUsage && err != flag.ErrHelp {
			// A usage error wrapped with its own message (a flag's value
			// refused after parsing) has not been printed yet.
			fmt.Fprintf(m.Stderr, "witan: %s\n", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		}
		return exitUsage
	case errors.Is(err, errDeclined):
		return exitFailure // "nothing signed" has been printed
	case errors.Is(err, errRejected):
		return exitRefused // the receipt has been printed
	case errors.Is(err, errVerify):
		fmt.Fprintf(m.Stderr, "witan: %v\n", err)
		return exitRefused
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(m.Stderr, "witan: interrupted")
		return exitInterrupted
	default:
		fmt.Fprintf(m.Stderr, "witan: %s\n", userMessage(err))
		return exitFailure
	}
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprintln(w, "witan runs and talks to witan replicas. Not for use in real elections or governance.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: witan <command> [flags]")
	fmt.Fprintln(w)
	width := 0
	for _, c := range m.commands() {
		width = max(width, len(c.name))
	}
	for _, c := range m.commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "witan <command> -h" for a command's flags.`)
}

// version is the program's version, set at link time
// (-ldflags "-X main.version=v0.1.0").
var version = "devel"

// defaultNode is the node the client commands talk to: $WITAN_NODE, or
// the address witan up listens on by default.
func defaultNode() string {
	if n := os.Getenv("WITAN_NODE"); n != "" {
		return n
	}
	return "http://127.0.0.1:8030"
}

// errHelp: the user asked for a command's help (-h); it has been printed
// on stdout and the command exits 0.
var errHelp = errors.New("help shown")

// newFlagSet returns a FlagSet that reports errors instead of exiting.
// Its usage says what the command is for, shows one example (both from
// commands()) and lists the flags. Asked for with -h it goes to stdout;
// after a mistake, to stderr (see parse).
func (m *Main) newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("witan "+name, flag.ContinueOnError)
	out := &flagOutput{stdout: m.Stdout, stderr: m.Stderr, usage: usage}
	fs.SetOutput(out)
	var info commandInfo
	for _, c := range m.commands() {
		if c.name == strings.Fields(name)[0] {
			info = c
		}
	}
	out.example = info.example
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: witan %s\n\n", usage)
		if info.summary != "" {
			fmt.Fprintf(w, "%s.\n\nExample:\n  %s\n\n", upperFirst(info.summary), info.example)
		}
		fmt.Fprintln(w, "Flags:")
		fs.PrintDefaults()
	}
	return fs
}

// verbHelp is one verb of a command that has verbs (memory, meeting).
type verbHelp struct {
	usage, what string
}

// groupHelp answers a command with verbs called without a known verb:
// with -h (or help), its help on stdout; otherwise what is wrong and the
// same help on stderr.
func (m *Main) groupHelp(args []string, name string, verbs []verbHelp) error {
	w, err := m.Stderr, errUsage
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help"):
		w, err = m.Stdout, errHelp
	case len(args) == 0:
		fmt.Fprintf(w, "witan %s: missing the verb\n\n", name)
	default:
		fmt.Fprintf(w, "witan %s: unknown verb %q\n\n", name, args[0])
	}
	var info commandInfo
	for _, c := range m.commands() {
		if c.name == name {
			info = c
		}
	}
	fmt.Fprintf(w, "Usage: witan %s VERB [flags] ARGS\n\n%s.\n\nVerbs:\n", name, upperFirst(info.summary))
	width := 0
	for _, v := range verbs {
		width = max(width, len(v.usage))
	}
	for _, v := range verbs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, v.usage, v.what)
	}
	fmt.Fprintf(w, "\nExample:\n  %s\n\nRun \"witan %s VERB -h\" for a verb's flags.\n", info.example, name)
	return err
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagOutput is a FlagSet's output: stderr, except while parse holds what
// the FlagSet prints until it knows whether it was asked for (-h). It
// also keeps the command's usage line and example, for parseArgs.
type flagOutput struct {
	stdout, stderr io.Writer
	held           *bytes.Buffer
	usage, example string
}

// flagAliases are flags people try that witan spells otherwise, with the
// flag to use; "%s" is the value given.
var flagAliases = map[string]string{
	"port":    "-http 127.0.0.1:%s",
	"addr":    "-http %s",
	"listen":  "-http %s (HTTP) or -p2p-listen %s (libp2p)",
	"dir":     "-data %s",
	"datadir": "-data %s",
	"version": "witan version",
	"peers":   "-peer %s",
	"url":     "-node %s",
	"server":  "-node %s",
}

// flagMistake says what is wrong with a command line the flag package
// refused: for an unknown flag, the flag meant when witan can tell.
func flagMistake(fs *flag.FlagSet, args []string, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err.Error()
	}
	value := ""
	for i, a := range args {
		if strings.TrimLeft(a, "-") == name && i+1 < len(args) {
			value = args[i+1]
		} else if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), name+"="); ok {
			value = v
		}
	}
	msg := fmt.Sprintf("unknown flag -%s", name)
	if alias, ok := flagAliases[strings.ToLower(name)]; ok && (fs.Lookup(strings.Fields(strings.TrimPrefix(alias, "-"))[0]) != nil || !strings.HasPrefix(alias, "-")) {
		if value == "" {
			value = "…"
		}
		return msg + "; did you mean " + strings.ReplaceAll(alias, "%s", value) + "?"
	}
	best, bestD := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best != "" {
		return msg + "; did you mean -" + best + "?"
	}
	return msg
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func (o *flagOutput) Write(p []byte) (int, error) {
	if o.held != nil {
		return o.held.Write(p)
	}
	return o.stderr.Write(p)
}

// nodeHelp is the help of -node, the one way every client command names
// the node it talks to.
const nodeHelp = "URL of the node's HTTP API; $WITAN_NODE sets the default"

// nodeFlags are the flags of the commands that read from a node.
type nodeFlags struct {
	node    *string
	session *string
	json    *bool
}

// addNodeFlags defines -node, -session (with its help text) and -json on fs.
func addNodeFlags(fs *flag.FlagSet, sessionHelp, jsonHelp string) nodeFlags {
	return nodeFlags{
		node:    fs.String("node", defaultNode(), nodeHelp),
		session: fs.String("session", "", sessionHelp),
		json:    fs.Bool("json", false, jsonHelp),
	}
}

// parseArgs parses args into fs for a command that takes exactly n
// arguments after its flags; any other count says which argument is
// missing or extra, then shows the usage line and the example.
func parseArgs(fs *flag.FlagSet, args []string, n int) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == n {
		return nil
	}
	o, _ := fs.Output().(*flagOutput)
	if o == nil {
		fs.Usage()
		return errUsage
	}
	usage, example := o.usage, o.example
	names := positionals(usage)
	switch {
	case fs.NArg() < n && fs.NArg() < len(names):
		fmt.Fprintf(o.stderr, "%s: missing %s\n", fs.Name(), strings.Join(names[fs.NArg():], " "))
	case fs.NArg() < n:
		fmt.Fprintf(o.stderr, "%s: %d arguments missing\n", fs.Name(), n-fs.NArg())
	default:
		fmt.Fprintf(o.stderr, "%s: unexpected argument %q (flags go before the arguments)\n", fs.Name(), fs.Arg(n))
	}
	fmt.Fprintf(o.stderr, "Usage: witan %s\n", usage)
	if example != "" {
		fmt.Fprintf(o.stderr, "Example: %s\n", example)
	}
	fmt.Fprintf(o.stderr, "Run \"%s -h\" for its flags.\n", fs.Name())
	return errUsage
}

// positionals are the argument names of a usage line ("sync [-node URL]
// PEER" → PEER): its words outside brackets after the command's.
func positionals(usage string) []string {
	var out []string
	depth := 0
	var word strings.Builder
	afterFlag := false // the word after "-key" is its value
	flush := func() {
		w := word.String()
		word.Reset()
		if w == "" {
			return
		}
		if w != "..." && !strings.HasPrefix(w, "-") && !afterFlag {
			out = append(out, w)
		}
		afterFlag = strings.HasPrefix(w, "-")
	}
	for _, r := range usage {
		switch {
		case r == '[':
			flush()
			depth++
		case r == ']':
			depth--
		case depth > 0:
		case r == ' ':
			flush()
		default:
			word.WriteRune(r)
		}
	}
	flush()
	// The command's own words are lower case; arguments are upper case.
	var args []string
	for _, w := range out {
		if strings.ToUpper(w) == w || strings.ContainsAny(w, ".|") {
			args = append(args, w)
		}
	}
	return args
}

// parse parses args into fs, mapping every failure to errUsage (the
// usage on stderr) and -h to errHelp (the usage on stdout).
func parse(fs *flag.FlagSet, args []string) error {
	o, _ := fs.Output().(*flagOutput)
	if o != nil {
		o.held = new(bytes.Buffer)
	}
	err := fs.Parse(args)
	if o != nil {
		held := o.held
		o.held = nil
		switch {
		case errors.Is(err, flag.ErrHelp):
			o.stdout.Write(held.Bytes())
		case err != nil:
			// The mistake and what to do, not the whole help.
			fmt.Fprintf(o.stderr, "%s: %s\n", fs.Name(), flagMistake(fs, args, err))
			fmt.Fprintf(o.stderr, "Run \"%s -h\" for its flags.\n", fs.Name())
		}
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return errUsage
	}
	return nil
}
