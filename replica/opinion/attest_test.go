package opinion_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// TestAttestationVectors runs the hand-derived attestation vectors (D76):
// malformed attestations refused attestation_invalid (inside an
// advisor's opinion body, judged by CheckAuthor and CheckParts), and what
// nodes show beside each affiliation from a set of attestations.
func TestAttestationVectors(t *testing.T) {
	var f struct {
		Provisional bool   `json:"provisional"`
		Signer      string `json:"signer"`
		Decode      []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Signer      string          `json:"signer"`
			Attest      json.RawMessage `json:"attest"`
			Code        string          `json:"code"`
		} `json:"decode"`
		Affiliations []struct {
			Name        string   `json:"name"`
			Provisional bool     `json:"provisional"`
			Orgs        []string `json:"orgs"`
			Records     []struct {
				Opinion   string          `json:"opinion"`
				Attester  string          `json:"attester"`
				TS        int64           `json:"ts"`
				Disclosed []string        `json:"disclosed"`
				Attest    json.RawMessage `json:"attest"`
			} `json:"records"`
			Today      string   `json:"today"`
			AttestedBy []string `json:"attested_by"`
		} `json:"affiliations"`
	}
	readJSON(t, "testdata/vectors/attestations.json", &f)
	if !f.Provisional || len(f.Decode) < 10 || len(f.Affiliations) < 12 {
		t.Fatalf("vectors: provisional %v, %d + %d cases", f.Provisional, len(f.Decode), len(f.Affiliations))
	}
	signer := mustKey(f.Signer)
	decode := func(t *testing.T, raw json.RawMessage, by dag.Key) (*opinion.Opinion, error) {
		t.Helper()
		body, err := json.Marshal(map[string]any{"subject": map[string]any{"type": "spec", "id": "30k-v0.13"},
			"author_kind": "member", "stance": "neutral", "summary": "s", "body": "b", "attest": raw})
		if err != nil {
			t.Fatal(err)
		}
		o, err := opinion.Decode(body)
		if err != nil {
			return nil, err
		}
		if err := opinion.CheckAuthor(o, opinion.Standing{Member: true}); err != nil {
			return nil, err
		}
		return o, opinion.CheckParts(o, by)
	}
	for _, c := range f.Decode {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			by := mustKey("ed25519:7UkoxijRwsbq6QM4kFmVYSlZJzpcY_k2NsFGFKyHN9E")
			if c.Signer == "SELF" {
				by = signer
			}
			_, err := decode(t, c.Attest, by)
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
		})
	}
	for _, c := range f.Affiliations {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			var recs []opinion.AttestRecord
			for _, r := range c.Records {
				o, err := decode(t, r.Attest, mustKey(r.Attester))
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, opinion.AttestRecord{Opinion: dag.MustParseID(r.Opinion), Attester: mustKey(r.Attester),
					TS: r.TS, Disclosed: r.Disclosed, Attest: *o.Attest})
			}
			got := opinion.Affiliations(signer, c.Orgs, recs, c.Today)
			var by []string
			for i, a := range got {
				if a.Organization != c.Orgs[i] {
					t.Fatalf("affiliation %d is %q, want %q", i, a.Organization, c.Orgs[i])
				}
				by = append(by, a.AttestedBy)
			}
			if !slices.Equal(by, c.AttestedBy) {
				t.Fatalf("attested_by %v, want %v", by, c.AttestedBy)
			}
		})
	}
}

func mustKey(s string) dag.Key {
	k, err := dag.ParseKey(s)
	if err != nil {
		panic(err)
	}
	return k
}
