package opinion_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

type vecNode struct {
	Heading string `json:"heading"`
	Text    string `json:"text"`
}

type vecOpinion struct {
	Author string `json:"author"`
	Body   string `json:"body"`
}

// vecRecord is a causal past (Record) or a whole record (Facts) written
// out by hand.
type vecRecord struct {
	Snapshots map[string]map[string]vecNode `json:"snapshots"`
	Opinions  map[string]vecOpinion         `json:"opinions"`
	Objects   []string                      `json:"objects"`
	MRs       map[string]struct {
		Executed      bool   `json:"executed"`
		Determination string `json:"determination"`
		Outcome       string `json:"outcome"`
		Approve       uint64 `json:"approve"`
		Reject        uint64 `json:"reject"`
		Abstain       uint64 `json:"abstain"`
	} `json:"mrs"`
	Ballots []struct {
		Member        string   `json:"member"`
		MR            string   `json:"mr"`
		Ballots       []string `json:"ballots"`
		Void          bool     `json:"void"`
		Choice        string   `json:"choice"`
		Decided       bool     `json:"decided"`
		Determination string   `json:"determination"`
	} `json:"ballots"`
	Authors map[string]string `json:"authors"`
}

func (r *vecRecord) Node(asOf dag.ID, nid string) (string, string, bool, bool) {
	s, ok := r.Snapshots[asOf.String()]
	if !ok {
		return "", "", false, false
	}
	n, ok := s[nid]
	return n.Heading, n.Text, ok, true
}

func (r *vecRecord) Opinion(id dag.ID) (dag.Key, string, bool) {
	o, ok := r.Opinions[id.String()]
	if !ok {
		return dag.Key{}, "", false
	}
	k, _ := dag.ParseKey(o.Author)
	return k, o.Body, true
}

func (r *vecRecord) HasObject(id dag.ID) bool { return slices.Contains(r.Objects, id.String()) }

func (r *vecRecord) Ballot(member dag.Key, mr dag.ID) opinion.BallotStanding {
	_, known := r.MRs[mr.String()]
	b := opinion.BallotStanding{MRKnown: known}
	for _, x := range r.Ballots {
		if x.Member == member.String() && x.MR == mr.String() {
			for _, s := range x.Ballots {
				b.Ballots = append(b.Ballots, dag.MustParseID(s))
			}
			b.Void, b.Choice, b.Decided = x.Void, x.Choice, x.Decided
			if x.Determination != "" {
				b.Determination = dag.MustParseID(x.Determination)
			}
		}
	}
	return b
}

func (r *vecRecord) MR(mr dag.ID) opinion.MRStanding {
	m, ok := r.MRs[mr.String()]
	if !ok {
		return opinion.MRStanding{}
	}
	s := opinion.MRStanding{Known: true, Executed: m.Executed, Outcome: m.Outcome, Approve: m.Approve, Reject: m.Reject, Abstain: m.Abstain}
	if m.Determination != "" {
		s.Determination = dag.MustParseID(m.Determination)
	}
	return s
}

func (r *vecRecord) Author(id dag.ID) (dag.Key, dag.ID, bool) {
	a, ok := r.Authors[id.String()]
	if !ok {
		return dag.Key{}, dag.ID{}, false
	}
	k, _ := dag.ParseKey(a)
	return k, id, true
}

type vecStanding struct {
	Member     bool                `json:"member"`
	Observer   bool                `json:"observer"`
	Roster     []string            `json:"roster"`
	Groups     map[string][]string `json:"groups"` // id → admins
	Registered bool                `json:"registered"`
	KeyAge     int64               `json:"key_age"`
}

// standing is what the house computes from the causal past, here from
// the vector's roster and groups.
func (v vecStanding) standing(signer dag.Key, o *opinion.Opinion) opinion.Standing {
	s := opinion.Standing{Member: v.Member, Observer: v.Observer, Registered: v.Registered, KeyAge: v.KeyAge}
	if d := o.Disclosure; d != nil && d.Principal.Valid() {
		s.PrincipalMember = (v.Member && d.Principal == signer) || slices.Contains(v.Roster, d.Principal.String())
	}
	admins, ok := v.Groups[o.OnBehalfOf]
	s.GroupExists, s.GroupAdmin = ok, slices.Contains(admins, signer.String())
	return s
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPublishVectors runs the hand-derived opinion.publish vectors: decode,
// the author rules, then the content against the record.
func TestPublishVectors(t *testing.T) {
	var f struct {
		Provisional bool      `json:"provisional"`
		Record      vecRecord `json:"record"`
		Cases       []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Signer      string          `json:"signer"`
			Standing    vecStanding     `json:"standing"`
			Body        json.RawMessage `json:"body"`
			Code        string          `json:"code"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/vectors/opinion_publish.json", &f)
	if !f.Provisional || len(f.Cases) < 40 {
		t.Fatalf("vectors: provisional %v, %d cases", f.Provisional, len(f.Cases))
	}
	codes := map[string]int{}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			signer, err := dag.ParseKey(c.Signer)
			if err != nil {
				t.Fatal(err)
			}
			err = judge(c.Body, signer, c.Standing, &f.Record)
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
			codes[c.Code]++
		})
	}
	for _, want := range []string{"", "schema", "disclosure_missing", "key_too_new", "not_authorized", "group_not_authorized",
		"observer_not_allowed", "quote_mismatch", "correction_invalid", "anchor_invalid", "assertion_unknown", "unknown_parent"} {
		if codes[want] == 0 {
			t.Errorf("no vector expects %q", want)
		}
	}
}

func judge(body []byte, signer dag.Key, v vecStanding, r opinion.Record) error {
	o, err := opinion.Decode(body)
	if err != nil {
		return err
	}
	if err := opinion.CheckAuthor(o, v.standing(signer, o)); err != nil {
		return err
	}
	return opinion.Check(o, signer, r)
}

// TestAssertionVectors runs the hand-derived assertion vectors.
func TestAssertionVectors(t *testing.T) {
	var f struct {
		Provisional bool `json:"provisional"`
		Cases       []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Assertion   json.RawMessage `json:"assertion"`
			Facts       vecRecord       `json:"facts"`
			Result      string          `json:"result"`
			Open        bool            `json:"open"`
			Code        string          `json:"code"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/vectors/assertions.json", &f)
	if !f.Provisional || len(f.Cases) < 15 {
		t.Fatalf("vectors: provisional %v, %d cases", f.Provisional, len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			a, err := opinion.DecodeAssertion(c.Assertion)
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
			if err != nil {
				return
			}
			r := opinion.EvaluateAssertion(a, &c.Facts)
			if r.Result != c.Result || r.Open != c.Open {
				t.Fatalf("result %s open %v, want %s open %v", r.Result, r.Open, c.Result, c.Open)
			}
		})
	}
}
