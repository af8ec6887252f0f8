package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// newDirNode starts a node on a Badger store in dir (a real directory)
// behind an httptest server. close stops the server and closes the node,
// so that the same dir can be opened again.
func newDirNode(t *testing.T, dir string) (n *apiNode, close func()) {
	t.Helper()
	return newDirNodeWith(t, node.Options{Dir: dir})
}

// newDirNodeWith is newDirNode with o (its key and clock set here).
func newDirNodeWith(t *testing.T, o node.Options) (n *apiNode, close func()) {
	t.Helper()
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
	o.NodeKey, o.Clock = key, clk.now
	l, err := node.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Node: l, MaxBodyBytes: 1 << 20, LoopbackOperator: true})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	done := false
	close = func() {
		if !done {
			done = true
			srv.Close()
			if err := l.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(close)
	return &apiNode{node: l, srv: srv, c: &httpapi.Client{BaseURL: srv.URL}, clk: clk}, close
}

// depositDraft POSTs sealed's objects under commitment with salt to n's
// /restricted and returns the status and answer.
func depositDraft(t *testing.T, n *apiNode, space, branch, commitment string, salt []byte, sealed author.Sealed) (int, map[string]any) {
	t.Helper()
	var objs []json.RawMessage
	for _, o := range sealed.Objects {
		objs = append(objs, o)
	}
	body, _ := json.Marshal(map[string]any{"session": space, "branch": branch, "commitment": commitment,
		"salt": base64.RawURLEncoding.EncodeToString(salt), "objects": objs})
	st, _, m := rawDo(t, http.MethodPost, n.srv.URL+httpapi.Base+"/restricted", body)
	return st, m
}

// TestRestrictedDraftSurvivesRestartHTTP: a deposited draft is kept in
// the node's store, not in memory only. Node A runs on a Badger
// directory; member 2 commits to C1 on restricted branch r-p1 (owner
// group "drafters": members 1 and 2) and deposits it over HTTP. A is
// closed and opened again on the same directory (a challenge taken
// before the restart is void after it: nonces are in memory). After the
// restart member 1 (a drafter) reads the draft by signed challenge and
// gets exactly the deposited objects, change and salt; member 5 (not a
// drafter) and a commitment nothing was deposited for get the same 404;
// depositing C1 again answers stored and changes nothing. The draft is
// still not an object (/objects 404).
func TestRestrictedDraftSurvivesRestartHTTP(t *testing.T) {
	dir := t.TempDir()
	a, closeA := newDirNode(t, dir)
	s := startSession(t, a, ht.Options{Simulation: true}, 10)
	b := s.b
	const br = "r-p1"
	s.do(t, a, b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	salt := saltOf(21)
	c1 := sealChange(t, b, ht.Member(2), br, b.Genesis, "/us/t1/s1", "The period is 61 days.", salt)
	tx, com := commitTx(t, b, ht.Member(2), br, c1, salt, s.last)
	s.do(t, a, tx)
	salt2 := saltOf(22)
	c2 := sealChange(t, b, ht.Member(1), br, c1.Change, "/us/t1/s1", "The period is 62 days.", salt2)
	tx2, com2 := commitTx(t, b, ht.Member(1), br, c2, salt2, s.last)
	s.do(t, a, tx2) // committed, never deposited
	if st, m := depositDraft(t, a, s.space, br, com, salt, c1); st != http.StatusOK || m["stored"] != true {
		t.Fatalf("deposit: %d %v", st, m)
	}
	_, _, stale := readDraftAs(t, a, s.space, com, ht.Member(1), "")
	closeA()

	a, _ = newDirNode(t, dir)
	if st, _, _ := readDraftAs(t, a, s.space, com, ht.Member(1), stale); st != http.StatusNotFound {
		t.Fatalf("a nonce from before the restart: %d", st)
	}
	st, m, _ := readDraftAs(t, a, s.space, com, ht.Member(1), "")
	if st != http.StatusOK || m["change"] != c1.Change.String() || m["commitment"] != com || m["branch"] != br ||
		m["salt"] != base64.RawURLEncoding.EncodeToString(salt) || m["simulation"] != true {
		t.Fatalf("drafter's read after the restart: %d %v", st, m)
	}
	objs, _ := m["objects"].([]any)
	if len(objs) != len(c1.Objects) {
		t.Fatalf("drafter's read after the restart: %d objects, want %d", len(objs), len(c1.Objects))
	}
	for i := range objs {
		if jsonString(t, objs[i]) != string(c1.Objects[i]) {
			t.Fatalf("object %d after the restart: %s, deposited %s", i, jsonString(t, objs[i]), c1.Objects[i])
		}
	}
	stOther, mOther, _ := readDraftAs(t, a, s.space, com, ht.Member(5), "")
	stNone, mNone, _ := readDraftAs(t, a, s.space, com2, ht.Member(1), "")
	if stOther != http.StatusNotFound || stNone != http.StatusNotFound || jsonString(t, mOther) != jsonString(t, mNone) {
		t.Fatalf("a non-drafter's read %d %v, a read of an undeposited commitment %d %v: want the same 404", stOther, mOther, stNone, mNone)
	}
	if st, m := depositDraft(t, a, s.space, br, com, salt, c1); st != http.StatusOK || m["stored"] != true {
		t.Fatalf("deposit again: %d %v", st, m)
	}
	if st, _ := getRaw(t, a, "/objects/"+c1.Change.String()); st != http.StatusNotFound {
		t.Fatalf("/objects of the deposited draft: %d", st)
	}
}

// TestRestrictedDepositNoLeakHTTPRapid: a property over sessions drawn by
// rapid generators (6 seeds: the number of drafts n = 1..3, who commits
// each, their texts, and whether node A restarts between the deposits
// and the reads). Node A runs on a Badger directory; every draft is
// committed and deposited with A over HTTP. Node B pulls A
// (node.PullHTTP: the sync frames are A's /log with attachments). On
// both nodes no answer — /log with attachments, the state, branches and
// tree, MRs, /law, the roll-call and Popolo exports, the events stream,
// /objects and /cite — names a draft's change id, its snapshot or its
// text, and B holds no draft (its replica answers none, and a drafter's
// challenge on B is 404). A drafter's challenge on A still reads each.
func TestRestrictedDepositNoLeakHTTPRapid(t *testing.T) {
	type plan struct {
		drafters []int
		days     []int
		restart  bool
	}
	gen := rapid.Custom(func(t *rapid.T) plan {
		n := rapid.IntRange(1, 3).Draw(t, "n")
		return plan{
			drafters: rapid.SliceOfN(rapid.IntRange(1, 2), n, n).Draw(t, "drafters"),
			days:     rapid.SliceOfNDistinct(rapid.IntRange(31, 999), n, n, rapid.ID[int]).Draw(t, "days"),
			restart:  rapid.Bool().Draw(t, "restart"),
		}
	})
	for seed := 0; seed < 6; seed++ {
		p := gen.Example(seed)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			dir := t.TempDir()
			a, closeA := newDirNode(t, dir)
			bn := newNode(t)
			s := startSession(t, a, ht.Options{}, 5)
			b := s.b
			const br = "r-5e1b"
			s.do(t, a, b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
			var coms []string
			var secrets [][]string
			var hidden []dag.ID
			parent := b.Genesis
			for i, d := range p.drafters {
				salt := saltOf(byte(50 + i))
				text := fmt.Sprintf("The period is %d days.", p.days[i])
				sc := sealChange(t, b, ht.Member(d), br, parent, "/us/t1/s1", text, salt)
				tx, com := commitTx(t, b, ht.Member(d), br, sc, salt, s.last)
				s.do(t, a, tx)
				if st, m := depositDraft(t, a, s.space, br, com, salt, sc); st != http.StatusOK || m["stored"] != true {
					t.Fatalf("deposit %d: %d %v", i, st, m)
				}
				coms = append(coms, com)
				secrets = append(secrets, []string{sc.Change.String(), sc.Result.Hash().String(), text})
				hidden = append(hidden, sc.Change, sc.Result.Hash())
				parent = sc.Change
			}
			if p.restart {
				closeA()
				a, _ = newDirNode(t, dir)
			}
			pull(t, bn, a)
			converged(t, a, bn, s.space)
			entries := 5 + len(coms)
			for _, n := range []*apiNode{a, bn} {
				all := everyAnswer(t, n, s.space, br, entries, hidden)
				_, pop := getRaw(t, n, "/export/popolo?session="+s.space)
				all += pop
				for i, sec := range secrets {
					for _, x := range sec {
						if strings.Contains(all, x) {
							t.Fatalf("an answer names %q of deposited draft %d", x, i)
						}
					}
				}
			}
			for i, com := range coms {
				cid, err := dag.ParseID(com)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok, err := bn.node.Replica().Draft(t.Context(), dag.MustParseID(s.space), cid); ok || err != nil {
					t.Fatalf("node B holds draft %d (%v)", i, err)
				}
				if st, _, _ := readDraftAs(t, bn, s.space, com, ht.Member(p.drafters[i]), ""); st != http.StatusNotFound {
					t.Fatalf("node B serves draft %d: %d", i, st)
				}
				if st, m, _ := readDraftAs(t, a, s.space, com, ht.Member(p.drafters[i]), ""); st != http.StatusOK || m["change"] != secrets[i][0] {
					t.Fatalf("drafter's read of draft %d on A: %d %v", i, st, m)
				}
			}
		})
	}
}

// TestRestrictedDraftBoundHTTP: past the node's draft bound a deposit is
// refused 429 rate_limited and nothing is kept. A node with MaxDrafts 1
// (node.Options, passed to the replica) keeps member 2's deposit of C1;
// member 1's deposit of C2, committed on the same branch, is refused,
// and member 1's challenge for C2 answers 404 while C1 is still read.
func TestRestrictedDraftBoundHTTP(t *testing.T) {
	a, _ := newDirNodeWith(t, node.Options{Dir: t.TempDir(), Replica: replica.Options{MaxDrafts: 1}})
	s := startSession(t, a, ht.Options{}, 5)
	b := s.b
	const br = "r-b1"
	s.do(t, a, b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	salt1, salt2 := saltOf(31), saltOf(32)
	c1 := sealChange(t, b, ht.Member(2), br, b.Genesis, "/us/t1/s1", "The period is 81 days.", salt1)
	tx1, com1 := commitTx(t, b, ht.Member(2), br, c1, salt1, s.last)
	s.do(t, a, tx1)
	c2 := sealChange(t, b, ht.Member(1), br, c1.Change, "/us/t1/s1", "The period is 82 days.", salt2)
	tx2, com2 := commitTx(t, b, ht.Member(1), br, c2, salt2, s.last)
	s.do(t, a, tx2)
	if st, m := depositDraft(t, a, s.space, br, com1, salt1, c1); st != http.StatusOK || m["stored"] != true {
		t.Fatalf("first deposit: %d %v", st, m)
	}
	if st, m := depositDraft(t, a, s.space, br, com2, salt2, c2); st != http.StatusTooManyRequests || m["code"] != string(dag.CodeRateLimited) {
		t.Fatalf("a deposit past MaxDrafts 1: %d %v, want 429 rate_limited", st, m)
	}
	if st, _, _ := readDraftAs(t, a, s.space, com2, ht.Member(1), ""); st != http.StatusNotFound {
		t.Fatalf("the refused draft is served: %d", st)
	}
	if st, m, _ := readDraftAs(t, a, s.space, com1, ht.Member(1), ""); st != http.StatusOK || m["change"] != c1.Change.String() {
		t.Fatalf("the kept draft: %d %v", st, m)
	}
}
