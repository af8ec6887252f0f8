package replica_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/view"
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
			d, err := view.DecodeDistricts([]byte(c.in))
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
		br, err := view.New(s.r).TallyBy(ctx, s.space, mr, by)
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
	if _, err := view.New(s.r).TallyBy(ctx, s.space, mr, "religion"); dag.CodeOf(err) != dag.CodeDistrictAttributeInvalid {
		t.Fatalf("by=religion: %v", err)
	}
	if _, err := view.New(s.r).TallyBy(ctx, s.space, dag.Sum([]byte("none")), "region"); !errors.Is(err, dag.ErrNotFound) {
		t.Fatalf("unknown MR: %v", err)
	}
	plain := newSession(t, ht.Options{Simulation: true})
	open2, mr2 := plain.b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: plain.change, TargetHead: plain.b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, plain.last)
	plain.ok(t, open2)
	if _, err := view.New(plain.r).TallyBy(ctx, plain.space, mr2, "region"); dag.CodeOf(err) != dag.CodeDistrictAttributeInvalid {
		t.Fatalf("a session without districts: %v", err)
	}
}

// TestTallyByPartitions (rapid): whatever the table and the ballots
// (equivocations included), the groups of a breakdown partition the live
// tally: their electorates, approvals, rejections, abstentions, voided
// members and ballots add up to the whole, and they come in the table's
// declared order with the unlisted members last.
func TestTallyByPartitions(t *testing.T) {
	ctx := context.Background()
	r := openReplica(t, nil)
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(3, 10).Draw(rt, "members")
		regions := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "c", "d"}), 1, 4, rapid.ID[string]).Draw(rt, "regions")
		members := map[string]any{}
		for i := 0; i < n; i++ {
			if k := rapid.IntRange(-1, len(regions)-1).Draw(rt, fmt.Sprintf("region%d", i)); k >= 0 {
				members[ht.Member(i).Key().String()] = map[string]string{"region": regions[k], "density": "urban"}
			}
		}
		table, err := dag.Marshal(map[string]any{"attributes": map[string][]string{"region": regions, "density": {"urban"}}, "members": members})
		if err != nil {
			rt.Fatal(err)
		}
		b := ht.New(ht.Options{Simulation: true, Districts: table})
		var last dag.ID
		ok := func(tx ht.Tx) {
			if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
				rt.Fatalf("%s: %v %+v", tx.Env.Type, err, rc)
			}
			last = tx.ID
		}
		ok(b.Create)
		ok(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), last))
		ok(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
		open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
			Members: ht.Members(0, n), Rule: ht.Majority(house.MinRootNotice)}, last)
		ok(open)
		choices := []string{"approve", "reject", "abstain"}
		for i := 0; i < n; i++ {
			for k := rapid.IntRange(0, 2).Draw(rt, fmt.Sprintf("ballots%d", i)); k > 0; k-- { // two is an equivocation
				ok(b.Ballot(ht.Member(i), mr, rapid.SampledFrom(choices).Draw(rt, "choice"), dag.ID{}, open.ID))
			}
		}
		br, err := view.New(r).TallyBy(ctx, b.Session, mr, "region")
		if err != nil {
			rt.Fatal(err)
		}
		var sum [6]uint64
		var values []string
		for _, g := range br.Groups {
			x := g.Tally
			for j, v := range []uint64{x.Electorate, x.Approve, x.Reject, x.Abstain, x.Void, x.Ballots} {
				sum[j] += v
			}
			values = append(values, g.Value)
		}
		w := br.Result.Tally
		if sum != [6]uint64{w.Electorate, w.Approve, w.Reject, w.Abstain, w.Void, w.Ballots} {
			rt.Fatalf("groups sum to %v, whole tally %+v", sum, w)
		}
		want := slices.Clone(regions)
		if len(members) < n {
			want = append(want, "")
		}
		if !slices.Equal(values, want) {
			rt.Fatalf("groups %q, want %q", values, want)
		}
	})
}
