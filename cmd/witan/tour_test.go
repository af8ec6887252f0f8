package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var updateTour = flag.Bool("update-tour", false, "rewrite docs/tour.md's outputs, and the values its inputs take from them, with this run's")

// tourSection returns the lines of the console blocks of the section of
// docs/tour.md whose heading starts with heading.
func tourSection(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/tour.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in, block := false, false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = strings.HasPrefix(l, heading)
		case !in:
		case l == "```console":
			block = true
		case l == "```":
			block = false
		case block:
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("docs/tour.md has no console block under %q", heading)
	}
	return out
}

// tourToken matches the values of an output that differ from run to run.
// Each kind is one alternative; bound kinds must be the same value
// wherever the tour shows the same one (and different where it shows
// different ones), free kinds only have to have their shape.
var tourToken = regexp.MustCompile(`ed25519:[A-Za-z0-9_-]{43}` + // a key
	`|sha256:[0-9a-f]{64}` + // an id
	`|sha256:[0-9a-f]{8}…` + // an id as the examples shorten it
	`|12D3KooW[1-9A-HJ-NP-Za-km-z]{44}` + // a libp2p peer id
	`|/ip4/127\.0\.0\.1/(?:tcp|udp)/\d+` + // a libp2p port
	`|127\.0\.0\.1:\d+` + // an HTTP port
	`|amend-[0-9a-f]{12}` + // an amendment's branch, named by its change
	`|drafts-[A-Za-z0-9_-]{12}` + // a drafting group, named by its member's key
	`|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z` + // a time (free)
	`|go1\.\d+(?:\.\d+)?`) // the Go release (free)

func freeToken(s string) bool { k := kindOf(s); return k == "go1." || k == "time" }

// tourBindings maps the tour's values to this run's.
type tourBindings struct {
	toRun map[string]string
	toDoc map[string]string
}

func (b tourBindings) clone() tourBindings {
	c := tourBindings{toRun: map[string]string{}, toDoc: map[string]string{}}
	for k, v := range b.toRun {
		c.toRun[k], c.toDoc[v] = v, k
	}
	return c
}

func (b tourBindings) bind(doc, run string) {
	b.toRun[doc], b.toDoc[run] = run, doc
}

// input is a line of the tour as typed: its values the tour took from
// an earlier output are this run's.
func (b tourBindings) input(line string) string {
	return tourToken.ReplaceAllStringFunc(line, func(tok string) string {
		if r, ok := b.toRun[tok]; ok {
			return r
		}
		return tok
	})
}

// matchLine reports whether the run's line got is the tour's line want,
// binding the tour's values met for the first time to the run's. A " … "
// in want stands for any text (the tour elides there).
func (b tourBindings) matchLine(want, got string) bool {
	if strings.Contains(want, " … ") {
		parts := strings.Split(want, " … ")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got)
	}
	wt, gt := tourToken.FindAllStringIndex(want, -1), tourToken.FindAllStringIndex(got, -1)
	if len(wt) != len(gt) {
		return false
	}
	wp, gp := 0, 0
	for i := range wt {
		if want[wp:wt[i][0]] != got[gp:gt[i][0]] {
			return false
		}
		w, g := want[wt[i][0]:wt[i][1]], got[gt[i][0]:gt[i][1]]
		if tourToken.FindString(w) != w || kindOf(w) != kindOf(g) {
			return false
		}
		switch r, ok := b.toRun[w]; {
		case freeToken(w):
		case ok && r != g:
			return false
		case !ok:
			if d, taken := b.toDoc[g]; taken && d != w && kindOf(w) != "/ip4/" {
				return false // two values of the tour are one of the run (a port may be used again)
			}
			b.bind(w, g)
		}
		wp, gp = wt[i][1], gt[i][1]
	}
	return want[wp:] == got[gp:]
}

// kindOf names a token's kind.
func kindOf(tok string) string {
	for _, k := range []string{"ed25519:", "12D3KooW", "/ip4/", "127.0.0.1:", "amend-", "drafts-", "go1."} {
		if strings.HasPrefix(tok, k) {
			return k
		}
	}
	if strings.HasPrefix(tok, "sha256:") {
		return fmt.Sprint("sha256:", len(tok))
	}
	return "time"
}

// match matches the run's output lines with the tour's, on a copy of b
// that replaces b's maps only when every line matches.
func (b *tourBindings) match(want, got []string) bool {
	c := b.clone()
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if !c.matchLine(want[i], got[i]) {
			return false
		}
	}
	*b = c
	return true
}

// force binds, for -update-tour, the tour's values to the run's where
// an output no longer matches: line by line, token by token, where the
// counts agree.
func (b *tourBindings) force(want, got []string) {
	for i := range min(len(want), len(got)) {
		wt, gt := tourToken.FindAllString(want[i], -1), tourToken.FindAllString(got[i], -1)
		if len(wt) != len(gt) {
			continue
		}
		for j := range wt {
			if kindOf(wt[j]) == kindOf(gt[j]) && !freeToken(wt[j]) && kindOf(wt[j]) != "127.0.0.1:" {
				b.bind(wt[j], gt[j])
			}
		}
	}
}

// lanAddress is a banner line of a libp2p address off loopback: the LAN's
// interfaces differ from machine to machine, so neither side's count.
var lanAddress = regexp.MustCompile(`^  p2p       /ip[46]/`)

// revisionLine is witan version's VCS line, printed by a binary built
// from a git checkout whose VCS information Go could read.
var revisionLine = regexp.MustCompile(`^  revision      [0-9a-f]{40}( \(modified\))?$`)

func comparable(lines []string) []string {
	var out []string
	for _, l := range lines {
		if lanAddress.MatchString(l) && !strings.Contains(l, "/ip4/127.0.0.1/") {
			continue
		}
		if revisionLine.MatchString(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// tourStep is one thing the tour has the reader do.
type tourStep struct {
	line    int      // its line in docs/tour.md (0-based)
	kind    string   // "cmd", "file", "ctrlc"
	text    string   // the command line, or the file's name
	content []string // a file's lines
	want    []string // the output the tour shows
	section string
}

// tourSteps reads docs/tour.md: the console blocks' "$ " lines with the
// output under each, their "^C" lines (Ctrl-C in the terminal of the
// node running in the foreground, then what it prints), and the files of
// "```json NAME" blocks, in order.
func tourSteps(t *testing.T, lines []string) []tourStep {
	t.Helper()
	var steps []tourStep
	section := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			section = l
		}
		if name, ok := strings.CutPrefix(l, "```json "); ok {
			st := tourStep{line: i, kind: "file", text: strings.TrimSpace(name), section: section}
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				st.content = append(st.content, lines[i])
			}
			steps = append(steps, st)
			continue
		}
		if l != "```console" {
			continue
		}
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			var st tourStep
			switch {
			case strings.HasPrefix(lines[i], "$ "):
				st = tourStep{line: i, kind: "cmd", text: strings.TrimPrefix(lines[i], "$ "), section: section}
			case lines[i] == "^C":
				st = tourStep{line: i, kind: "ctrlc", section: section}
			default:
				t.Fatalf("docs/tour.md:%d: output with no command above it: %q", i+1, lines[i])
			}
			for i+1 < len(lines) && lines[i+1] != "```" && !strings.HasPrefix(lines[i+1], "$ ") && lines[i+1] != "^C" {
				i++
				st.want = append(st.want, lines[i])
			}
			steps = append(steps, st)
		}
	}
	return steps
}

// tourProc is a witan up the tour started.
type tourProc struct {
	cmd    *exec.Cmd
	banner []string
	rest   chan []string // what it prints after its banner, once it exits
	done   chan error
}

// startTourUp starts a witan up and waits for its banner ("Press Ctrl-C
// to stop.").
func startTourUp(t *testing.T, cmd *exec.Cmd) *tourProc {
	t.Helper()
	dieWithTest(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &tourProc{cmd: cmd, rest: make(chan []string, 1), done: make(chan error, 1)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	ready := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var lines []string
		up := false
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if !up && sc.Text() == "Press Ctrl-C to stop." {
				up = true
				ready <- lines
				lines = nil
			}
		}
		p.rest <- lines
		p.done <- cmd.Wait()
	}()
	select {
	case p.banner = <-ready:
		return p
	case err := <-p.done:
		t.Fatalf("%s exited: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start:\n%s", strings.Join(cmd.Args, " "), stderr.String())
	}
	return nil
}

// stop signals p and returns what it printed after its banner.
func (p *tourProc) stop(t *testing.T, sig syscall.Signal) []string {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("witan up after %v: %v", sig, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("witan up did not stop on %v", sig)
	}
	return <-p.rest
}

// freePort returns a TCP port on loopback that nothing listens on now,
// for a process the test starts later. It is drawn below the kernel's
// ephemeral range (ip_local_port_range), where the ports that every other
// listener on ":0" gets (the libp2p hosts of the tests running meanwhile,
// the nodes' own) are not: a port the kernel handed out for ":0" and the
// test released went back to that pool, and one of the many binds before
// the process started could take it ("address already in use").
func freePort(t *testing.T) string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	if low > 20000 {
		for range 100 {
			port := 20000 + rand.IntN(low-20000)
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				l.Close()
				return strconv.Itoa(port)
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// TestTour types docs/tour.md, in order, as a reader does in two
// terminals, against real witan up processes on loopback, and compares
// every output with the one the tour shows. Every "$ " line of a console
// block is run in a temporary directory (the tour's working directory):
// ./witan is the binary built from this tree, go run ./cmd/witan too, go
// run ./examples/NAME the example built from this tree; "… &" runs in
// the background and "kill %1" stops it; a witan up without "&" runs in
// the foreground until a "^C" line, after which its last words are
// compared; "export" sets the environment of what follows; curl -s URL
// is an HTTP GET; double quotes group words as a shell's do. A command
// that asks "? [y/N] " before it signs reads the answer the tour shows
// after the question. A command writes to stderr exactly when it fails.
// A "```json NAME" block is a file the reader writes.
//
// What differs from run to run is matched by kind, not by value: keys,
// ids (full, or shortened to 8 digits and "…"), peer ids and ports are
// bound at their first appearance in an output and must then be the same
// wherever the tour repeats them (and differ where it shows different
// ones); inputs that repeat them get this run's values; times and the Go
// release only have their shape checked; " … " in a shown output stands
// for text the tour leaves out. The rest must be as shown, line for line.
//
// What the test changes, because a test machine is shared: the HTTP
// ports 8030 and 8031 are free ports (8030 is the first node's, so
// $WITAN_NODE names it until the tour exports another); the first node
// runs with -mdns=false (its banner's "mdns true" is expected as false),
// so that it neither finds nor is found by other tests' nodes; libp2p
// addresses off loopback are left out of both sides (the LAN's
// interfaces differ); a "revision" line of witan version is left out of
// the run's output (a binary built outside a git checkout has none).
//
// -update-tour writes the outputs of this run that differ from the
// tour's (after the retries), and the values inputs take from them, into
// docs/tour.md (ports 8030 and 8031 stay).
func TestTour(t *testing.T) {
	bin := buildWitan(t)
	raw, err := os.ReadFile("../../docs/tour.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Split(string(raw), "\n")
	steps := tourSteps(t, doc)
	if len(steps) < 20 {
		t.Fatalf("docs/tour.md has %d steps", len(steps))
	}
	dir := t.TempDir()
	examples := map[string]string{}
	b := tourBindings{toRun: map[string]string{}, toDoc: map[string]string{}}
	ports := map[string]string{"8030": freePort(t), "8031": freePort(t)}
	for d, r := range ports {
		b.bind("127.0.0.1:"+d, "127.0.0.1:"+r)
	}
	env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "WITAN_NODE=") }),
		"WITAN_NODE=http://127.0.0.1:"+ports["8030"])
	var fg, bg *tourProc
	got := map[int][]string{} // outputs that differ, by step line, for -update-tour
	readOnly := map[string]bool{"heads": true, "log": true, "sessions": true, "verify": true, "memory": true}

	for _, st := range steps {
		where := fmt.Sprintf("docs/tour.md:%d (%s)", st.line+1, st.section)
		switch st.kind {
		case "file":
			var lines []string
			for _, l := range st.content {
				lines = append(lines, b.input(l))
			}
			if err := os.WriteFile(filepath.Join(dir, st.text), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		case "ctrlc":
			if fg == nil {
				t.Fatalf("%s: ^C with no node in the foreground", where)
			}
			out := fg.stop(t, syscall.SIGINT)
			fg = nil
			if !b.match(st.want, out) && *updateTour {
				b.force(st.want, out)
				got[st.line] = out
			} else if !b.match(st.want, out) {
				t.Fatalf("%s: after Ctrl-C the node printed\n%s\nwant\n%s", where, strings.Join(out, "\n"), strings.Join(st.want, "\n"))
			}
			continue
		}
		cmdline := st.text
		if c, _, ok := strings.Cut(cmdline, "  #"); ok {
			cmdline = strings.TrimSpace(c) // a comment for the reader
		}
		args := shellWords(b.input(cmdline))
		// A command that asks before it signs reads the answer the tour
		// shows typed after its question.
		stdin, answer := "", ""
		for _, w := range st.want {
			if i := strings.LastIndex(w, confirmPrompt); i >= 0 && i+len(confirmPrompt) < len(w) {
				answer = w[i+len(confirmPrompt):]
				stdin = answer + "\n"
			}
		}
		var out []string
		var run func() []string
		switch {
		case args[0] == "export":
			env = append(env, args[1])
			continue
		case cmdline == "kill %1":
			if bg == nil {
				t.Fatalf("%s: no job in the background", where)
			}
			bg.stop(t, syscall.SIGTERM)
			bg = nil
			continue
		case cmdline == "go build -o witan ./cmd/witan":
			out = nil // built already, from this tree
		case args[0] == "curl":
			u := args[len(args)-1]
			run = func() []string {
				resp, err := http.Get(u)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
			}
		case len(args) >= 2 && args[0] == "go" && args[1] == "run" && strings.HasPrefix(args[2], "./examples/"):
			name := strings.TrimPrefix(args[2], "./examples/")
			if examples[name] == "" {
				examples[name] = filepath.Join(t.TempDir(), name)
				c := exec.Command("go", "build", "-o", examples[name], "./examples/"+name)
				c.Dir, c.Stderr = "../..", os.Stderr
				if err := c.Run(); err != nil {
					t.Fatalf("go build ./examples/%s: %v", name, err)
				}
			}
			args = append([]string{examples[name]}, args[3:]...)
			run = func() []string { return runTourCmd(t, where, dir, env, args, "", "") }
		case strings.Join(args[:min(3, len(args))], " ") == "go run ./cmd/witan" || args[0] == "./witan":
			if args[0] == "go" {
				args = append([]string{"./witan"}, args[3:]...)
			}
			args[0] = bin
			if len(args) > 1 && args[1] == "up" {
				background := args[len(args)-1] == "&"
				if background {
					args = args[:len(args)-1]
				}
				adapted := slices.Clone(args)
				if !slices.ContainsFunc(args, func(a string) bool { return a == "-http" }) {
					adapted = append(adapted, "-http", "127.0.0.1:"+ports["8030"])
				}
				mdnsAdapted := !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-mdns") })
				if mdnsAdapted {
					adapted = append(adapted, "-mdns=false")
				}
				c := exec.Command(adapted[0], adapted[1:]...)
				c.Dir, c.Env = dir, env
				p := startTourUp(t, c)
				if background {
					if bg != nil {
						t.Fatalf("%s: a second job in the background", where)
					}
					bg = p
					continue
				}
				if fg != nil {
					t.Fatalf("%s: a node runs in the foreground already", where)
				}
				fg = p
				out = slices.Clone(p.banner)
				if mdnsAdapted {
					i := slices.Index(out, "  mdns      false")
					if i < 0 {
						t.Fatalf("%s: no mdns line in the banner:\n%s", where, strings.Join(out, "\n"))
					}
					out[i] = "  mdns      true"
				}
				break
			}
			run = func() []string { return runTourCmd(t, where, dir, env, args, stdin, answer) }
		default:
			t.Fatalf("%s: the test does not know how to type %q", where, cmdline)
		}
		// A read of what a node holds may lag: a checkpoint (every 5 s),
		// a gossip message. It is typed again, as a reader would, until
		// it shows the tour's output or a deadline passes.
		retry := args[0] == "curl" || (len(args) > 2 && readOnly[args[1]] && args[2] != "put") || (len(args) == 2 && readOnly[args[1]])
		deadline := time.Now().Add(30 * time.Second)
		for {
			if run != nil {
				out = run()
			}
			if b.match(comparable(st.want), comparable(out)) {
				break
			}
			if !retry || time.Now().After(deadline) {
				if *updateTour {
					b.force(comparable(st.want), comparable(out))
					got[st.line] = out
					break
				}
				t.Fatalf("%s: $ %s\n--- got\n%s\n--- want\n%s", where, st.text, strings.Join(out, "\n"), strings.Join(st.want, "\n"))
			}
			time.Sleep(200 * time.Millisecond) // a poll interval, not a wait for an outcome
		}
	}
	if fg != nil || bg != nil {
		t.Fatal("docs/tour.md leaves a node running: end it with ^C or kill %1")
	}
	if *updateTour {
		writeTour(t, doc, steps, got, b, ports)
	}
}

// confirmPrompt ends the question a command asks before it signs.
const confirmPrompt = "? [y/N] "

// runTourCmd runs one command of the tour and returns its output (stdout
// then stderr, as a terminal shows them for these short commands). It
// types stdin, and shows the answer after the question as a terminal
// echoes it. A command must write to stderr exactly when it fails.
func runTourCmd(t *testing.T, where, dir string, env, args []string, stdin, answer string) []string {
	t.Helper()
	c := exec.Command(args[0], args[1:]...)
	c.Dir, c.Env, c.Stdin = dir, env, strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%s: %v", where, err)
	}
	if failed := err != nil; failed != (stderr.Len() > 0) {
		t.Fatalf("%s: %s: %v with stderr %q", where, strings.Join(args, " "), err, stderr.String())
	}
	o := stdout.String()
	if answer != "" {
		o = strings.ReplaceAll(o, confirmPrompt, confirmPrompt+answer+"\n")
	}
	s := strings.TrimSuffix(o+stderr.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// shellWords splits a command line as a shell does the tour's: words
// separated by spaces, double quotes grouping.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// lanPort matches a port of the documentation's LAN address.
var lanPort = regexp.MustCompile(`/ip4/192\.0\.2\.2/((?:tcp|udp)/\d+)`)

// writeTour rewrites docs/tour.md with this run's outputs and the values
// its inputs take from them (-update-tour).
func writeTour(t *testing.T, doc []string, steps []tourStep, got map[int][]string, b tourBindings, ports map[string]string) {
	t.Helper()
	back := strings.NewReplacer("127.0.0.1:"+ports["8030"], "127.0.0.1:8030", "127.0.0.1:"+ports["8031"], "127.0.0.1:8031")
	lan := regexp.MustCompile(`/ip4/\d+\.\d+\.\d+\.\d+/`)
	doc192 := func(s string) string { // the LAN's addresses as documentation's (RFC 5737)
		return lan.ReplaceAllStringFunc(s, func(a string) string {
			if a == "/ip4/127.0.0.1/" {
				return a
			}
			return "/ip4/192.0.2.2/"
		})
	}
	outputs := map[int]bool{} // the lines of the outputs rewritten
	for _, st := range steps {
		if _, ok := got[st.line]; !ok || st.kind == "file" {
			continue
		}
		for i := range st.want {
			outputs[st.line+1+i] = true
		}
	}
	var out []string
	for i, l := range doc {
		if outputs[i] {
			continue
		}
		if !strings.HasPrefix(l, "## ") {
			l = tourToken.ReplaceAllStringFunc(l, func(tok string) string {
				if r, ok := b.toRun[tok]; ok && kindOf(tok) != "127.0.0.1:" {
					return r
				}
				return tok
			})
			// A node listens on one port on every interface: its LAN
			// addresses (not compared) take its loopback port's value.
			l = lanPort.ReplaceAllStringFunc(l, func(a string) string {
				m := lanPort.FindStringSubmatch(a)
				if r, ok := b.toRun["/ip4/127.0.0.1/"+m[1]]; ok {
					return "/ip4/192.0.2.2/" + strings.TrimPrefix(r, "/ip4/127.0.0.1/")
				}
				return a
			})
		}
		out = append(out, l)
		if o, ok := got[i]; ok {
			for _, x := range o {
				out = append(out, doc192(back.Replace(x)))
			}
		}
	}
	if err := os.WriteFile("../../docs/tour.md", []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
