package rules_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// Contest vectors (testdata/contest/contest.json) are written from the
// hand-derived table of contest_test.go, each case with its derivation,
// and only once TestContestHandDerived passes for it:
//
//	go test ./rules -run TestContestVectors -update
//
// TestContestVectorsReplay reads them as another implementation would.

type contestVectorFile struct {
	Kind        string              `json:"kind"`
	Provisional bool                `json:"provisional"`
	Comment     string              `json:"comment"`
	Bodies      []contestBodyVector `json:"bodies"`
	Cases       []contestVector     `json:"cases"`
}

type contestBodyVector struct {
	Provisional bool            `json:"provisional"`
	Type        string          `json:"type"`
	Body        json.RawMessage `json:"body"`
	Code        *string         `json:"code"` // null: accepted
}

type contestVector struct {
	Name        string            `json:"name"`
	Provisional bool              `json:"provisional"`
	Derivation  string            `json:"derivation"`
	Letters     map[string]string `json:"letters"`
	Rule        json.RawMessage   `json:"rule"`
	Electorate  []string          `json:"electorate"`
	Contest     dag.ID            `json:"contest"`
	Open        json.RawMessage   `json:"open"`
	Rankings    []vectorRanking   `json:"rankings"`
	Expect      contestExpect     `json:"expect"`
}

type vectorRanking struct {
	Tx     dag.ID          `json:"tx"`
	Author dag.Key         `json:"author"`
	Body   json.RawMessage `json:"body"`
}

// contestExpect is what another implementation must reproduce.
type contestExpect struct {
	Options           []string             `json:"options"`
	Pairwise          [][]uint64           `json:"pairwise"`
	Rankers           uint64               `json:"rankers"`
	Void              uint64               `json:"void"`
	Rounds            []rules.Round        `json:"rounds"`
	IfClosed          rules.Outcome        `json:"if_closed"`
	Winner            string               `json:"winner"`
	Decisions         []rules.OptionResult `json:"decisions"`
	RankedAboveWinner []rules.AboveWinner  `json:"ranked_above_winner"`
}

func contestExpectOf(r rules.ContestResult) contestExpect {
	return contestExpect{Options: r.Options, Pairwise: r.Pairwise, Rankers: r.Rankers, Void: r.Void, Rounds: r.Rounds,
		IfClosed: r.IfClosed, Winner: r.Winner, Decisions: r.Decisions, RankedAboveWinner: r.RankedAboveWinner}
}

func buildContestVectors(t *testing.T) *contestVectorFile {
	f := &contestVectorFile{Kind: "contest", Provisional: true,
		Comment: "witan's provisional contest vectors for 30k §7 (D47, D71, D77; see docs/rules.md): bodies with the code each gets (null = accepted), and contest outcomes derived by hand; letters name the options (S is status_quo)"}
	x, y := opt(1).String(), opt(2).String()
	ten := make([]string, 10)
	for i := range ten {
		ten[i] = fmt.Sprintf("%q", opt(byte(i+1)).String())
	}
	for _, bc := range contestBodyCases(x, y, ten) {
		v := contestBodyVector{Provisional: true, Type: bc.typ, Body: json.RawMessage(bc.body)}
		if bc.code != "" {
			c := bc.code
			v.Code = &c
		}
		f.Bodies = append(f.Bodies, v)
	}
	letters := map[string]string{"S": rules.StatusQuo}
	for _, l := range "XYZW" {
		letters[string(l)] = optLetters[byte(l)].String()
	}
	for _, tc := range contestCases() {
		r := ref(t, rules.KindThresholdVote, tc.params, -1)
		rb, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		body := rules.ContestOpenBody{}
		for i := 0; i < len(tc.options); i++ {
			body.Options = append(body.Options, optLetters[tc.options[i]])
		}
		ob, err := body.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		el, _ := rules.NewElectorate(members(tc.n))
		v := contestVector{Name: tc.name, Provisional: true, Derivation: tc.why, Letters: letters, Rule: rb,
			Electorate: []string{}, Contest: contestID, Open: ob, Rankings: []vectorRanking{}}
		for _, k := range el.Members() {
			v.Electorate = append(v.Electorate, k.String())
		}
		for _, x := range tc.rankings {
			rr := x.ranking()
			b, err := rr.RankBody.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			v.Rankings = append(v.Rankings, vectorRanking{Tx: rr.Tx, Author: rr.Author, Body: b})
		}
		v.Expect = contestExpectOf(runContestCase(t, tc, tc.rankings))
		f.Cases = append(f.Cases, v)
	}
	return f
}

var contestVectorPath = filepath.Join("testdata", "contest", "contest.json")

func TestContestVectors(t *testing.T) {
	b, err := json.MarshalIndent(buildContestVectors(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(contestVectorPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(contestVectorPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(contestVectorPath)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs from the code's output; if intended, run go test ./rules -run TestContestVectors -update and review the diff", contestVectorPath)
	}
}

func TestContestVectorsReplay(t *testing.T) {
	raw, err := os.ReadFile(contestVectorPath)
	if err != nil {
		t.Fatal(err)
	}
	var f contestVectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 6 || len(f.Bodies) < 10 {
		t.Fatalf("only %d cases and %d bodies", len(f.Cases), len(f.Bodies))
	}
	for _, bv := range f.Bodies {
		if !bv.Provisional {
			t.Errorf("body %s not provisional", bv.Body)
		}
		var err error
		if bv.Type == "contest.open" {
			_, err = rules.DecodeContestOpen(bv.Body)
		} else {
			_, err = rules.DecodeRankBody(bv.Body)
		}
		want := ""
		if bv.Code != nil {
			want = *bv.Code
		}
		if got := string(dag.CodeOf(err)); got != want {
			t.Errorf("%s %s: code %q, want %q", bv.Type, bv.Body, got, want)
		}
	}
	for _, vc := range f.Cases {
		if !vc.Provisional || vc.Derivation == "" {
			t.Errorf("%s: not provisional or no derivation", vc.Name)
		}
		r, err := rules.ParseRef(vc.Rule)
		if err != nil {
			t.Fatal(err)
		}
		var el []dag.Key
		for _, s := range vc.Electorate {
			k, err := dag.ParseKey(s)
			if err != nil {
				t.Fatal(err)
			}
			el = append(el, k)
		}
		open, err := rules.DecodeContestOpen(vc.Open)
		if err != nil {
			t.Fatal(err)
		}
		var rs []rules.Ranking
		for _, vr := range vc.Rankings {
			body, err := rules.DecodeRankBody(vr.Body)
			if err != nil {
				t.Fatalf("%s: %v", vc.Name, err)
			}
			rs = append(rs, rules.Ranking{Tx: vr.Tx, Author: vr.Author, RankBody: body})
		}
		res, err := rules.EvaluateContest(r, el, vc.Contest, open, rs, rules.ContestContext{})
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(contestExpectOf(res))
		wb, _ := json.Marshal(vc.Expect)
		if !bytes.Equal(gb, wb) {
			t.Errorf("%s:\n got %s\nwant %s", vc.Name, gb, wb)
		}
	}
}
