package opinion_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// marketBody wraps one member of §8's markets in a plain member opinion.
func marketBody(t *testing.T, member string, value json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"subject": map[string]any{"type": "session", "id": "sha256:4444444444444444444444444444444444444444444444444444444444444444"},
		"author_kind": "member", "stance": "neutral", "summary": "s", "body": "b", member: value})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type vecMarkets struct {
	Provisional bool `json:"provisional"`
	Decode      []struct {
		Name        string          `json:"name"`
		Provisional bool            `json:"provisional"`
		Member      string          `json:"member"`
		Value       json.RawMessage `json:"value"`
		Simulation  bool            `json:"simulation"`
		Code        string          `json:"code"`
	} `json:"decode"`
	Resolve []struct {
		Name        string          `json:"name"`
		Provisional bool            `json:"provisional"`
		Spec        json.RawMessage `json:"spec"`
		Reports     []struct {
			Node        string `json:"node"`
			Consistency string `json:"consistency"`
			Reached     bool   `json:"reached"`
			Result      string `json:"result"`
			Finality    string `json:"finality"`
		} `json:"reports"`
		Outcome     string `json:"outcome"`
		Conflicting bool   `json:"conflicting"`
	} `json:"resolve"`
	Record struct {
		MRs []struct {
			ID         string   `json:"id"`
			Opener     string   `json:"opener"`
			Group      string   `json:"group"`
			Electorate uint64   `json:"electorate"`
			Approve    uint64   `json:"approve"`
			Reject     uint64   `json:"reject"`
			Abstain    uint64   `json:"abstain"`
			Voters     []string `json:"voters"`
			Merged     bool     `json:"merged"`
			Decided    bool     `json:"decided"`
			OpenCP     uint64   `json:"open_cp"`
			DetCP      uint64   `json:"det_cp"`
		} `json:"mrs"`
	} `json:"record"`
	Stats []struct {
		Name        string `json:"name"`
		Provisional bool   `json:"provisional"`
		Metric      string `json:"metric"`
		Scope       string `json:"scope"`
		Value       string `json:"value"`
		Code        string `json:"code"`
	} `json:"stats"`
	Rankings []struct {
		Name        string          `json:"name"`
		Provisional bool            `json:"provisional"`
		Ranking     json.RawMessage `json:"ranking"`
		Result      string          `json:"result"`
	} `json:"rankings"`
}

func (v *vecMarkets) record(t *testing.T) *opinion.StatsRecord {
	rec := &opinion.StatsRecord{Voted: map[dag.Key]uint64{}}
	for _, m := range v.Record.MRs {
		x := opinion.MRStats{ID: dag.MustParseID(m.ID), Group: m.Group, Electorate: m.Electorate, Approve: m.Approve, Reject: m.Reject,
			Abstain: m.Abstain, Merged: m.Merged, Decided: m.Decided, OpenCP: m.OpenCP, DetCP: m.DetCP}
		var err error
		if x.Opener, err = dag.ParseKey(m.Opener); err != nil {
			t.Fatal(err)
		}
		for _, k := range m.Voters {
			rec.Voted[mustKey(k)]++
		}
		rec.MRs = append(rec.MRs, x)
	}
	return rec
}

// TestMarketVectors runs the hand-derived vectors of resolutions,
// forecasts, rankings and the metric registry (D31, D34, D35, D50, D54).
func TestMarketVectors(t *testing.T) {
	var v vecMarkets
	readJSON(t, "testdata/vectors/markets.json", &v)
	if !v.Provisional || len(v.Decode) < 30 || len(v.Resolve) < 10 || len(v.Stats) < 20 || len(v.Rankings) < 8 {
		t.Fatalf("vectors: provisional %v, %d/%d/%d/%d cases", v.Provisional, len(v.Decode), len(v.Resolve), len(v.Stats), len(v.Rankings))
	}
	for _, c := range v.Decode {
		t.Run("decode/"+c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			o, err := opinion.Decode(marketBody(t, c.Member, c.Value))
			if err == nil {
				err = opinion.CheckSession(o, c.Simulation)
			}
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
		})
	}
	for _, c := range v.Resolve {
		t.Run("resolve/"+c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			o, err := opinion.Decode(marketBody(t, "resolution", c.Spec))
			if err != nil {
				t.Fatal(err)
			}
			var reps []opinion.Report
			for _, r := range c.Reports {
				reps = append(reps, opinion.Report{Node: mustKey(r.Node), Consistency: r.Consistency, Reached: r.Reached, Result: r.Result, Finality: r.Finality})
			}
			out, conflicting := opinion.Resolve(o.Resolution, reps)
			if out != c.Outcome || conflicting != c.Conflicting {
				t.Fatalf("%s conflicting %v, want %s %v", out, conflicting, c.Outcome, c.Conflicting)
			}
		})
	}
	rec := v.record(t)
	for _, c := range v.Stats {
		t.Run("stats/"+c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			sc, err := opinion.ParseScope(c.Scope)
			if err != nil {
				t.Fatal(err)
			}
			val, err := opinion.Stat(rec, c.Metric, sc)
			code := string(dag.CodeOf(err))
			if errors.Is(err, opinion.ErrNoSuchMR) {
				code = "not_found"
			}
			if code != c.Code {
				t.Fatalf("code %q, want %q (%v)", code, c.Code, err)
			}
			if err == nil && val.String() != c.Value {
				t.Fatalf("value %s, want %s", val, c.Value)
			}
		})
	}
	for _, c := range v.Rankings {
		t.Run("ranking/"+c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			o, err := opinion.Decode(marketBody(t, "ranking", c.Ranking))
			if err != nil {
				t.Fatal(err)
			}
			if got := opinion.EvaluateRanking(o.Ranking, rec); got != c.Result {
				t.Fatalf("%s, want %s", got, c.Result)
			}
		})
	}
}

// FuzzDecodeMarkets: any body decodes to an opinion or to a protocol
// error with a code; a decoded resolution with no reports is unresolved
// or unsatisfiable (never resolved), a decoded ranking evaluates over an
// empty record without a panic, and it fails there unless it names
// only members or groups at 0. Seeded with the market vectors.
func FuzzDecodeMarkets(f *testing.F) {
	var v vecMarkets
	readJSON(&testing.T{}, "testdata/vectors/markets.json", &v)
	wrap := func(member string, value json.RawMessage) []byte {
		b, _ := json.Marshal(map[string]any{"subject": map[string]any{"type": "spec", "id": "x"}, "author_kind": "member",
			"stance": "neutral", "summary": "s", "body": "b", member: value})
		return b
	}
	for _, c := range v.Decode {
		f.Add(wrap(c.Member, c.Value))
	}
	for _, c := range v.Rankings {
		f.Add(wrap("ranking", c.Ranking))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := opinion.Decode(b)
		if err != nil {
			if dag.CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if o.Resolution != nil {
			if out, _ := opinion.Resolve(o.Resolution, nil); out != opinion.Unresolved && out != opinion.Unsatisfiable {
				t.Fatalf("resolved on no report: %s", out)
			}
		}
		if o.Ranking != nil {
			got := opinion.EvaluateRanking(o.Ranking, &opinion.StatsRecord{})
			if o.Ranking.ScopeType == "mr" && got != opinion.Fails {
				t.Fatalf("a ranking of MRs holds over a record with none: %s", got)
			}
		}
	})
}
