package rules_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

var update = flag.Bool("update", false, "rewrite the golden vectors in testdata/vectors from the code")

// The rule vectors are ours, not the spec's (the Catala-generated vectors
// of §10 do not exist yet): every case carries "provisional": true. They
// are generated from the table of TestEvaluate, whose expected outcomes and
// counts are written by hand from §7, so a vector is written only for a
// case the code already gets right by hand:
//
//	go test ./rules -run TestVectors -update
//
// TestVectorsReplay then reads the files as another implementation would:
// it decodes every input from JSON and checks the expected result.

type vectorFile struct {
	Kind        string       `json:"kind"`
	Provisional bool         `json:"provisional"`
	Comment     string       `json:"comment"`
	Cases       []vectorCase `json:"cases"`
}

type vectorCase struct {
	Name        string          `json:"name"`
	Provisional bool            `json:"provisional"`
	Rule        json.RawMessage `json:"rule"`
	MR          dag.ID          `json:"mr"`
	Electorate  []string        `json:"electorate"`
	Ballots     []vectorBallot  `json:"ballots"`
	Context     vectorContext   `json:"context"`
	Expect      vectorExpect    `json:"expect"`
}

type vectorBallot struct {
	Tx     dag.ID          `json:"tx"`
	Author dag.Key         `json:"author"`
	Body   json.RawMessage `json:"body"`
}

type vectorContext struct {
	At          *time.Time  `json:"at"`
	NoticeStart *time.Time  `json:"notice_start"`
	Facts       vectorFacts `json:"facts"`
}

type vectorFacts struct {
	Reverts         bool `json:"reverts"`
	StructureFailed bool `json:"structure_failed"`
	Emergency       bool `json:"emergency"`
	ShortNotice     bool `json:"short_notice"`
}

type vectorInvalid struct {
	Tx   dag.ID   `json:"tx"`
	Code dag.Code `json:"code"`
}

// vectorExpect is the part of a Result another implementation must
// reproduce; reasons and error details are witan's own words and are left
// out.
type vectorExpect struct {
	Outcome             rules.Outcome   `json:"outcome"`
	IfClosed            rules.Outcome   `json:"if_closed"`
	Tally               rules.Tally     `json:"tally"`
	Voided              []dag.Key       `json:"voided"`
	Invalid             []vectorInvalid `json:"invalid"`
	EmergencyDesignated bool            `json:"emergency_designated"`
	Timing              rules.Timing    `json:"timing"`
}

func expectOf(res rules.Result) vectorExpect {
	e := vectorExpect{
		Outcome: res.Outcome, IfClosed: res.IfClosed, Tally: res.Tally, Voided: res.Voided,
		Invalid: []vectorInvalid{}, EmergencyDesignated: res.EmergencyDesignated, Timing: res.Timing,
	}
	for _, inv := range res.Invalid {
		e.Invalid = append(e.Invalid, vectorInvalid{inv.Tx, inv.Code})
	}
	return e
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func buildVectors(t *testing.T) map[string]*vectorFile {
	files := map[string]*vectorFile{}
	for _, tc := range evalCases() {
		r := ref(t, tc.kind, tc.params, tc.minNotice)
		rb, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		el, err := rules.NewElectorate(members(tc.n))
		if err != nil {
			t.Fatal(err)
		}
		vc := vectorCase{
			Name: tc.name, Provisional: true, Rule: rb, MR: mrID, Electorate: []string{}, Ballots: []vectorBallot{},
			Context: vectorContext{At: timePtr(tc.ctx.At), NoticeStart: timePtr(tc.ctx.NoticeStart), Facts: vectorFacts(tc.ctx.Facts)},
		}
		for _, k := range el.Members() {
			vc.Electorate = append(vc.Electorate, k.String())
		}
		bs := ballots(tc.votes)
		for _, b := range bs {
			body, err := json.Marshal(b.BallotBody)
			if err != nil {
				t.Fatal(err)
			}
			vc.Ballots = append(vc.Ballots, vectorBallot{Tx: b.Tx, Author: b.Author, Body: body})
		}
		res, err := rules.Evaluate(r, members(tc.n), mrID, bs, tc.ctx)
		if err != nil {
			t.Fatal(err)
		}
		vc.Expect = expectOf(res)
		f := files[tc.kind]
		if f == nil {
			f = &vectorFile{Kind: tc.kind, Provisional: true,
				Comment: "witan's provisional rule vectors for 30k §7 (see docs/rules.md); ballots are listed in the order they are folded, which must not matter"}
			files[tc.kind] = f
		}
		f.Cases = append(f.Cases, vc)
	}
	return files
}

func TestVectors(t *testing.T) {
	for kind, f := range buildVectors(t) {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
		path := filepath.Join("testdata", "vectors", kind+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s differs from the code's output; if the change is intended, run go test ./rules -run TestVectors -update and review the diff", path)
		}
	}
}

func TestVectorsReplay(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "vectors", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	cases := 0
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f vectorFile
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, vc := range f.Cases {
			cases++
			if !vc.Provisional {
				t.Errorf("%s: %s is not marked provisional", path, vc.Name)
			}
			r, err := rules.ParseRef(vc.Rule)
			if err != nil {
				t.Fatalf("%s: %s: rule: %v", path, vc.Name, err)
			}
			var el []dag.Key
			for _, s := range vc.Electorate {
				k, err := dag.ParseKey(s)
				if err != nil {
					t.Fatal(err)
				}
				el = append(el, k)
			}
			var bs []rules.Ballot
			for _, vb := range vc.Ballots {
				body, err := rules.DecodeBallotBody(vb.Body)
				if err != nil {
					t.Fatalf("%s: %s: ballot %s: %v", path, vc.Name, vb.Tx, err)
				}
				bs = append(bs, rules.Ballot{Tx: vb.Tx, Author: vb.Author, BallotBody: body})
			}
			ctx := rules.Context{Facts: rules.Facts(vc.Context.Facts)}
			if vc.Context.At != nil {
				ctx.At = *vc.Context.At
			}
			if vc.Context.NoticeStart != nil {
				ctx.NoticeStart = *vc.Context.NoticeStart
			}
			// Ballots in reverse must give the same result.
			for pass := 0; pass < 2; pass++ {
				res, err := rules.Evaluate(r, el, vc.MR, bs, ctx)
				if err != nil {
					t.Fatalf("%s: %s: %v", path, vc.Name, err)
				}
				got := expectOf(res)
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(vc.Expect)
				if !bytes.Equal(gb, wb) {
					t.Errorf("%s: %s (pass %d):\n got %s\nwant %s", path, vc.Name, pass, gb, wb)
				}
				if !reflect.DeepEqual(res.Voided, vc.Expect.Voided) && len(res.Voided)+len(vc.Expect.Voided) > 0 {
					t.Errorf("%s: %s: voided %v, want %v", path, vc.Name, res.Voided, vc.Expect.Voided)
				}
				for i, j := 0, len(bs)-1; i < j; i, j = i+1, j-1 {
					bs[i], bs[j] = bs[j], bs[i]
				}
			}
		}
	}
	if cases < 20 {
		t.Errorf("only %d vector cases", cases)
	}
}
