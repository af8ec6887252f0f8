package harness

import (
	"fmt"
	"net/http"
	"strconv"
)

// s10: what independent verifiers can show of honest nodes, with the
// harness as the verifier (30k §5 "Checkpoints", D40).
//
// An MR is driven with entries written to the first node and, when there
// are two, ballots written to the last; the harness keeps every signed
// receipt. A ballot by a key outside the roster is refused, and its
// signed rejection receipt names a refusal_index. Then, on every node:
// the checkpoint read before the last entries is reproduced by the RFC
// 9162 root of the first size ids of the log served after them (nothing
// the node signed was rewritten, reordered or dropped since); every
// accepted receipt the node signed names its tx at its log_index in the
// log it serves, and the rejection receipt names a record of that
// envelope at its refusal_index in /refusals (nothing acknowledged is
// withheld); every node's log holds the same entries (no node withholds
// what another serves); /forks, where served, lists no fork between the
// nodes.
//
// Not run: an operator that lies. The harness drives nodes only through
// /oth/v0 and cannot make an honest node withhold, reorder or rewrite
// what it signed, nor point one node at a lying peer.
func s10(s *sc) {
	r := s.r
	s.notRun("a malicious operator: a node that withholds, reorders or rewrites what it signed, caught by a verifier or a peer (the harness drives honest nodes over /oth/v0 and cannot make one lie, nor point a node at a lying peer)")
	ss := s.newSession(SessionOpts{Label: "S10"})
	r.keep(ss)
	type held struct {
		c  *Client
		rc map[string]any
	}
	var receipts []held
	keep := func(c *Client) { receipts = append(receipts, held{c, ss.LastReceipt}) }
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	keep(ss.c)
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	keep(ss.c)
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	keep(ss.c)
	s.converge(ss)
	last := r.clients[len(r.clients)-1]
	open := ss.Last
	var ballots []string
	for i := 0; i < 6; i++ {
		on := ss.c
		if i >= 3 {
			on = last
		}
		ballots = append(ballots, ss.AcceptOn(on, ss.TxOn(i, open, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "supersedes": nil})))
		keep(on)
	}
	s.converge(ss)
	ss.Last = ballots
	out := NewSigner(fmt.Sprintf("witan harness %s run %s S10 outsider", r.cfg.Seed, r.cfg.RunID))
	refused := ss.TxBy(out, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "supersedes": nil})
	ra := ss.c.Submit(r.ctx, refused)
	rrc, _ := Field(ra.JSON, "receipt").(map[string]any)
	s.check("a ballot by a key outside the roster is refused with a signed rejection receipt naming a refusal_index",
		ra.Status >= http.StatusBadRequest && rrc != nil && Str(rrc, "status") == "rejected" && VerifySigned(rrc, ReceiptDomain, "node") && Int(rrc, "refusal_index") >= 0,
		ra, "%d receipt %v", ra.Status, rrc)
	s.converge(ss)

	// The checkpoints before the last entries: the session.create, three
	// groups, the branch, the change, the open and six ballots.
	type cp struct {
		size int64
		root string
	}
	before := make([]cp, len(r.clients))
	for i, cl := range r.clients {
		var a *Answer
		ok := s.poll(func() bool {
			a = cl.Get(r.ctx, q("/checkpoint", ss.ID))
			return Int(a.JSON, "checkpoint", "size") >= 13
		})
		cpm, _ := Field(a.JSON, "checkpoint").(map[string]any)
		s.check("a signed checkpoint covering the MR's ballots: "+cl.URL, ok && cpm != nil && VerifySigned(cpm, CheckpointDomain, "node"), a, "checkpoint %v", Field(a.JSON, "checkpoint"))
		before[i] = cp{Int(a.JSON, "checkpoint", "size"), Str(a.JSON, "checkpoint", "root")}
	}
	ss.Accept(ss.DetermineTx(0, mr, ballots, "approved"))
	keep(ss.c)
	a, ok := s.waitFinality("/merge-requests/"+mr, ss)
	s.must("the determination is checkpointed", ok, a, "finality %q", Str(a.JSON, "finality"))
	s.converge(ss)

	var sets []map[string]bool
	for i, cl := range r.clients {
		ids, ok := s.readLog(cl, ss)
		if !ok {
			continue
		}
		set := map[string]bool{}
		for _, id := range ids {
			set[id] = true
		}
		sets = append(sets, set)
		b := before[i]
		root, err := MerkleRoot(ids[:min(int(max(b.size, 0)), len(ids))])
		s.check("the checkpoint signed before the last entries is reproduced by the log served after them (nothing rewritten, reordered or dropped): "+cl.URL,
			b.size > 0 && b.size <= int64(len(ids)) && err == nil && root == b.root, nil, "size %d root %s, computed %s over %d ids", b.size, b.root, root, len(ids))
		for _, h := range receipts {
			if h.c != cl {
				continue
			}
			li := Int(h.rc, "log_index")
			tx := Str(h.rc, "tx")
			s.check(fmt.Sprintf("the receipt for %s names it at log_index %d, where the log serves it: %s", tx, li, cl.URL),
				li >= 0 && li < int64(len(ids)) && ids[li] == tx, nil, "log of %d entries serves %v there", len(ids), func() string {
					if li >= 0 && li < int64(len(ids)) {
						return ids[li]
					}
					return "nothing"
				}())
		}
		if i == 0 && rrc != nil {
			ri := Int(rrc, "refusal_index")
			a := cl.Get(r.ctx, "/refusals?after="+strconv.FormatInt(ri, 10)+"&limit=1")
			s.check("the rejection receipt's refusal_index serves a record of that envelope in /refusals", Int(a.JSON, "refusals", 0, "index") == ri && Str(a.JSON, "refusals", 0, "envelope") == refused.ID,
				a, "record %v", Field(a.JSON, "refusals", 0))
		}
		f := cl.Get(r.ctx, "/forks")
		if f.Status != http.StatusNotFound {
			fs, _ := Field(f.JSON, "forks").([]any)
			s.check("/forks lists no fork: "+cl.URL, f.OK() && len(fs) == 0, f, "forks %v", Field(f.JSON, "forks"))
		}
	}
	same := len(sets) == len(r.clients) && len(sets) > 0
	for i := 1; same && i < len(sets); i++ {
		x := sets[i]
		same = same && len(x) == len(sets[0])
		for id := range x {
			same = same && sets[0][id]
		}
	}
	s.check("every node's log holds the same entries (none withholds what another serves)", same, nil, "the logs differ")
}
