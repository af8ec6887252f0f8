package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// runIDs are the values that differ on every run of the tour's vote: keys,
// ids, and the names made from them.
var runIDs = regexp.MustCompile(`sha256:[0-9a-f]{64}|ed25519:[A-Za-z0-9_-]{43}|amend-[0-9a-f]{12}|drafts-[A-Za-z0-9_-]{12}`)

// bindings maps the tour's values to a run's, one to one.
type bindings struct{ toRun, toTour map[string]string }

// match reports whether got is want with each of want's values replaced
// by the run's, binding the values not seen yet; a value bound to two
// others is a mismatch.
func (b *bindings) match(want, got string) bool {
	ws, gs := runIDs.FindAllStringIndex(want, -1), runIDs.FindAllStringIndex(got, -1)
	if len(ws) != len(gs) {
		return false
	}
	wp, gp := 0, 0
	for i := range ws {
		if want[wp:ws[i][0]] != got[gp:gs[i][0]] {
			return false
		}
		tv, rv := want[ws[i][0]:ws[i][1]], got[gs[i][0]:gs[i][1]]
		if r, ok := b.toRun[tv]; ok && r != rv {
			return false
		}
		if t, ok := b.toTour[rv]; ok && t != tv {
			return false
		}
		b.toRun[tv], b.toTour[rv] = rv, tv
		wp, gp = ws[i][1], gs[i][1]
	}
	return want[wp:] == got[gp:]
}

// shellWords splits a command line as a shell does for the tour's lines:
// words separated by spaces, double quotes grouping.
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

// TestTourVoteWalk runs the tour's "## 8. A whole vote from the command
// line" as written against a real witan up on loopback: each "$ ./witan"
// line with the built binary in a directory of its own ($WITAN_NODE
// naming the node, as step 1's does by default), answering "y" where the
// tour shows it typed. Each output (stdout, then stderr) must be the
// tour's once the tour's keys, ids and the names made of them are mapped,
// one to one, to this run's; a command line uses the run's values of
// those the earlier outputs bound.
func TestTourVoteWalk(t *testing.T) {
	bin := buildWitan(t)
	up := startUp(t, bin, t.TempDir())
	defer up.stop(t)
	lines := tourSection(t, "## 8. A whole vote from the command line")
	dir := t.TempDir()
	env := append(os.Environ(), "WITAN_NODE="+up.info.HTTP)
	b := &bindings{toRun: map[string]string{}, toTour: map[string]string{}}
	commands := 0
	for i := 0; i < len(lines); i++ {
		cmdline, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			continue
		}
		commands++
		var want []string
		for j := i + 1; j < len(lines) && !strings.HasPrefix(lines[j], "$ "); j++ {
			want = append(want, lines[j])
		}
		wantOut := strings.Join(want, "\n") + "\n"
		stdin := ""
		if strings.Contains(wantOut, "? [y/N] y\n") {
			stdin = "y\n"
			wantOut = strings.ReplaceAll(wantOut, "? [y/N] y\n", "? [y/N] ")
		}
		run := runIDs.ReplaceAllStringFunc(cmdline, func(v string) string {
			r, ok := b.toRun[v]
			if !ok {
				t.Fatalf("%s: %s is named before any output showed it", cmdline, v)
			}
			return r
		})
		args := shellWords(run)
		if args[0] != "./witan" {
			t.Fatalf("tour line %q: not a witan command", lines[i])
		}
		cmd := exec.Command(bin, args[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		got := stdout.String() + stderr.String()
		if !b.match(wantOut, got) {
			t.Fatalf("%s: output differs from docs/tour.md (%v)\n got:\n%s\nwant:\n%s", cmdline, err, got, wantOut)
		}
		if failed := err != nil; failed != (stderr.Len() > 0) {
			t.Fatalf("%s: exit %v with stderr %q", cmdline, err, stderr.String())
		}
		t.Logf("$ %s\n%s", run, got)
	}
	if commands < 9 {
		t.Fatalf("the section runs %d commands", commands)
	}
}
