package replica_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// districtTable returns a canonical district table: members 0-4
// north/urban, 5-7 south/rural, 8 north/rural; member 9 is not listed.
func districtTable(t testing.TB) []byte {
	t.Helper()
	members := map[string]any{}
	for i := 0; i < 9; i++ {
		region, density := "north", "urban"
		if i >= 5 {
			region, density = "south", "rural"
		}
		if i == 8 {
			region = "north"
		}
		members[ht.Member(i).Key().String()] = map[string]string{"region": region, "density": density}
	}
	b, err := dag.Marshal(map[string]any{
		"attributes": map[string][]string{"region": {"north", "south"}, "density": {"urban", "rural"}},
		"members":    members,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeDistricts(t *testing.T) {
	k0 := ht.Member(0).Key().String()
	attrs := `"attributes":{"density":["rural","urban"],"region":["north","south"]}`
	cases := []struct {
		name string
		in   string
		code dag.Code // "" for success
	}{
		{"valid", `{` + attrs + `,"members":{"` + k0 + `":{"density":"urban","region":"north"}}}`, ""},
		{"no members", `{` + attrs + `,"members":{}}`, ""},
		{"not canonical", `{"members":{},` + attrs + `}`, dag.CodeSchema},
		{"not json", `{"attributes":`, dag.CodeSchema},
		{"members missing", `{` + attrs + `}`, dag.CodeSchema},
		{"extra member", `{` + attrs + `,"members":{},"x":1}`, dag.CodeSchema},
		{"religion declared", `{"attributes":{"density":["rural"],"region":["north"],"religion":["a"]},"members":{}}`, dag.CodeDistrictAttributeInvalid},
		{"party declared alone", `{"attributes":{"party":["a"]},"members":{}}`, dag.CodeDistrictAttributeInvalid},
		{"density missing", `{"attributes":{"region":["north"]},"members":{}}`, dag.CodeDistrictAttributeInvalid},
		{"no values", `{"attributes":{"density":[],"region":["north"]},"members":{}}`, dag.CodeDistrictAttributeInvalid},
		{"repeated value", `{"attributes":{"density":["a","a"],"region":["north"]},"members":{}}`, dag.CodeDistrictAttributeInvalid},
		{"empty value", `{"attributes":{"density":[""],"region":["north"]},"members":{}}`, dag.CodeDistrictAttributeInvalid},
		{"member with religion", `{` + attrs + `,"members":{"` + k0 + `":{"density":"urban","religion":"x"}}}`, dag.CodeDistrictAttributeInvalid},
		{"member with three", `{` + attrs + `,"members":{"` + k0 + `":{"density":"urban","income":"x","region":"north"}}}`, dag.CodeDistrictAttributeInvalid},
		{"member without density", `{` + attrs + `,"members":{"` + k0 + `":{"region":"north"}}}`, dag.CodeDistrictAttributeInvalid},
		{"undeclared value", `{` + attrs + `,"members":{"` + k0 + `":{"density":"urban","region":"east"}}}`, dag.CodeDistrictAttributeInvalid},
		{"bad key", `{` + attrs + `,"members":{"ed25519:AA":{"density":"urban","region":"north"}}}`, dag.CodeSchema},
		{"value not a string", `{` + attrs + `,"members":{"` + k0 + `":{"density":1,"region":"north"}}}`, dag.CodeSchema},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := replica.DecodeDistricts([]byte(c.in))
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(d.Values["region"]) != 2 || d.Values["density"][0] != "rural" {
					t.Fatalf("values %v", d.Values)
				}
				return
			}
			if dag.CodeOf(err) != c.code {
				t.Fatalf("error %v, want code %s", err, c.code)
			}
		})
	}
}

// TestTallyBy: the live tally broken down by region and by density; the
// groups partition the electorate and the ballots.
func TestTallyBy(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, ht.Options{Simulation: true, Districts: districtTable(t)})
	open, mr := s.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: s.change, TargetHead: s.b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.ok(t, open)
	s.vote(t, mr, 0, 6, "approve")  // north: 0-4, south: 5
	s.vote(t, mr, 6, 7, "reject")   // south
	s.vote(t, mr, 9, 10, "abstain") // unlisted
	got := map[string]string{}
	for _, by := range []string{"region", "density"} {
		br, err := s.r.TallyBy(ctx, s.space, mr, by)
		if err != nil {
			t.Fatal(err)
		}
		if br.By != by || br.Finality != replica.Provisional || br.Result.Tally.Approve != 6 {
			t.Fatalf("by %s: %+v", by, br)
		}
		var n, a, r, ab uint64
		var parts []string
		for _, g := range br.Groups {
			n, a, r, ab = n+g.Tally.Electorate, a+g.Tally.Approve, r+g.Tally.Reject, ab+g.Tally.Abstain
			parts = append(parts, fmt.Sprintf("%s:%d/%d/%d/%d:%d/%d", g.Value, g.Tally.Electorate, g.Tally.Approve, g.Tally.Reject, g.Tally.Abstain,
				g.Tally.ApproveOfCast.Num, g.Tally.ApproveOfCast.Den))
		}
		if n != 10 || a != 6 || r != 1 || ab != 1 {
			t.Fatalf("by %s: groups do not partition the tally: %v", by, parts)
		}
		got[by] = strings.Join(parts, " ")
	}
	want := map[string]string{
		// value:electorate/approve/reject/abstain:approve_of_cast
		"region":  "north:6/5/0/0:5/5 south:3/1/1/0:1/2 :1/0/0/1:0/0",
		"density": "urban:5/5/0/0:5/5 rural:4/1/1/0:1/2 :1/0/0/1:0/0",
	}
	for by, w := range want {
		if got[by] != w {
			t.Fatalf("by %s: %s, want %s", by, got[by], w)
		}
	}
	if _, err := s.r.TallyBy(ctx, s.space, mr, "religion"); dag.CodeOf(err) != dag.CodeDistrictAttributeInvalid {
		t.Fatalf("by=religion: %v", err)
	}
	if _, err := s.r.TallyBy(ctx, s.space, dag.Sum([]byte("none")), "region"); !errors.Is(err, dag.ErrNotFound) {
		t.Fatalf("unknown MR: %v", err)
	}
	plain := newSession(t, ht.Options{Simulation: true})
	open2, mr2 := plain.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: plain.change, TargetHead: plain.b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, plain.last)
	plain.ok(t, open2)
	if _, err := plain.r.TallyBy(ctx, plain.space, mr2, "region"); dag.CodeOf(err) != dag.CodeDistrictAttributeInvalid {
		t.Fatalf("a session without districts: %v", err)
	}
}
