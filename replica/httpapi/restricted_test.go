package httpapi_test

// Restricted branches over HTTP on two nodes (30k §4 "Restricted branches
// (commit-then-reveal)", S7; docs/restricted-branches.md). The
// commitments and the reveal bodies are computed here by hand
// (crypto/sha256 over salt || "sha256:<hex>"), not taken from the author
// package, so a mistake there cannot hide.

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
)

// handCommitment is sha256(salt || change id as written on the wire).
func handCommitment(salt []byte, change dag.ID) string {
	sum := sha256.Sum256(append(append([]byte{}, salt...), change.String()...))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// saltOf is a test salt: 32 bytes from seed (real salts are random).
func saltOf(seed byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = seed + byte(i)
	}
	return s
}

// sealChange makes (without sending anything) the change a drafter keeps
// while the branch is restricted: the change object and the node objects
// its result adds.
func sealChange(t *testing.T, b *ht.Builder, s *dag.Signer, branch string, parent dag.ID, nid, text string, salt []byte) author.Sealed {
	t.Helper()
	a, err := author.New(author.Options{Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	_, sealed, err := a.RestrictedAppend(t.Context(), b.Session, author.Change{Branch: branch, Parent: parent, Base: b.Trees[parent],
		Ops: []statute.Op{ht.Replace(b.Trees[parent], nid, text)}}, salt, []dag.ID{b.Session})
	if err != nil {
		t.Fatal(err)
	}
	if dag.Sum(sealed.Objects[0]) != sealed.Change {
		t.Fatal("the sealed change's first object is not the change")
	}
	b.Trees[sealed.Change] = sealed.Result
	return sealed
}

// commitTx is the restricted branch.append of sealed, body made by hand:
// {branch, commitment, size}, size the bytes the reveal will attach.
func commitTx(t *testing.T, b *ht.Builder, s *dag.Signer, branch string, sealed author.Sealed, salt []byte, parents ...dag.ID) (ht.Tx, string) {
	t.Helper()
	size := 0
	for _, o := range sealed.Objects {
		size += len(o)
	}
	c := handCommitment(salt, sealed.Change)
	return b.Sign(s, dag.TxBranchAppend, map[string]any{"branch": branch, "commitment": c, "size": size}, parents), c
}

type revealItem struct {
	commitment string
	change     dag.ID
	salt       []byte
	objects    [][]byte
}

// revealTx is a branch.reveal made by hand, with the changes' objects
// attached.
func revealTx(t *testing.T, b *ht.Builder, s *dag.Signer, branch string, items []revealItem, parents ...dag.ID) ht.Tx {
	t.Helper()
	var list []map[string]any
	var attach [][]byte
	for _, it := range items {
		list = append(list, map[string]any{"commitment": it.commitment, "change": it.change.String(), "salt": base64.RawURLEncoding.EncodeToString(it.salt)})
		attach = append(attach, it.objects...)
	}
	return b.Sign(s, dag.TxBranchReveal, map[string]any{"branch": branch, "changes": list}, parents, attach...)
}

// pull has to sync from over plain HTTP (node.PullHTTP: /sessions and
// /log with their attachments, through the peer write path), the sync
// witan up -peer-http runs; nothing may be quarantined.
func pull(t *testing.T, to, from *apiNode) {
	t.Helper()
	res, err := to.node.PullHTTP(t.Context(), node.NewHTTPPeer(from.srv.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Quarantined != 0 {
			t.Fatalf("pull: %+v", r)
		}
	}
}

// getRaw GETs path and returns the status and the body as text.
func getRaw(t *testing.T, n *apiNode, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(n.srv.URL + httpapi.Base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// answers are the read answers a peer that may not read the branch can
// ask for: the log with its attachments, the derived state, the branch
// and its tree, the events and the heads.
func answers(t *testing.T, n *apiNode, space, branch string) string {
	t.Helper()
	var sb strings.Builder
	for _, p := range []string{"/log?limit=1000", "/sessions/" + space, "/branches?session=" + space, "/branches/" + branch + "?session=" + space,
		"/branches/" + branch + "/tree?session=" + space, "/heads", "/merge-requests?session=" + space, "/law?session=" + space} {
		_, body := getRaw(t, n, p)
		sb.WriteString(body)
	}
	return sb.String()
}

// TestS7RestrictedRevealHTTP: S7 on two nodes. The drafters (members 1
// and 2) work on the restricted branch r-7f3a forked at genesis: member 2
// commits to C1 (/us/t1/s1 "45 days"), member 1 to C2 on top of it
// ("50 days"). Each restricted append carries only sha256(salt || id)
// and the size; sent with its content attached it is refused (schema)
// and the content is not kept; a non-drafter's commitment is refused
// (not_authorized). Node B, which no drafter uses, holds every entry
// after the sync (B pulls A over HTTP, node.PullHTTP) and derives the
// same state, but neither node holds or answers the changes, their ids,
// snapshots or text: /objects answers 404 and no read answer names them.
// MRs from the unrevealed branch are refused unrevealed_source, and a
// quote of the draft quote_mismatch (accepted once revealed). Forged
// reveals are refused: a wrong salt and another change under C1's
// commitment (commitment_mismatch), a non-owner's reveal
// (not_authorized), C2 before C1 (stale_mr). Member 1 reveals C1 and C2
// on A; after the sync both nodes hold them, the branch's head is C2 and
// its commitments are marked revealed. An MR from the revealed branch
// opened on B is approved by 6 of 10 (Majority: 6·2 = 12 > 10) and
// merged, and both nodes serve /us/t1/s1 as "The period is 50 days."
func TestS7RestrictedRevealHTTP(t *testing.T) {
	a, bn := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{}, 10)
	b := s.b
	const br = "r-7f3a"
	s.do(t, a, b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), s.last))

	salt1, salt2 := saltOf(1), saltOf(101)
	c1 := sealChange(t, b, ht.Member(2), br, b.Genesis, "/us/t1/s1", "The period is 45 days.", salt1)
	c2 := sealChange(t, b, ht.Member(1), br, c1.Change, "/us/t1/s1", "The period is 50 days.", salt2)
	if got := c1.Commitment.String(); got != handCommitment(salt1, c1.Change) {
		t.Fatalf("author's commitment %s, by hand %s", got, handCommitment(salt1, c1.Change))
	}

	// The content attached to the restricted append: refused, not kept.
	tx1, com1 := commitTx(t, b, ht.Member(2), br, c1, salt1, s.last)
	leaky := tx1
	leaky.Attach = c1.Objects
	if st, m := a.post(t, leaky); st < 400 || m["code"] != string(dag.CodeSchema) {
		t.Fatalf("restricted append with its content attached: %d %v, want schema", st, m)
	}
	s.do(t, a, tx1)
	tx2, com2 := commitTx(t, b, ht.Member(1), br, c2, salt2, s.last)
	s.do(t, a, tx2)
	// Only an owner-group member commits: member 5 is not a drafter.
	out, _ := commitTx(t, b, ht.Member(5), br, c2, saltOf(7), s.last)
	a.refuse(t, out, dag.CodeNotAuthorized)

	pull(t, bn, a)
	converged(t, a, bn, s.space)
	secrets := []string{c1.Change.String(), c2.Change.String(), c1.Result.Hash().String(), c2.Result.Hash().String(), "45 days", "50 days"}
	for _, n := range []*apiNode{a, bn} {
		v := n.get(t, "/branches/"+br+"?session="+s.space)
		if field(v, "branch", "visibility") != "restricted" || jsonString(t, field(v, "branch", "heads")) != `["`+b.Genesis.String()+`"]` {
			t.Fatalf("branch before the reveal: %s", jsonString(t, v))
		}
		// Commitments by commitment id, each with its size and key.
		want := map[string][2]string{com1: {tx1.ID.String(), ht.Member(2).Key().String()}, com2: {tx2.ID.String(), ht.Member(1).Key().String()}}
		for i := 0; i < 2; i++ {
			cv := field(v, "branch", "commitments", i)
			w, ok := want[field(cv, "commitment").(string)]
			if !ok || field(cv, "tx") != w[0] || field(cv, "author") != w[1] || field(cv, "revealed") != nil {
				t.Fatalf("commitment %d: %s", i, jsonString(t, cv))
			}
		}
		for _, id := range []dag.ID{c1.Change, c2.Change, dag.Sum(c1.Objects[1])} {
			if st, _ := getRaw(t, n, "/objects/"+id.String()); st != http.StatusNotFound {
				t.Fatalf("/objects/%s before the reveal: %d", id, st)
			}
		}
		all := answers(t, n, s.space, br)
		for _, sec := range secrets {
			if strings.Contains(all, sec) {
				t.Fatalf("a read answer names %q before the reveal", sec)
			}
		}
	}

	// An MR from the unrevealed branch.
	early, _ := b.Open(ht.Member(3), ht.MR{Source: br, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	bn.refuse(t, early, dag.CodeUnrevealedSource)
	early, _ = b.Open(ht.Member(3), ht.MR{Source: br, SourceHead: c2.Change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	bn.refuse(t, early, dag.CodeUnrevealedSource)

	// A quote of the draft (D21): its snapshot is known to no causal past.
	quoteOf := func(parents ...dag.ID) ht.Tx {
		return b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k-v0.13", map[string]any{
			"quotes": []any{map[string]any{"as_of": c1.Result.Hash().String(), "nid": "/us/t1/s1", "text": "45 days"}}}), parents...)
	}
	bn.refuse(t, quoteOf(s.last), dag.CodeQuoteMismatch)

	// Forged reveals, on B.
	it1 := revealItem{commitment: com1, change: c1.Change, salt: salt1, objects: c1.Objects}
	it2 := revealItem{commitment: com2, change: c2.Change, salt: salt2, objects: c2.Objects}
	bad := it1
	bad.salt = saltOf(2)
	bn.refuse(t, revealTx(t, b, ht.Member(2), br, []revealItem{bad}, s.last), dag.CodeCommitmentMismatch)
	other := sealChange(t, b, ht.Member(2), br, b.Genesis, "/us/t1/s1", "The period is 60 days.", salt1)
	bn.refuse(t, revealTx(t, b, ht.Member(2), br, []revealItem{{commitment: com1, change: other.Change, salt: salt1, objects: other.Objects}}, s.last), dag.CodeCommitmentMismatch)
	bn.refuse(t, revealTx(t, b, ht.Member(5), br, []revealItem{it1, it2}, s.last), dag.CodeNotAuthorized)
	// C2 before C1: C2's parent is not the branch's revealed head.
	bn.refuse(t, revealTx(t, b, ht.Member(1), br, []revealItem{it2}, s.last), dag.CodeStaleMR)

	// The reveal, on A.
	s.do(t, a, revealTx(t, b, ht.Member(1), br, []revealItem{it1, it2}, s.last))
	pull(t, bn, a)
	converged(t, a, bn, s.space)
	for _, n := range []*apiNode{a, bn} {
		v := n.get(t, "/branches/"+br+"?session="+s.space)
		if jsonString(t, field(v, "branch", "heads")) != `["`+c2.Change.String()+`"]` {
			t.Fatalf("heads after the reveal: %s", jsonString(t, field(v, "branch", "heads")))
		}
		for i := 0; i < 2; i++ {
			cv := field(v, "branch", "commitments", i)
			want := c1.Change.String()
			if field(cv, "commitment") == com2 {
				want = c2.Change.String()
			}
			if field(cv, "revealed") != want {
				t.Fatalf("commitment %d after the reveal: %s", i, jsonString(t, cv))
			}
		}
		if st, body := getRaw(t, n, "/objects/"+c1.Change.String()); st != http.StatusOK || !strings.Contains(body, `"ops"`) {
			t.Fatalf("/objects/C1 after the reveal: %d %.200s", st, body)
		}
	}

	// Revealed, the draft can be quoted.
	s.do(t, bn, quoteOf(headsOf(t, bn)...))

	// The revealed branch merges, through an MR opened on B.
	o, mr := b.Open(ht.Member(3), ht.MR{Source: br, SourceHead: c2.Change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, headsOf(t, bn)...)
	s.do(t, bn, o)
	yes := s.vote(t, bn, mr, "approve", 0, 6)
	s.do(t, bn, b.Determine(ht.Member(3), mr, yes, "approved", s.last))
	pull(t, a, bn)
	converged(t, a, bn, s.space)
	for _, n := range []*apiNode{a, bn} {
		if txt := lawText(t, n, "/us/t1/s1"); txt != "The period is 50 days." {
			t.Fatalf("law /us/t1/s1 after the merge: %q", txt)
		}
	}
}

// everyAnswer is answers plus what else a reader can ask of n: the
// roll-call export, the events stream replayed from the start (count
// entries), and /objects and /cite of each id in ids (each must be 404).
func everyAnswer(t *testing.T, n *apiNode, space, branch string, count int, hidden []dag.ID) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(answers(t, n, space, branch))
	_, body := getRaw(t, n, "/export/rollcall?session="+space)
	sb.WriteString(body)
	c := openEvents(t, n.srv.URL, "session="+space, "")
	for i := 0; i < count; i++ {
		ev := next(t, c)
		sb.WriteString(jsonString(t, ev.Data))
	}
	for _, id := range hidden {
		for _, p := range []string{"/objects/", "/cite/"} {
			if st, _ := getRaw(t, n, p+id.String()+"?session="+space); st != http.StatusNotFound {
				t.Fatalf("%s%s of an unrevealed draft: %d", p, id, st)
			}
		}
	}
	return sb.String()
}

// TestRestrictedNoLeakHTTPRapid: a property over sessions drawn by rapid
// generators (8 seeds: each draws the number of drafts n, who commits
// each, their texts, and how many the drafters reveal, k = 0..n). The
// drafts are committed on node A; node B pulls A over HTTP. Until a
// draft is revealed, no answer of either node — /log with attachments,
// the state, the branches and tree, the MRs, /law, the roll-call
// export, the events stream, /objects and /cite — names its change id,
// its snapshot or its text; once k are revealed and B has pulled again,
// B serves the k revealed changes and still nothing of the others, and
// both nodes hold the same heads and state.
func TestRestrictedNoLeakHTTPRapid(t *testing.T) {
	type plan struct {
		drafters []int
		days     []int
		k        int
	}
	gen := rapid.Custom(func(t *rapid.T) plan {
		n := rapid.IntRange(1, 3).Draw(t, "n")
		return plan{
			drafters: rapid.SliceOfN(rapid.IntRange(1, 2), n, n).Draw(t, "drafters"),
			days:     rapid.SliceOfNDistinct(rapid.IntRange(31, 999), n, n, rapid.ID[int]).Draw(t, "days"),
			k:        rapid.IntRange(0, n).Draw(t, "k"),
		}
	})
	for seed := 0; seed < 8; seed++ {
		p := gen.Example(seed)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			a, bn := newNode(t), newNode(t)
			s := startSession(t, a, ht.Options{}, 5)
			b := s.b
			const br = "r-0c4d"
			s.do(t, a, b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
			var items []revealItem
			var secrets [][]string
			var hidden [][]dag.ID
			parent := b.Genesis
			for i, d := range p.drafters {
				salt := saltOf(byte(40 * (i + 1)))
				text := fmt.Sprintf("The period is %d days.", p.days[i])
				sc := sealChange(t, b, ht.Member(d), br, parent, "/us/t1/s1", text, salt)
				tx, com := commitTx(t, b, ht.Member(d), br, sc, salt, s.last)
				s.do(t, a, tx)
				items = append(items, revealItem{commitment: com, change: sc.Change, salt: salt, objects: sc.Objects})
				secrets = append(secrets, []string{sc.Change.String(), sc.Result.Hash().String(), text})
				hidden = append(hidden, []dag.ID{sc.Change, sc.Result.Hash()})
				parent = sc.Change
			}
			entries := 5 + len(items)
			check := func(label string, from int) {
				t.Helper()
				for _, n := range []*apiNode{a, bn} {
					for i := from; i < len(items); i++ {
						all := everyAnswer(t, n, s.space, br, entries, hidden[i])
						for _, sec := range secrets[i] {
							if strings.Contains(all, sec) {
								t.Fatalf("%s: an answer names %q of unrevealed draft %d", label, sec, i)
							}
						}
					}
				}
			}
			pull(t, bn, a)
			converged(t, a, bn, s.space)
			check("before any reveal", 0)
			if p.k == 0 {
				return
			}
			s.do(t, a, revealTx(t, b, ht.Member(1), br, items[:p.k], s.last))
			entries++
			pull(t, bn, a)
			converged(t, a, bn, s.space)
			for i := 0; i < p.k; i++ {
				if st, _ := getRaw(t, bn, "/objects/"+items[i].change.String()); st != http.StatusOK {
					t.Fatalf("revealed draft %d: /objects %d on B", i, st)
				}
			}
			check("after the reveal", p.k)
		})
	}
}

// readDraftAs asks n for the draft under commitment as signer: a fresh
// nonce from POST /restricted/challenge, signed by hand over
// "oth/0.10-draft-read\n" + JCS({commitment, nonce, session}) (members
// sorted). It returns the status, the answer and the nonce used.
func readDraftAs(t *testing.T, n *apiNode, space, commitment string, signer *dag.Signer, nonce string) (int, map[string]any, string) {
	t.Helper()
	if nonce == "" {
		st, _, m := rawDo(t, http.MethodPost, n.srv.URL+httpapi.Base+"/restricted/challenge", []byte(`{}`))
		if st != http.StatusOK {
			t.Fatalf("challenge: %d %v", st, m)
		}
		nonce = m["nonce"].(string)
	}
	msg := `{"commitment":"` + commitment + `","nonce":"` + nonce + `","session":"` + space + `"}`
	sig := base64.RawURLEncoding.EncodeToString(signer.Sign("oth/0.10-draft-read\n", []byte(msg)))
	st, _, m := rawDo(t, http.MethodGet, n.srv.URL+httpapi.Base+"/restricted/"+commitment+"?session="+space+"&key="+signer.Key().String()+"&nonce="+nonce+"&sig="+sig, nil)
	return st, m, nonce
}

// TestRestrictedDraftReadHTTP: the drafts of a restricted branch are
// served to owner-group members only, by signed challenge (30k §4). On
// node A, member 2 commits to C1 and deposits it (POST /restricted): a
// deposit whose salt does not give the commitment is refused
// commitment_mismatch, one for a commitment on no branch not_authorized.
// Member 1 (a drafter) reads it with a signed challenge and gets exactly
// the deposited objects; member 5 (not a drafter), a reused nonce, and a
// signature over another commitment all get the same 404. The deposit
// stays out of /objects and /log, and node B, after pulling A, holds no
// draft: member 1's challenge on B answers 404.
func TestRestrictedDraftReadHTTP(t *testing.T) {
	a, bn := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{Simulation: true}, 10)
	b := s.b
	const br = "r-d2"
	s.do(t, a, b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	salt := saltOf(9)
	c1 := sealChange(t, b, ht.Member(2), br, b.Genesis, "/us/t1/s1", "The period is 77 days.", salt)
	tx, com := commitTx(t, b, ht.Member(2), br, c1, salt, s.last)
	s.do(t, a, tx)

	deposit := func(salt []byte, commitment string) (int, map[string]any) {
		var objs []json.RawMessage
		for _, o := range c1.Objects {
			objs = append(objs, o)
		}
		body, _ := json.Marshal(map[string]any{"session": s.space, "branch": br, "commitment": commitment,
			"salt": base64.RawURLEncoding.EncodeToString(salt), "objects": objs})
		st, _, m := rawDo(t, http.MethodPost, a.srv.URL+httpapi.Base+"/restricted", body)
		return st, m
	}
	if st, m := deposit(saltOf(10), com); st < 400 || m["code"] != string(dag.CodeCommitmentMismatch) {
		t.Fatalf("deposit with a wrong salt: %d %v", st, m)
	}
	if st, m := deposit(salt, handCommitment(salt, c1.Change)[:7]+strings.Repeat("0", 64)); st < 400 || m["code"] == nil {
		t.Fatalf("deposit under another commitment: %d %v", st, m)
	}
	if st, m := deposit(salt, com); st != http.StatusOK || m["stored"] != true {
		t.Fatalf("deposit: %d %v", st, m)
	}

	st, m, _ := readDraftAs(t, a, s.space, com, ht.Member(1), "")
	if st != http.StatusOK || m["change"] != c1.Change.String() || m["simulation"] != true {
		t.Fatalf("drafter's read: %d %v", st, m)
	}
	objs, _ := m["objects"].([]any)
	if len(objs) != len(c1.Objects) || jsonString(t, objs[0]) != string(c1.Objects[0]) {
		t.Fatalf("drafter's read: %d objects, first %s", len(objs), jsonString(t, objs[0]))
	}
	if st, _, _ := readDraftAs(t, a, s.space, com, ht.Member(5), ""); st != http.StatusNotFound {
		t.Fatalf("a non-drafter's read: %d", st)
	}
	_, _, used := readDraftAs(t, a, s.space, com, ht.Member(1), "")
	if st, _, _ := readDraftAs(t, a, s.space, com, ht.Member(1), used); st != http.StatusNotFound {
		t.Fatalf("a reused nonce: %d", st)
	}
	// A signature over another commitment, sent for this one.
	stc, _, mc := rawDo(t, http.MethodPost, a.srv.URL+httpapi.Base+"/restricted/challenge", []byte(`{}`))
	if stc != http.StatusOK {
		t.Fatal(mc)
	}
	nonce := mc["nonce"].(string)
	other := `{"commitment":"` + tx.ID.String() + `","nonce":"` + nonce + `","session":"` + s.space + `"}`
	sig := base64.RawURLEncoding.EncodeToString(ht.Member(1).Sign("oth/0.10-draft-read\n", []byte(other)))
	if st, _, _ := rawDo(t, http.MethodGet, a.srv.URL+httpapi.Base+"/restricted/"+com+"?session="+s.space+"&key="+ht.Member(1).Key().String()+"&nonce="+nonce+"&sig="+sig, nil); st != http.StatusNotFound {
		t.Fatalf("a signature over another commitment: %d", st)
	}

	if st, _ := getRaw(t, a, "/objects/"+c1.Change.String()); st != http.StatusNotFound {
		t.Fatalf("/objects of the deposited draft: %d", st)
	}
	pull(t, bn, a)
	converged(t, a, bn, s.space)
	for _, n := range []*apiNode{a, bn} {
		if all := answers(t, n, s.space, br); strings.Contains(all, "77 days") || strings.Contains(all, c1.Change.String()) {
			t.Fatal("a read answer names the deposited draft")
		}
	}
	if st, _, _ := readDraftAs(t, bn, s.space, com, ht.Member(1), ""); st != http.StatusNotFound {
		t.Fatalf("node B serves a draft it was never given: %d", st)
	}
}
