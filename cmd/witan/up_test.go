package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// buildWitan builds the command once per test binary run.
func buildWitan(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "witan")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// proc is a running witan up.
type proc struct {
	cmd  *exec.Cmd
	info upInfo
	out  *bytes.Buffer
	done chan error
}

// startUp starts witan up on loopback with free ports and mDNS off, and
// waits for its JSON startup line.
func startUp(t *testing.T, bin, dir string, extra ...string) *proc {
	t.Helper()
	p, err := tryStartUp(t, bin, dir, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tryStartUp is startUp returning why witan up did not start, when it did
// not: it exited, or it printed nothing in 60 s.
func tryStartUp(t *testing.T, bin, dir string, extra ...string) (*proc, error) {
	t.Helper()
	args := append([]string{"up", "-data", dir, "-http", "127.0.0.1:0", "-mdns=false",
		"-p2p-listen", "/ip4/127.0.0.1/tcp/0", "-checkpoint-every", "100ms", "-announce-every", "1s", "-json"}, extra...)
	cmd := exec.Command(bin, args...)
	dieWithTest(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, out: &bytes.Buffer{}, done: make(chan error, 1)}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
				continue
			}
			p.out.WriteString(sc.Text() + "\n")
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case l := <-lines:
		if err := json.Unmarshal([]byte(l), &p.info); err != nil {
			return nil, fmt.Errorf("startup line %q: %v", l, err)
		}
	case err := <-p.done:
		return nil, fmt.Errorf("witan up exited: %v\n%s", err, errb.String())
	case <-time.After(60 * time.Second):
		// Ask the Go runtime for every goroutine's stack (SIGQUIT), so
		// that a start that hangs says where.
		cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // best effort
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill() //nolint:errcheck // it is being given up
			<-p.done
		}
		return nil, fmt.Errorf("witan up did not start in 60 s; its stderr, with its goroutines' stacks:\n%s", tail(errb.String(), 64<<10))
	}
	return p, nil
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// stop sends SIGINT and expects a clean exit.
func (p *proc) stop(t *testing.T) { p.signal(t, syscall.SIGINT) }

// signal sends sig and expects a clean exit.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
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
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not reached in %s; last: %s", what, d, last)
}

// TestTwoNodes is the black-box test: two witan up processes on loopback
// (temp data dirs, free ports, mDNS off, one configured peer); entries
// submitted to one reach the other, which then shows the same heads, the
// same state hash (so the same root snapshot) and the same tallies;
// witan verify reproduces each node's checkpoint root from its own log
// order; and a node stopped with SIGINT and started again has lost
// nothing it acknowledged.
func TestTwoNodes(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	// The session is agreed out of band (30k §4): both nodes join it.
	b := ht.New(ht.Options{Simulation: true, Label: "two nodes"})
	space := b.Session.String()
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startUp(t, bin, dirA, "-session", space)
	bn := startUp(t, bin, dirB, "-session", space, "-peer", a.info.P2P[0])
	ca := &httpapi.Client{BaseURL: a.info.HTTP, Session: space}
	cb := &httpapi.Client{BaseURL: bn.info.HTTP, Session: space}

	var last dag.ID
	var ballots []dag.ID
	submit := func(c *httpapi.Client, tx ht.Tx) {
		t.Helper()
		rc, err := c.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		last = tx.ID
	}
	submit(ca, b.Create)
	submit(ca, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 7), ht.Members(0, 1), last))
	submit(ca, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	submit(ca, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last))
	submit(ca, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{statuteOps(b, "/us/t1/s2", "The period is 60 days.")}, last)
	submit(ca, tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 7), Rule: ht.Majority(house.MinRootNotice)}, last)
	submit(ca, open)
	for i := 0; i < 5; i++ {
		tx := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last)
		submit(ca, tx)
		ballots = append(ballots, tx.ID)
	}
	submit(ca, b.Determine(ht.Member(0), mr, ballots, "approved", last))

	heads := func(c *httpapi.Client) []dag.ID {
		var h httpapi.HeadsAnswer
		if err := c.Get(ctx, "/heads", nil, &h); err != nil {
			return nil
		}
		return h.Heads
	}
	eventually(t, "B reaches A's heads", 30*time.Second, func() (bool, string) {
		ha, hb := heads(ca), heads(cb)
		return len(ha) > 0 && slices.Equal(ha, hb), "A " + idsString(ha) + " B " + idsString(hb)
	})
	// A ballot written on B travels back to A.
	tx = b.Ballot(ht.Member(6), mr, "reject", dag.ID{}, last)
	submit(cb, tx)
	eventually(t, "A reaches B's heads", 30*time.Second, func() (bool, string) {
		ha, hb := heads(ca), heads(cb)
		return slices.Equal(ha, hb) && slices.Contains(ha, tx.ID), "A " + idsString(ha) + " B " + idsString(hb)
	})

	var sa, sb httpapi.StateAnswer
	if err := ca.Get(ctx, "/sessions/"+space+"/state", nil, &sa); err != nil {
		t.Fatal(err)
	}
	if err := cb.Get(ctx, "/sessions/"+space+"/state", nil, &sb); err != nil {
		t.Fatal(err)
	}
	if sa.StateHash != sb.StateHash {
		t.Fatalf("state hashes differ: A %s B %s", sa.StateHash, sb.StateHash)
	}
	rootSnap := func(s httpapi.StateAnswer) string {
		for _, br := range s.State.Branches {
			if br.Name == house.RootBranch && br.Snapshot != nil {
				return br.Snapshot.String()
			}
		}
		return ""
	}
	if rootSnap(sa) == "" || rootSnap(sa) != rootSnap(sb) || rootSnap(sa) == b.Seed.Hash().String() {
		t.Fatalf("root snapshots: A %s B %s (seed %s)", rootSnap(sa), rootSnap(sb), b.Seed.Hash())
	}
	var ta, tb httpapi.TallyAnswer
	path := "/merge-requests/" + mr.String() + "/tally"
	if err := ca.Get(ctx, path, nil, &ta); err != nil {
		t.Fatal(err)
	}
	if err := cb.Get(ctx, path, nil, &tb); err != nil {
		t.Fatal(err)
	}
	// The counts and outcome agree; timing (checkpoint times) is each
	// node's own.
	ja, _ := json.Marshal([]any{ta.Result.Tally, ta.Result.IfClosed})
	jb, _ := json.Marshal([]any{tb.Result.Tally, tb.Result.IfClosed})
	if ta.Status != "merged" || ta.Status != tb.Status || !bytes.Equal(ja, jb) || ta.Result.Tally.Approve != 5 {
		t.Fatalf("tallies: A %s %+v, B %s %+v", ta.Status, ta.Result.Tally, tb.Status, tb.Result.Tally)
	}

	// witan verify reproduces each node's checkpoint root from its log.
	for _, p := range []*proc{a, bn} {
		c := &httpapi.Client{BaseURL: p.info.HTTP, Session: space}
		eventually(t, "a checkpoint of the whole log", 10*time.Second, func() (bool, string) {
			var cpa httpapi.CheckpointAnswer
			if err := c.Get(ctx, "/checkpoint", nil, &cpa); err != nil {
				return false, err.Error()
			}
			cp, err := httpapi.DecodeCheckpoint(cpa.Checkpoint)
			return err == nil && cp.Size == cpa.LogSize && cp.Size == 14, string(cpa.Checkpoint)
		})
		out, err := exec.Command(bin, "verify", "-json", p.info.HTTP).Output()
		var v Verification
		if err != nil || json.Unmarshal(out, &v) != nil || !v.OK || !v.RootMatches || v.Replayed != 14 || !v.StateMatches {
			t.Fatalf("witan verify %s: %v\n%s", p.info.HTTP, err, out)
		}
	}

	// A third node, with no peer configured, is told to pull from A now
	// with witan sync: it reaches the same heads at once.
	c3 := startUp(t, bin, t.TempDir())
	out, err := exec.Command(bin, "sync", "-node", c3.info.HTTP, "-session", space, a.info.P2P[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "connected "+a.info.P2P[0]) || !strings.Contains(string(out), space) {
		t.Fatalf("witan sync: %v\n%s", err, out)
	}
	if got := heads(&httpapi.Client{BaseURL: c3.info.HTTP, Session: space}); !slices.Equal(got, heads(ca)) {
		t.Fatalf("after witan sync: heads %v, A %v", got, heads(ca))
	}
	c3.stop(t)

	// Stop A with SIGINT; start it again: everything it acknowledged is
	// there, with the same node key.
	want := heads(ca)
	a.stop(t)
	a2 := startUp(t, bin, dirA, "-session", space)
	if a2.info.NodeKey != a.info.NodeKey || a2.info.PeerID != a.info.PeerID {
		t.Fatalf("restart changed identity: %+v vs %+v", a2.info, a.info)
	}
	c2 := &httpapi.Client{BaseURL: a2.info.HTTP, Session: space}
	if got := heads(c2); !slices.Equal(got, want) {
		t.Fatalf("after restart heads %v, want %v", got, want)
	}
	var page httpapi.LogPage
	if err := c2.Get(ctx, "/log", url.Values{"limit": {"100"}}, &page); err != nil || len(page.Entries) != 14 {
		t.Fatalf("after restart: %d log entries, %v", len(page.Entries), err)
	}
	a2.stop(t)
	bn.signal(t, syscall.SIGTERM) // exits 0, like SIGINT
}

func idsString(ids []dag.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()[7:15]
	}
	return "[" + strings.Join(s, " ") + "]"
}

func statuteOps(b *ht.Builder, nid, text string) statute.Op {
	return ht.Replace(b.Trees[b.Genesis], nid, text)
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"512MiB", 512 << 20, true}, {"1GiB", 1 << 30, true}, {"4096", 4096, true},
		{"100B", 100, true}, {"2KiB", 2048, true},
		{"", 0, false}, {"MiB", 0, false}, {"-1", 0, false}, {"1.5GiB", 0, false}, {"1GB", 0, false}, {"9999999999TiB", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}
