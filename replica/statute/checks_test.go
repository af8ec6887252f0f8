package statute

import (
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func uslm(t testing.TB) *Profile {
	p, err := LoadProfile("uslm-1")
	must(t, err)
	return p
}

// checkOf returns the named check of c.
func checkOf(t *testing.T, c *Checks, name string) CheckResult {
	t.Helper()
	for _, r := range c.Checks {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no check %s", name)
	return CheckResult{}
}

func TestChecks(t *testing.T) {
	base := sample()
	published := testID("annex-published")
	env := Env{MR: testID("mr"), Profile: uslm(t), Jurisdictions: []string{"CA", "NY"},
		Published: func(id dag.ID) bool { return id == published }}
	tests := []struct {
		name   string
		edit   func(b *builder)
		env    func(e *Env)
		check  string
		status Status
		nids   []string
		code   dag.Code
	}{
		{"clean MR passes", func(b *builder) { setText(t, b, "/us/t1/s3", "Reports are due weekly.") }, nil, CheckStructure, StatusPass, nil, ""},
		{"two sunsets block", func(b *builder) { setText(t, b, "/us/t1/s3", "x [[sunset:90]] [[sunset:30]]") }, nil, CheckStructure, StatusBlock, []string{"/us/t1/s3"}, ""},
		// §4's "at most one of each marker" is read as one value per node for
		// the markers that set something about the node (sunset, effective,
		// ...); a node citing two provisions is ordinary drafting
		// (docs/deviations.md).
		{"two refs pass", func(b *builder) { setText(t, b, "/us/t1/s3", "[[ref:/us/t1/s1]] [[ref:/us/t1/s2]]") }, nil, CheckStructure, StatusPass, nil, ""},
		{"two defs block (at most one of each marker)", func(b *builder) { setText(t, b, "/us/t1/s3", "[[def:a]] [[def:b]]") }, nil, CheckStructure, StatusBlock, []string{"/us/t1/s3"}, ""},
		{"malformed marker blocks", func(b *builder) { setText(t, b, "/us/t1/s3", "[[effective:2027-02-30]]") }, nil, CheckStructure, StatusBlock, []string{"/us/t1/s3"}, ""},
		{"undeclared jurisdiction blocks", func(b *builder) { setText(t, b, "/us/t1/s3", "[[applies:CA,TX]]") }, nil, CheckStructure, StatusBlock, []string{"/us/t1/s3"}, dag.CodeJurisdictionUnknown},
		{"S19 unpublished annex blocks", func(b *builder) {
			setText(t, b, "/us/t1/s3", "As set out in the classified annex "+testID("annex-secret").String()+".")
		}, nil, CheckStructure, StatusBlock, []string{"/us/t1/s3"}, dag.CodeUnpublishedReference},
		{"published annex passes", func(b *builder) { setText(t, b, "/us/t1/s3", "See "+published.String()+".") }, nil, CheckStructure, StatusPass, nil, ""},
		{"broken reference elsewhere is caught", func(b *builder) { must(t, b.delete("/us/t1/s2")) }, nil, CheckReferences, StatusWarn, []string{"/us/t1/s1/b", "/us/t1/s2"}, ""},
		{"S13 duplicate definition warns", func(b *builder) {
			must(t, b.insert("/us/t1/s1", "/us/t1/s1/b", &NodeSpec{NID: "/us/t1/s1/c", Kind: "subsection", Text: "[[def:agency]] An agency is any office."}))
		}, nil, CheckDefinitions, StatusWarn, []string{"/us/t1/s1/a", "/us/t1/s1/c"}, ""},
		{"same text, same term: no warning", func(b *builder) {
			must(t, b.insert("/us/t1/s1", "/us/t1/s1/b", &NodeSpec{NID: "/us/t1/s1/c", Kind: "subsection", Text: "[[def:agency]] An agency is a body."}))
		}, nil, CheckDefinitions, StatusPass, nil, ""},
		{"disjoint scopes: no warning", func(b *builder) {
			must(t, b.insert("/us/t2/s1", "", &NodeSpec{NID: "/us/t2/s1/a", Kind: "subsection", Text: "[[def:agency]] An agency is any office."}))
		}, nil, CheckDefinitions, StatusPass, nil, ""},
		{"nested scope warns", func(b *builder) {
			must(t, b.insert("/us/t1", "", &NodeSpec{NID: "/us/t1/s0", Kind: "section", Text: "[[def:agency]] An agency is any office."}))
		}, nil, CheckDefinitions, StatusWarn, []string{"/us/t1/s0", "/us/t1/s1/a"}, ""},
		{"S13 reference cycle warns, does not block", func(b *builder) { setText(t, b, "/us/t1/s2", "Fees, see [[ref:/us/t1/s1/b]].") }, nil, CheckReferenceCycles, StatusWarn, []string{"/us/t1/s1/b", "/us/t1/s2"}, ""},
		{"self reference is a cycle", func(b *builder) { setText(t, b, "/us/t1/s3", "[[ref:/us/t1/s3]]") }, nil, CheckReferenceCycles, StatusWarn, []string{"/us/t1/s3"}, ""},
		{"fiscal MR: unmarked dollars warn", func(b *builder) { setText(t, b, "/us/t1/s3", "A fee of $40 applies.") }, func(e *Env) { e.Fiscal = true }, CheckApprop, StatusWarn, []string{"/us/t1/s3"}, ""},
		{"fiscal MR: marked dollars pass", func(b *builder) { setText(t, b, "/us/t1/s3", "[[approp:fees:40:2027]] A fee of $40.") }, func(e *Env) { e.Fiscal = true }, CheckApprop, StatusPass, nil, ""},
		{"non-fiscal MR mentioning funds hints", func(b *builder) { setText(t, b, "/us/t1/s3", "No Funds may be used.") }, nil, CheckFiscalHint, StatusWarn, []string{"/us/t1/s3"}, ""},
		{"non-fiscal MR mentioning dollars hints", func(b *builder) { setText(t, b, "/us/t1/s3", "Costs $3.") }, nil, CheckFiscalHint, StatusWarn, []string{"/us/t1/s3"}, ""},
		{"refunds is not funds", func(b *builder) { setText(t, b, "/us/t1/s3", "Refunds are paid.") }, nil, CheckFiscalHint, StatusPass, nil, ""},
		{"untouched dollars do not hint", func(b *builder) { setText(t, b, "/us/t1/s3", "Reports are due monthly.") }, nil, CheckFiscalHint, StatusPass, nil, ""},
		{"effective before feasible (marker)", func(b *builder) { setText(t, b, "/us/t1/s3", "[[effective:2027-01-01]] Reports.") }, func(e *Env) {
			e.Feasibility = []Feasibility{{Opinion: testID("feas"), Nodes: []string{"/us/t1/s3"}, Earliest: MustDate("2027-06-01")}}
		}, CheckEffectiveBeforeFeasible, StatusWarn, []string{"/us/t1/s3"}, ""},
		{"effective before feasible (MR date)", func(b *builder) { setText(t, b, "/us/t1/s3", "Reports.") }, func(e *Env) {
			e.Effective = Effective{Dated: true, Date: MustDate("2027-01-01")}
			e.Feasibility = []Feasibility{{Opinion: testID("feas"), Nodes: []string{"/us/t1/s2"}, Earliest: MustDate("2027-06-01")}}
		}, CheckEffectiveBeforeFeasible, StatusWarn, []string{"/us/t1/s2"}, ""},
		{"on_merge is not checked", func(b *builder) { setText(t, b, "/us/t1/s3", "Reports.") }, func(e *Env) {
			e.Feasibility = []Feasibility{{Opinion: testID("feas"), Nodes: []string{"/us/t1/s3"}, Earliest: MustDate("2027-06-01")}}
		}, CheckEffectiveBeforeFeasible, StatusPass, nil, ""},
		{"feasible in time passes", func(b *builder) { setText(t, b, "/us/t1/s3", "[[effective:2027-07-01]] Reports.") }, func(e *Env) {
			e.Feasibility = []Feasibility{{Opinion: testID("feas"), Nodes: []string{"/us/t1/s3"}, Earliest: MustDate("2027-06-01")}}
		}, CheckEffectiveBeforeFeasible, StatusPass, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &builder{cur: base.Clone()}
			tc.edit(b)
			e := env
			if tc.env != nil {
				tc.env(&e)
			}
			c := RunChecks(NewReview(base, b.ops), e)
			if len(c.Checks) != len(CheckNames()) || c.Authoritative {
				t.Fatalf("checks %+v", c)
			}
			r := checkOf(t, c, tc.check)
			if r.Status != tc.status {
				t.Fatalf("%s = %s, want %s: %+v", tc.check, r.Status, tc.status, r.Messages)
			}
			if c.Blocked != (checkOf(t, c, CheckStructure).Status == StatusBlock) {
				t.Fatal("blocked disagrees with structure")
			}
			for _, o := range c.Checks {
				if o.Name != CheckStructure && o.Status == StatusBlock {
					t.Errorf("%s blocks", o.Name)
				}
			}
			if tc.nids != nil {
				if len(r.Messages) == 0 || !slices.Equal(r.Messages[0].NIDs, tc.nids) {
					t.Fatalf("nids %+v, want %v", r.Messages, tc.nids)
				}
				if r.Messages[0].Code != tc.code {
					t.Fatalf("code %q, want %q", r.Messages[0].Code, tc.code)
				}
			}
		})
	}
}

func TestChecksWhenResultDoesNotVerify(t *testing.T) {
	base := sample()
	c := RunChecks(NewReview(base, []Op{{Op: OpDelete, NID: "/us/t1/s2", Pre: testID("stale")}}), Env{Profile: uslm(t)})
	if !c.Blocked || c.Checks[0].Status != StatusBlock || !strings.Contains(c.Checks[0].Messages[0].Detail, "does not verify") {
		t.Fatalf("%+v", c.Checks[0])
	}
	for _, r := range c.Checks[1:] {
		if r.Status != StatusSkipped {
			t.Errorf("%s = %s", r.Name, r.Status)
		}
	}
	if _, err := Facts(NewReview(base, []Op{{Op: OpDelete, NID: "/zz", Pre: testID("x")}}), Env{}, FactInputs{}); err == nil {
		t.Fatal("fact sheet of a result that does not verify")
	}
}

func TestUnified(t *testing.T) {
	base := sample()
	after := edit(t, base, func(b *builder) {
		setText(t, b, "/us/t1/s1", "The period is 45 days.")
		must(t, b.delete("/us/t1/s3"))
	})
	got := Compare(base, after).Unified()
	want := "@@ /us/t1/s1 (modified) @@\n [section]\n-The period is 30 days.\n+The period is 45 days.\n" +
		"@@ /us/t1/s3 (removed) @@\n-[section]\n-Reports are due yearly.\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDiffView(t *testing.T) {
	base := sample()
	after := edit(t, base, func(b *builder) { must(t, b.delete("/us/t1/s3")) })
	v := Compare(base, after).View("sha256:x")
	b, err := dag.Marshal(v)
	must(t, err)
	if !strings.Contains(string(b), `"authoritative":false`) || !strings.Contains(string(b), `"removed":["/us/t1/s3"]`) || !strings.Contains(v.Unified, "-Reports are due yearly.") {
		t.Fatalf("%s", b)
	}
}

func TestStructureNeedsAProfile(t *testing.T) {
	ms := Structure(sample(), Env{})
	if len(ms) != 1 || ms[0].Code != dag.CodeProfileUnknown {
		t.Fatalf("%+v", ms)
	}
}
