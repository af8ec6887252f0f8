package opinion

// This file decodes affiliation attestations and derives what nodes show
// beside each affiliation an opinion lists (30k §8, D76). Attestations
// are never required, and nothing here judges which key truly speaks for
// an organization: the result only says whether some key, itself
// disclosing that organization, vouches for the signer.

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// Unattested is what nodes show for an affiliation no valid attestation
// vouches for.
const Unattested = "unattested"

// Attest is a decoded attest member (D76).
type Attest struct {
	Key          dag.Key
	Organization string
	Role         string
	Expires      string // YYYY-MM-DD
	Revoked      bool
}

type wireAttest struct {
	Key          *string `json:"key"`
	Organization *string `json:"organization"`
	Role         *string `json:"role"`
	Expires      *string `json:"expires"`
	Revoked      *bool   `json:"revoked"`
}

func attestInvalid(format string, args ...any) error {
	return codef(dag.CodeAttestationInvalid, "attest: "+format, args...)
}

// decodeAttest decodes an attest member; every malformed one is
// attestation_invalid (D76), not schema.
func decodeAttest(raw json.RawMessage) (*Attest, error) {
	var w wireAttest
	if err := dag.DecodeStrict(raw, &w); err != nil {
		return nil, attestInvalid("%s", dag.ErrorDetail(err))
	}
	if w.Key == nil || w.Organization == nil || w.Role == nil || w.Expires == nil || w.Revoked == nil {
		return nil, attestInvalid("key, organization, role, expires and revoked are required")
	}
	k, err := dag.ParseKey(*w.Key)
	if err != nil {
		return nil, attestInvalid("key: %v", err)
	}
	a := &Attest{Key: k, Organization: *w.Organization, Role: *w.Role, Expires: *w.Expires, Revoked: *w.Revoked}
	if a.Organization == "" || utf8.RuneCountInString(a.Organization) > MaxText || utf8.RuneCountInString(a.Role) > MaxText {
		return nil, attestInvalid("organization is 1 to %d characters, role at most %d", MaxText, MaxText)
	}
	if !isCalendarDate(a.Expires) {
		return nil, attestInvalid("expires %q is not YYYY-MM-DD", dag.Trunc(a.Expires))
	}
	return a, nil
}

// checkAttest judges an attestation against its signer: a key does not
// attest itself (witan's reading, docs/deviations.md).
func checkAttest(a *Attest, signer dag.Key) error {
	if a.Key == signer {
		return attestInvalid("a key cannot attest its own affiliation")
	}
	return nil
}

// AttestRecord is one accepted attestation as the record holds it.
type AttestRecord struct {
	Opinion  dag.ID
	Attester dag.Key // the attest opinion's signer
	// Disclosed are the affiliations the attest opinion's own disclosure
	// lists.
	Disclosed []string
	TS        int64 // the attest opinion's ts, Unix seconds
	Attest    Attest
}

// Affiliation is one affiliation of an opinion with what nodes show
// beside it: the attesting key, or "unattested".
type Affiliation struct {
	Organization string `json:"organization"`
	AttestedBy   string `json:"attested_by"`
}

// Affiliations derives, for each organization orgs lists (an opinion's
// disclosure.affiliations, in order), the key that attests signer for it,
// from recs, on date today (YYYY-MM-DD, the caller's record date). Per
// attesting key, only its latest attestation of (signer, organization)
// counts (the larger ts, then the larger opinion id): a revocation or a
// renewal replaces the one before. It counts when it is not revoked, does
// not expire before today, and its own disclosure lists the
// organization. Several attesting keys: the smallest is shown.
func Affiliations(signer dag.Key, orgs []string, recs []AttestRecord, today string) []Affiliation {
	out := make([]Affiliation, 0, len(orgs))
	for _, org := range orgs {
		latest := map[dag.Key]*AttestRecord{}
		for i := range recs {
			r := &recs[i]
			if r.Attest.Key != signer || r.Attest.Organization != org {
				continue
			}
			if l, ok := latest[r.Attester]; !ok || r.TS > l.TS || (r.TS == l.TS && r.Opinion.Compare(l.Opinion) > 0) {
				latest[r.Attester] = r
			}
		}
		var by []dag.Key
		for k, r := range latest {
			if !r.Attest.Revoked && r.Attest.Expires >= today && slices.Contains(r.Disclosed, org) {
				by = append(by, k)
			}
		}
		a := Affiliation{Organization: org, AttestedBy: Unattested}
		if len(by) > 0 {
			a.AttestedBy = slices.MinFunc(by, dag.Key.Compare).String()
		}
		out = append(out, a)
	}
	return out
}
