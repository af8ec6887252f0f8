package house_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// TestCommitmentBytes: the commitment is sha256 over the 32 salt bytes
// followed by the change id as written on the wire, worked out here with
// crypto/sha256 (docs/restricted-branches.md, provisional).
func TestCommitmentBytes(t *testing.T) {
	salt := make([]byte, 32)
	for i := range salt {
		salt[i] = byte(i)
	}
	changeSum := sha256.Sum256([]byte("a change"))
	change := dag.Sum([]byte("a change"))
	sum := sha256.Sum256([]byte(string(salt) + "sha256:" + hex.EncodeToString(changeSum[:])))
	if got := house.Commitment(salt, change).String(); got != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("commitment %s", got)
	}
	if house.Commitment(salt, change) == house.Commitment(salt[:31], change) {
		t.Fatal("the salt does not enter the commitment")
	}
}

// TestRestrictedNoLeakRapid: restricted branches over random DAGs
// delivered in any order. Roster 0..5, drafters {1, 2}; a restricted
// branch at genesis; n (1..3) changes in a chain, each committed by a
// random drafter in an entry whose parents are drawn at random (so the
// commitments may be concurrent), among unrelated key.register entries;
// an MR from the branch whose causal past has every commitment but no
// reveal; one branch.reveal of the first k (1..n) changes; an MR from
// the revealed head. Every replica here holds every object, the
// revealed changes' included, from the start (as one that received a
// leaked copy would): what it derives must still not depend on them.
//
// By hand: until the reveal is admitted, the canonical state names none
// of the changes' ids, their snapshots or their texts; the early MR is
// refused unrevealed_source whatever arrives before it; after every
// entry, the branch's heads are [c_k], the n commitments are listed with
// the first k revealed (each its own change), the later MR is admitted,
// and the unrevealed changes' ids and texts are still named nowhere.
// Every delivery order gives the same state hash.
func TestRestrictedNoLeakRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := ht.New(ht.Options{})
		var all []ht.Tx
		add := func(tx ht.Tx) ht.Tx { all = append(all, tx); return tx }
		last := add(b.Create).ID
		last = add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 6), ht.Members(0, 1), last)).ID
		last = add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last)).ID
		last = add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), last)).ID
		const br = "r-q81z"
		last = add(b.RestrictedBranchCreate(ht.Member(1), br, "drafters", house.RootBranch, b.Genesis, ht.AlwaysAllow(), ht.TwoThirds(), last)).ID
		tail := []dag.ID{last}
		parents := func(label string) []dag.ID {
			k := rapid.IntRange(1, min(2, len(tail))).Draw(t, label+" parents")
			ps := rapid.SliceOfNDistinct(rapid.SampledFrom(tail), k, k, func(id dag.ID) string { return id.String() }).Draw(t, label)
			slices.SortFunc(ps, dag.ID.Compare)
			return ps
		}
		n := rapid.IntRange(1, 3).Draw(t, "changes")
		k := rapid.IntRange(1, n).Draw(t, "revealed")
		var sealed []author.Sealed
		var commits []dag.ID
		var texts []string
		parent := b.Genesis
		noise := 40
		for i := 0; i < n; i++ {
			for j := rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("noise %d", i)); j > 0; j-- {
				tx := add(b.KeyRegister(ht.Member(noise), parents(fmt.Sprintf("noise %d", noise))...))
				noise++
				tail = append(tail, tx.ID)
			}
			text := fmt.Sprintf("The period is %d days. Draft%dx%d", rapid.IntRange(31, 99).Draw(t, "days"), i, rapid.IntRange(0, 1<<20).Draw(t, "tag"))
			drafter := ht.Member(rapid.IntRange(1, 2).Draw(t, fmt.Sprintf("drafter %d", i)))
			tx, s := b.RestrictedAppend(drafter, br, parent, []statute.Op{ht.Replace(b.Trees[parent], "/us/t1/s1", text)}, byte(17*i+1), parents(fmt.Sprintf("commit %d", i))...)
			if len(tx.Attach) != 0 {
				t.Fatal("a restricted append carries attachments")
			}
			add(tx)
			tail = append(tail, tx.ID)
			commits = append(commits, tx.ID)
			sealed = append(sealed, s)
			texts = append(texts, text)
			parent = s.Change
		}
		everyCommit := slices.Clone(commits)
		slices.SortFunc(everyCommit, dag.ID.Compare)
		rule := ht.Majority(house.MinRootNotice)
		early, _ := b.Open(ht.Member(3), ht.MR{Source: br, SourceHead: b.Genesis, TargetHead: b.Genesis, Members: ht.Members(0, 6), Rule: rule}, everyCommit...)
		add(early)
		reveal := add(b.Reveal(ht.Member(rapid.IntRange(1, 2).Draw(t, "revealer")), br, sealed[:k], everyCommit...))
		later, mr := b.Open(ht.Member(4), ht.MR{Source: br, SourceHead: sealed[k-1].Change, TargetHead: b.Genesis, Members: ht.Members(0, 6), Rule: rule}, reveal.ID)
		add(later)

		secret := func(i int) []string {
			return []string{sealed[i].Change.String(), sealed[i].Result.Hash().String(), texts[i]}
		}
		var want dag.ID
		for r := 0; r < 3; r++ {
			order := rapid.Permutation(all).Draw(t, fmt.Sprintf("order%d", r))
			revealed := false
			h, refused := replayEach(t, b, order, func(h *house.House, id dag.ID) {
				revealed = revealed || id == reveal.ID
				_, js := stateHash(t, h)
				for i := range sealed {
					if i < k && revealed {
						continue
					}
					for _, s := range secret(i) {
						if strings.Contains(string(js), s) {
							t.Fatalf("order %d: the state names %q of change %d (revealed: %v)", r, s, i, revealed)
						}
					}
				}
			})
			if len(refused) != 1 || refused[0] != early.ID {
				t.Fatalf("order %d: refused %v, want only the early MR %s", r, refused, early.ID)
			}
			v := ht.BranchOf(h.State(), br)
			if v == nil || len(v.Heads) != 1 || v.Heads[0] != sealed[k-1].Change || v.Visibility != "restricted" || len(v.Commitments) != n {
				t.Fatalf("order %d: branch %+v", r, v)
			}
			for _, c := range v.Commitments {
				i := slices.IndexFunc(sealed, func(s author.Sealed) bool { return s.Commitment == c.Commitment })
				if i < 0 || c.Tx != commits[i] || (i < k) != (c.Revealed != nil) || (i < k && *c.Revealed != sealed[i].Change) {
					t.Fatalf("order %d: commitment %+v", r, c)
				}
			}
			if _, ok := h.MR(mr); !ok {
				t.Fatalf("order %d: the MR from the revealed head is missing", r)
			}
			got, _ := stateHash(t, h)
			if r == 0 {
				want = got
			} else if got != want {
				t.Fatalf("order %d: state differs", r)
			}
		}
	})
}

// replayEach is replay calling each after every admitted entry.
func replayEach(t *rapid.T, b *ht.Builder, order []ht.Tx, each func(*house.House, dag.ID)) (*house.House, []dag.ID) {
	h := house.New(b.Session, b.Objects)
	state := map[dag.ID]int{} // 1 admitted, 2 refused
	var refused []dag.ID
	pending := slices.Clone(order)
	for progress := true; progress && len(pending) > 0; {
		progress = false
		var rest []ht.Tx
		for _, tx := range pending {
			ready, dead := true, false
			for _, p := range tx.Parents {
				ready = ready && state[p] != 0
				dead = dead || state[p] == 2
			}
			switch {
			case !ready:
				rest = append(rest, tx)
				continue
			case dead:
				state[tx.ID] = 2
			default:
				if err := h.Admit(tx.ID, tx.Env); err != nil {
					if dag.CodeOf(err) == "" {
						t.Fatal(err)
					}
					if tx.Env.Type == dag.TxMROpen && dag.CodeOf(err) != dag.CodeUnrevealedSource {
						t.Fatalf("%s refused %v, want unrevealed_source", tx.Env.Type, err)
					}
					state[tx.ID] = 2
					refused = append(refused, tx.ID)
				} else {
					state[tx.ID] = 1
					each(h, tx.ID)
				}
			}
			progress = true
		}
		pending = rest
	}
	if len(pending) > 0 {
		t.Fatalf("%d entries never delivered", len(pending))
	}
	return h, refused
}

// TestRestrictedBodies: the restricted append and branch.reveal decoders
// (docs/restricted-branches.md): what decodes and what is schema.
func TestRestrictedBodies(t *testing.T) {
	c := house.Commitment(make([]byte, 32), dag.Sum([]byte("change"))).String()
	ch := dag.Sum([]byte("change")).String()
	salt := strings.Repeat("A", 43) // 32 zero bytes, base64url without padding
	item := func(salt string) string {
		return `{"change":"` + ch + `","commitment":"` + c + `","salt":"` + salt + `"}`
	}
	for _, tc := range []struct {
		typ  dag.TxType
		body string
		ok   bool
	}{
		{dag.TxBranchAppend, `{"branch":"r-1","commitment":"` + c + `","size":120}`, true},
		{dag.TxBranchAppend, `{"branch":"r-1","change":"` + ch + `","commitment":"` + c + `","size":120}`, false},
		{dag.TxBranchAppend, `{"branch":"r-1","commitment":"` + c + `"}`, false},
		{dag.TxBranchAppend, `{"branch":"r-1","size":120}`, false},
		{dag.TxBranchAppend, `{"branch":"r-1","commitment":"` + c + `","size":0}`, false},
		{dag.TxBranchAppend, `{"branch":"r-1","commitment":"` + c + `","size":4294967297}`, false},
		{dag.TxBranchReveal, `{"branch":"r-1","changes":[` + item(salt) + `]}`, true},
		{dag.TxBranchReveal, `{"branch":"r-1","changes":[]}`, false},
		{dag.TxBranchReveal, `{"branch":"r-1","changes":[` + item(salt) + `,` + item(salt) + `]}`, false},
		{dag.TxBranchReveal, `{"branch":"r-1","changes":[` + item(salt[:42]) + `]}`, false},
		{dag.TxBranchReveal, `{"branch":"r-1","changes":[` + item(salt+"=") + `]}`, false},
		{dag.TxBranchReveal, `{"branch":"r-1","changes":[` + item(salt) + `],"extra":1}`, false},
		{dag.TxBranchReveal, `{"changes":[` + item(salt) + `]}`, false},
	} {
		_, err := house.DecodeBody(tc.typ, []byte(tc.body))
		if tc.ok != (err == nil) || (err != nil && dag.CodeOf(err) != dag.CodeSchema) {
			t.Errorf("%s %s: %v, want ok %v (else schema)", tc.typ, tc.body, err, tc.ok)
		}
	}
}
