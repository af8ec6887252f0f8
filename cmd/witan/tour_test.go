package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

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

// TestTourTwoLaptops runs the tour's two-laptop section (docs/tour.md,
// "## 5. Two laptops") as written, from two real processes: the first
// laptop is a witan up with its own data directory on loopback (mDNS off,
// as the section asks) holding a session; every "$ ./witan …" line of
// the section is then run with the built binary in a directory of its
// own, as a person types it in a second terminal ("… &" runs in the
// background, "export" sets the environment of the commands after it).
// Each command's output must be the tour's, once this run's values are
// put back in place of the tour's: the first laptop's p2p address and
// peer id, and the port of -http (a free one here, not 8031, since the
// machine is shared). The session is the one the tour shows (housetest's
// "two laptops": the same ids on every run). The two nodes then hold the
// same heads, and the second stops cleanly on SIGINT.
func TestTourTwoLaptops(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	lines := tourSection(t, "## 5. Two laptops")

	// The first laptop, with the session of the tour.
	laptop1 := startUp(t, bin, t.TempDir())
	bld := ht.New(ht.Options{Simulation: true, Label: "two laptops"})
	c1 := &httpapi.Client{BaseURL: laptop1.info.HTTP}
	var last dag.ID
	for _, tx := range []ht.Tx{bld.Create, bld.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), bld.Create.ID)} {
		if rc, err := c1.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		last = tx.ID
	}
	session := bld.Session.String()

	// The tour's values and this run's.
	var tourAddr string
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "$ ./witan sync "); ok {
			tourAddr = strings.TrimSpace(a)
		}
	}
	if tourAddr == "" || peerOf(tourAddr) == "" {
		t.Fatalf("no witan sync PEER line in the section:\n%s", strings.Join(lines, "\n"))
	}
	runAddr := laptop1.info.P2P[0]
	if !strings.HasPrefix(runAddr, "/ip4/127.0.0.1/tcp/") {
		t.Fatalf("first laptop's address %s", runAddr)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	toRun := strings.NewReplacer(tourAddr, runAddr, peerOf(tourAddr), laptop1.info.PeerID, "127.0.0.1:8031", "127.0.0.1:"+port)
	toTour := strings.NewReplacer(runAddr, tourAddr, laptop1.info.PeerID, peerOf(tourAddr), "127.0.0.1:"+port, "127.0.0.1:8031")
	if !strings.Contains(strings.Join(lines, "\n"), session) {
		t.Fatalf("the section does not use the session %s this test makes (housetest changed?): rerun it and update docs/tour.md", session)
	}

	dir := t.TempDir()
	env := append(os.Environ(), "WITAN_NODE=") // none from the machine running the test
	var laptop2 *exec.Cmd
	var laptop2HTTP string
	laptop2Done := make(chan error, 1)
	commands := 0
	for i := 0; i < len(lines); i++ {
		cmdline, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			continue
		}
		commands++
		// The output the tour shows: the lines up to the next command.
		var want []string
		for j := i + 1; j < len(lines) && !strings.HasPrefix(lines[j], "$ "); j++ {
			want = append(want, lines[j])
		}
		args := strings.Fields(toRun.Replace(cmdline))
		switch {
		case args[0] == "export":
			k, v, _ := strings.Cut(args[1], "=")
			env = append(env, k+"="+v)
			continue
		case args[0] != "./witan":
			t.Fatalf("tour line %q: not a witan command", lines[i])
		case args[len(args)-1] == "&":
			if laptop2 != nil {
				t.Fatalf("a second background command: %q", lines[i])
			}
			laptop2 = exec.Command(bin, args[1:len(args)-1]...)
			laptop2.Dir, laptop2.Env = dir, env
			laptop2HTTP = startBanner(t, laptop2, laptop2Done)
			continue
		}
		// A listing of what peers announce may lag the connection by a
		// gossip message: it is asked again, as a person would, until a
		// deadline. Every other command runs once.
		deadline := time.Now().Add(20 * time.Second)
		var got string
		for {
			cmd := exec.Command(bin, args[1:]...)
			cmd.Dir, cmd.Env = dir, env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("%s: %v\n%s%s", cmdline, err, out, stderr.String())
			}
			got = strings.TrimSuffix(toTour.Replace(string(out)), "\n")
			if got == strings.Join(want, "\n") {
				break
			}
			if args[1] != "sessions" || time.Now().After(deadline) {
				t.Fatalf("%s: output differs from docs/tour.md\n got:\n%s\nwant:\n%s", cmdline, got, strings.Join(want, "\n"))
			}
			time.Sleep(100 * time.Millisecond) // a poll interval, not a wait for an outcome
		}
		t.Logf("$ %s\n%s", cmdline, got)
	}
	if laptop2 == nil || commands < 4 {
		t.Fatalf("the section runs %d commands and no second node", commands)
	}
	// Both laptops hold the same heads.
	h1, h2 := headsOf(t, laptop1.info.HTTP, session), headsOf(t, laptop2HTTP, session)
	if !slices.Equal(h1, []dag.ID{last}) || !slices.Equal(h1, h2) {
		t.Fatalf("heads: laptop 1 %v, laptop 2 %v", h1, h2)
	}
	if err := laptop2.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-laptop2Done:
		if err != nil {
			t.Fatalf("second laptop's witan up after SIGINT: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("second laptop's witan up did not stop on SIGINT")
	}
	if _, err := os.Stat(filepath.Join(dir, "laptop2")); err != nil {
		t.Fatalf("the second laptop's data directory: %v", err)
	}
	laptop1.stop(t)
}

// startBanner starts cmd (a witan up without -json), waits for its
// banner and returns its HTTP API's URL; done receives its exit.
func startBanner(t *testing.T, cmd *exec.Cmd, done chan error) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		url := ""
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "  http      "); ok {
				url = strings.TrimSuffix(u, httpapi.Base)
			}
			if sc.Text() == "Press Ctrl-C to stop." {
				urls <- url
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case u := <-urls:
		if u == "" {
			t.Fatal("witan up's banner has no http line")
		}
		return u
	case err := <-done:
		t.Fatalf("witan up exited: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("witan up did not start:\n%s", stderr.String())
	}
	return ""
}

func headsOf(t *testing.T, url, session string) []dag.ID {
	t.Helper()
	var h httpapi.HeadsAnswer
	if err := (&httpapi.Client{BaseURL: url, Session: session}).Get(context.Background(), "/heads", nil, &h); err != nil {
		t.Fatal(err)
	}
	return h.Heads
}
