package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestExchangesHTTP (D67, research mode): exchanges between chambers and
// from a modeled executive are opinions {"mr","from","offer","prior"};
// a conference MR (one superseding the MR) lists the chain it resolves.
//
// By hand: in a simulation session, member 4's offer from "chamber:senate"
// on the MR (prior null) is accepted (x1), then member 5's answer from
// "executive" with prior x1 (x2). Refused: from "president" (schema), a
// prior that is the plain opinion on the spec (schema: not an exchange),
// a prior naming no opinion (unknown_parent), an MR never opened
// (unknown_parent), an offer of an unknown change (unknown_parent), and
// any exchange in a session that is not a simulation (schema). The MR's
// /exchanges lists offers [x1, x2] in chain order and resolves nothing;
// a conference MR superseding it lists no offers of its own and resolves
// {mr: the MR, exchanges: [x1, x2]}; hypothetical, never authoritative,
// labelled simulation.
func TestExchangesHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	plain := s.last // the member's plain opinion on the spec
	xb := func(from string, offer, prior dag.ID, mr dag.ID) map[string]any {
		x := map[string]any{"mr": mr.String(), "from": from, "offer": offer.String(), "prior": nil}
		if prior.Valid() {
			x["prior"] = prior.String()
		}
		return ht.OpinionBody("member", "mr", mr.String(), map[string]any{"exchange": x})
	}
	x1 := b.Opinion(ht.Member(4), xb("chamber:senate", s.change, dag.ID{}, s.mr), s.last)
	n.opAccept(t, s, x1)
	x2 := b.Opinion(ht.Member(5), xb("executive", s.change, x1.ID, s.mr), s.last)
	n.opAccept(t, s, x2)
	n.opRefuse(t, b.Opinion(ht.Member(6), xb("president", s.change, dag.ID{}, s.mr), s.last), http.StatusBadRequest, dag.CodeSchema)
	n.opRefuse(t, b.Opinion(ht.Member(6), xb("executive", s.change, plain, s.mr), s.last), http.StatusBadRequest, dag.CodeSchema)
	nowhere := dag.Sum([]byte("no such opinion"))
	n.opRefuse(t, b.Opinion(ht.Member(6), xb("executive", s.change, nowhere, s.mr), s.last), http.StatusUnprocessableEntity, dag.CodeUnknownParent)
	n.opRefuse(t, b.Opinion(ht.Member(6), xb("executive", s.change, dag.ID{}, nowhere), s.last), http.StatusUnprocessableEntity, dag.CodeUnknownParent)
	n.opRefuse(t, b.Opinion(ht.Member(6), xb("executive", nowhere, dag.ID{}, s.mr), s.last), http.StatusUnprocessableEntity, dag.CodeUnknownParent)

	open, conf := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Conference version", Supersedes: s.mr}, s.last)
	n.opAccept(t, s, open)

	mr := n.get(t, "/merge-requests/"+s.mr.String()+"/exchanges")
	offers, _ := mr["offers"].([]any)
	if len(offers) != 2 || field(offers, 0, "opinion") != x1.ID.String() || field(offers, 1, "opinion") != x2.ID.String() ||
		field(offers, 0, "prior") != nil || field(offers, 1, "prior") != x1.ID.String() || field(offers, 1, "from") != "executive" ||
		field(offers, 0, "offer") != s.change.String() || mr["resolves"] != nil {
		t.Fatalf("the MR's exchanges: %v", mr)
	}
	if mr["hypothetical"] != true || mr["authoritative"] != false || mr["simulation"] != true || mr["finality"] != "provisional" {
		t.Fatalf("labels %v %v %v %v", mr["hypothetical"], mr["authoritative"], mr["simulation"], mr["finality"])
	}
	cm := n.get(t, "/merge-requests/"+conf.String()+"/exchanges")
	chain, _ := field(cm, "resolves", "exchanges").([]any)
	if o, _ := cm["offers"].([]any); len(o) != 0 || field(cm, "resolves", "mr") != s.mr.String() || len(chain) != 2 ||
		field(chain, 0, "opinion") != x1.ID.String() || field(chain, 1, "opinion") != x2.ID.String() {
		t.Fatalf("the conference MR's exchanges: %v", cm)
	}

	// Not a research session: refused schema.
	ls := startSession(t, n, ht.Options{Label: "not a simulation"}, 10)
	body := ht.OpinionBody("member", "spec", "30k-v0.13", map[string]any{"exchange": map[string]any{"mr": s.mr.String(), "from": "executive", "offer": s.change.String(), "prior": nil}})
	st, m := n.post(t, ls.b.Opinion(ht.Member(4), body, ls.last))
	if st != http.StatusBadRequest || m["code"] != string(dag.CodeSchema) || !strings.Contains(m["detail"].(string), "research session") {
		t.Fatalf("an exchange outside a simulation: %d %v", st, m)
	}
}
