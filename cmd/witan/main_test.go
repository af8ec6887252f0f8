package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

var update = flag.Bool("update", false, "rewrite the transcripts in testdata/ with the outputs of this run")

// run runs witan with args in process and returns its stdout, stderr and
// exit code.
func run(ctx context.Context, stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code := m.ExitCode(m.Run(ctx, args))
	return out.String(), errb.String(), code
}

// fixture is a node on loopback holding one simulated session: a roster
// of ten, an open MR with three ballots, one forged ballot in quarantine,
// and a checkpoint. Everything is deterministic, so transcripts are too.
type fixture struct {
	node    string
	dir     string
	session string
	mr      dag.ID
	last    dag.ID
	local   *node.Node
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	clock := func() time.Time { return time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC) }
	l, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Node: l, Implementation: httpapi.Implementation{Name: "witan", Version: "test", Source: "https://github.com/witan-dev/witan"}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); l.Close() })
	b := ht.New(ht.Options{Simulation: true, Label: "transcripts"})
	f := &fixture{node: hs.URL, dir: t.TempDir(), session: b.Session.String(), local: l}
	ok := func(tx ht.Tx) {
		t.Helper()
		rc, err := l.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
		}
		f.last = tx.ID
	}
	ok(b.Create)
	ok(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), f.last))
	ok(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), f.last))
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "A vote on nothing"}, f.last)
	ok(open)
	f.mr = mr
	for i := 0; i < 3; i++ {
		ok(b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, f.last))
	}
	forged := *b.Ballot(ht.Member(3), mr, "reject", dag.ID{}, f.last).Env
	forged.Sig = append([]byte(nil), forged.Sig...)
	forged.Sig[5] ^= 0x40
	if rc, err := l.Submit(ctx, forged.Canonical(), nil); err != nil || rc.Status != "rejected" {
		t.Fatalf("forged: %v %+v", err, rc)
	}
	if _, err := l.Replica().Checkpoint(ctx, dag.MustParseID(f.session)); err != nil {
		t.Fatal(err)
	}
	// Files the transcripts use: member 5's key, and ballot drafts.
	if err := writeKeyFile(filepath.Join(f.dir, "m5.key"), ht.Member(5), false); err != nil {
		t.Fatal(err)
	}
	if err := writeKeyFile(filepath.Join(f.dir, "outsider.key"), ht.Member(40), false); err != nil {
		t.Fatal(err)
	}
	draft := fmt.Sprintf(`{"type":"ballot.cast","session":%q,"body":{"mr":%q,"choice":"approve","supersedes":null},"ts":"2026-09-21T12:30:00Z"}`, f.session, mr)
	note := `{"origin":"agent:ana","subject":"roadmap","body":"ship the CLI first","evidence":null,"confidence":"high","observed_at":"2026-09-21T12:00:00Z"}`
	if err := os.WriteFile(filepath.Join(f.dir, "note.json"), []byte(note), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ballot.json"} {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(draft), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Files errors.txt uses: a draft with a trailing comma on its second
	// line, a draft readable by others (named as -key by mistake), and a
	// session.create whose rules name a text not attached.
	for name, body := range map[string]string{
		"broken.json": "{\"type\": \"ballot.cast\",\n \"body\": {},}\n",
		"roster.json": draft,
		"notext.json": notextDraft,
	} {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(f.dir, "roster.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// notextDraft is a session.create whose rules name, as text_ref, the
// SHA-256 of "A motion passes with more than half of the votes." without
// attaching that text.
const notextDraft = `{"type": "session.create", "ts": "2026-09-21T12:00:00Z",
 "body": {"label": "No text", "seed": "sha256:4ce6fa30c85ec3fbf315cf225303706f0f97d3115bde05a7e9a6135a0038e702",
          "simulation": true, "education": false, "profile": "uslm-1",
          "registrar": "group:registrar", "roster": "group:roster",
          "root_rule": {"kind": "threshold_vote", "version": 1, "min_notice": 259200,
                        "params": {"num": 1, "den": 2, "cmp": "gt", "basis": "electorate",
                                   "quorum_num": 1, "quorum_den": 2, "closing": "on_threshold"},
                        "text_ref": "sha256:9ae869853a668c01580f551af052139903ddcb815f9385a15ac0a008ee333cf4"},
          "root_governance_rule": {"kind": "threshold_vote", "version": 1, "min_notice": null,
                        "params": {"num": 2, "den": 3, "cmp": "gte", "basis": "electorate",
                                   "quorum_num": 1, "quorum_den": 2, "closing": "on_threshold"},
                        "text_ref": "sha256:9ae869853a668c01580f551af052139903ddcb815f9385a15ac0a008ee333cf4"}},
 "attachments": [{"nid": "/us", "kind": "root", "heading": "", "text": "Everyone may read the law.", "children": []}]}`

// The CAT7 hashes of the blocks memory.txt puts, worked out by hand from
// the hashed form docs/memory-blocks.md defines (["witan/cat7/v1", then
// one slot per field in the order origin, subject, body, evidence,
// confidence, observed_at, lineage: [] omitted, [v] present or null],
// RFC 8785 text) and note.json's fields, never from witan's own code. The
// first block's lineage is the empty space's heads, none: a root, [[]].
// The second one's is the first block. Transcripts name them {{NOTE1}}
// and {{NOTE2}}: an output with another hash differs from the transcript.
var (
	note1 = handHash(`["witan/cat7/v1",["agent:ana"],["roadmap"],["ship the CLI first"],[null],["high"],["2026-09-21T12:00:00Z"],[[]]]`)
	note2 = handHash(`["witan/cat7/v1",["agent:ana"],["roadmap"],["ship the CLI first"],[null],["high"],["2026-09-21T12:00:00Z"],[["` + note1 + `"]]]`)
)

func handHash(hashed string) string {
	sum := sha256.Sum256([]byte(hashed))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// expand replaces the fixture's placeholders in a command line.
func (f *fixture) expand(s string) string {
	return strings.NewReplacer("{{NODE}}", f.node, "{{DIR}}", f.dir, "{{SESSION}}", f.session, "{{MR}}", f.mr.String(),
		"{{NOTE1}}", note1, "{{NOTE2}}", note2).Replace(s)
}

// fold replaces the fixture's run-specific values in an output, and the
// hand-computed block hashes by their names.
func (f *fixture) fold(s string) string {
	return strings.NewReplacer(f.node, "{{NODE}}", f.dir, "{{DIR}}", note1, "{{NOTE1}}", note2, "{{NOTE2}}").Replace(s)
}

// TestMemoryHashesByHand: memory.txt names its blocks by the hashes
// worked out by hand ({{NOTE1}}, {{NOTE2}}) and holds no other block
// hash, so an -update run with wrong hashing shows up here; the tour's
// memory section, copied from that transcript, shows the same hashes.
func TestMemoryHashesByHand(t *testing.T) {
	b, err := os.ReadFile("testdata/memory.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	zero := "sha256:" + strings.Repeat("0", 64)
	if !strings.Contains(s, "{{NOTE1}}") || !strings.Contains(s, "{{NOTE2}}") || strings.Count(strings.ReplaceAll(s, zero, ""), "sha256:") != 0 {
		t.Fatalf("memory.txt must name its blocks {{NOTE1}} and {{NOTE2}} (hashes worked out by hand) and no other hash:\n%s", s)
	}
	tour := strings.Join(tourSection(t, "## 7. Memory blocks"), "\n")
	if !strings.Contains(tour, note1) || !strings.Contains(tour, note2) || strings.Count(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(tour, note1, ""), note2, ""), zero, ""), "sha256:") != 0 {
		t.Fatalf("docs/tour.md's memory section must show the blocks %s and %s and no other hash:\n%s", note1, note2, tour)
	}
}

// TestTranscripts runs every testdata/*.txt transcript: lines "$ witan
// ARGS" are run in process against a fresh fixture node, and the lines
// after each are its output, then "[exit N]". -update rewrites them.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			f := newFixture(t)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			cmds := 0
			for _, line := range strings.SplitAfter(string(b), "\n") {
				if strings.HasPrefix(line, "#") {
					got.WriteString(line)
					continue
				}
				cmd, ok := strings.CutPrefix(line, "$ witan")
				if !ok {
					continue
				}
				cmds++
				got.WriteString(line)
				args := strings.Fields(f.expand(cmd))
				stdout, stderr, code := run(context.Background(), "", args...)
				got.WriteString(f.fold(stdout))
				for _, l := range strings.SplitAfter(f.fold(stderr), "\n") {
					if l != "" {
						got.WriteString("stderr: " + l)
					}
				}
				if stderr != "" && !strings.HasSuffix(stderr, "\n") {
					got.WriteString("\n")
				}
				fmt.Fprintf(&got, "[exit %d]\n", code)
			}
			if cmds == 0 {
				t.Fatal("transcript runs no command")
			}
			if *update {
				if err := os.WriteFile(file, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got.String() != string(b) {
				t.Errorf("transcript differs (go test -run TestTranscripts -update to accept):\n--- got\n%s\n--- want\n%s", got.String(), b)
			}
		})
	}
}

// A command stopped by a signal says so and does not exit 0; witan up,
// which runs until a signal, returns nil when it has shut down cleanly.
func TestExitCodeInterrupted(t *testing.T) {
	var stderr strings.Builder
	m := &Main{Stdout: io.Discard, Stderr: &stderr}
	if got := m.ExitCode(fmt.Errorf("sync: %w", context.Canceled)); got != exitInterrupted {
		t.Fatalf("exit code %d, want %d", got, exitInterrupted)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("stderr %q", stderr.String())
	}
	if got := m.ExitCode(nil); got != exitOK {
		t.Fatalf("nil: exit code %d", got)
	}
}
