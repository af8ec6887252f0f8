package statute

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
)

type snapMap map[dag.ID]*Tree

func (m snapMap) Snapshot(id dag.ID) (*Tree, error) {
	t, ok := m[id]
	if !ok {
		return nil, ErrNotFound
	}
	return t, nil
}

// lawFixture enacts merges (each an edit and an effective date) on the
// sample tree, in order.
type lawFixture struct {
	law   *Law
	snaps snapMap
	head  *Tree
	mrs   []dag.ID
}

func newLawFixture(t *testing.T) *lawFixture {
	seed := sample()
	return &lawFixture{law: NewLaw(seed, []string{"CA", "NY"}), snaps: snapMap{}, head: seed}
}

func (f *lawFixture) enact(t *testing.T, name string, eff string, e func(b *builder)) {
	t.Helper()
	after := edit(t, f.head, e)
	mr, change := testID("mr-"+name), testID("change-"+name)
	f.snaps[change] = after
	must(t, f.law.Add(Enactment{MR: mr, Change: change, Effective: MustDate(eff), Before: f.head, After: after}))
	f.head = after
	f.mrs = append(f.mrs, mr)
}

func (f *lawFixture) at(t *testing.T, date, jur string, opt ...OptIn) *InForce {
	t.Helper()
	in, err := f.law.At(MustDate(date), jur, opt, f.snaps)
	must(t, err)
	return in
}

// S17: a merge with a future effective date holds back a later merge.
func TestS17HeldBackMerge(t *testing.T) {
	f := newLawFixture(t)
	f.enact(t, "x", "2027-01-10", func(b *builder) { setText(t, b, "/us/t1/s1", "The period is 45 days.") })
	f.enact(t, "future", "2027-06-01", func(b *builder) { setText(t, b, "/us/t1/s2", "Fees of $9 apply.") })
	f.enact(t, "later", "2027-02-01", func(b *builder) { setText(t, b, "/us/t1/s3", "Reports are due weekly.") })

	if in := f.at(t, "2027-01-09", ""); in.Merges != 0 || in.Snapshot != sample().Hash() || len(in.HeldBack) != 3 {
		t.Fatalf("before everything: %+v", in)
	}
	in := f.at(t, "2027-03-01", "")
	if in.Merges != 1 || text(in.Tree, "/us/t1/s3") != "Reports are due yearly." || text(in.Tree, "/us/t1/s1") != "The period is 45 days." {
		t.Fatalf("the future merge must hold back the later one: %+v", in)
	}
	if !slices.Equal(in.HeldBack, f.mrs[1:]) || in.Head != testID("change-x") {
		t.Fatalf("held back %v head %s", in.HeldBack, in.Head)
	}
	in = f.at(t, "2027-06-01", "")
	if in.Merges != 3 || in.Snapshot != f.head.Hash() || text(in.Tree, "/us/t1/s3") != "Reports are due weekly." {
		t.Fatalf("on the future date everything is in force: %+v", in)
	}
}

// S19: a 90-day sunset drops the text from /law on day 91.
func TestS19NinetyDaySunset(t *testing.T) {
	f := newLawFixture(t)
	f.enact(t, "sunset", "2027-01-01", func(b *builder) {
		setText(t, b, "/us/t1/s3", "[[sunset:90]] Reports are due weekly.")
	})
	day := func(n int) string { return MustDate("2027-01-01").AddDays(n - 1).String() }
	if in := f.at(t, day(90), ""); text(in.Tree, "/us/t1/s3") != "[[sunset:90]] Reports are due weekly." {
		t.Fatalf("day 90: %q", text(in.Tree, "/us/t1/s3"))
	}
	in := f.at(t, day(91), "")
	if !in.Tree.Has("/us/t1/s3") || text(in.Tree, "/us/t1/s3") != "" || in.Snapshot == in.HeadSnapshot {
		t.Fatalf("day 91: %q", text(in.Tree, "/us/t1/s3"))
	}
	// The node stays in history: the head snapshot still has the text.
	if text(f.head, "/us/t1/s3") == "" {
		t.Fatal("sunset changed the branch head")
	}
}

func TestPerNodeEffectiveDate(t *testing.T) {
	f := newLawFixture(t)
	f.enact(t, "delayed", "2027-01-01", func(b *builder) {
		setText(t, b, "/us/t1/s2", "[[effective:2027-05-01]] [[sunset:10]] Fees of $8 apply.")
		must(t, b.insert("/us/t1", "/us/t1/s3", &NodeSpec{NID: "/us/t1/s4", Kind: "section", Text: "[[effective:2027-04-01]] New duty."}))
	})
	in := f.at(t, "2027-03-01", "")
	if text(in.Tree, "/us/t1/s2") != "Fees of $5 apply." || in.Tree.Has("/us/t1/s4") {
		t.Fatalf("before the node dates: %q, s4 %v", text(in.Tree, "/us/t1/s2"), in.Tree.Has("/us/t1/s4"))
	}
	in = f.at(t, "2027-04-15", "")
	if text(in.Tree, "/us/t1/s2") != "Fees of $5 apply." || !in.Tree.Has("/us/t1/s4") {
		t.Fatal("s4 is in force from 2027-04-01")
	}
	in = f.at(t, "2027-05-01", "")
	if text(in.Tree, "/us/t1/s2") != "[[effective:2027-05-01]] [[sunset:10]] Fees of $8 apply." {
		t.Fatalf("on its date: %q", text(in.Tree, "/us/t1/s2"))
	}
	// The sunset counts from the node's own effective date.
	if in := f.at(t, "2027-05-10", ""); text(in.Tree, "/us/t1/s2") == "" {
		t.Fatal("sunset counted from the MR's date")
	}
	if in := f.at(t, "2027-05-11", ""); text(in.Tree, "/us/t1/s2") != "" {
		t.Fatal("sunset not applied 10 days after the node's date")
	}
}

func TestJurisdictions(t *testing.T) {
	f := newLawFixture(t)
	f.enact(t, "ca", "2027-01-01", func(b *builder) {
		setText(t, b, "/us/t1/s3", "[[applies:CA]] Reports are due weekly in California.")
		must(t, b.insert("/us/t1", "/us/t1/s3", &NodeSpec{NID: "/us/t1/s4", Kind: "section", Text: "[[opt_in:medicaid-x]] Expanded coverage."}))
	})
	if _, err := f.law.At(MustDate("2027-02-01"), "TX", nil, f.snaps); dag.CodeOf(err) != dag.CodeJurisdictionUnknown {
		t.Fatalf("undeclared code: %v", err)
	}
	ca := f.at(t, "2027-02-01", "CA")
	ny := f.at(t, "2027-02-01", "NY")
	if text(ca.Tree, "/us/t1/s3") != "[[applies:CA]] Reports are due weekly in California." || text(ny.Tree, "/us/t1/s3") != "Reports are due yearly." {
		t.Fatalf("applies: CA %q NY %q", text(ca.Tree, "/us/t1/s3"), text(ny.Tree, "/us/t1/s3"))
	}
	if ca.Tree.Has("/us/t1/s4") || ny.Tree.Has("/us/t1/s4") {
		t.Fatal("opt_in node shown without an opt-in")
	}
	opt := []OptIn{{Jurisdiction: "NY", Program: "medicaid-x", In: true, Effective: MustDate("2027-03-01")}}
	if f.at(t, "2027-02-28", "NY", opt...).Tree.Has("/us/t1/s4") {
		t.Fatal("opt-in before its effective date")
	}
	if !f.at(t, "2027-03-01", "NY", opt...).Tree.Has("/us/t1/s4") || f.at(t, "2027-03-01", "CA", opt...).Tree.Has("/us/t1/s4") {
		t.Fatal("opt-in applies to NY only, from its date")
	}
	opt = append(opt, OptIn{Jurisdiction: "NY", Program: "medicaid-x", In: false, Effective: MustDate("2027-04-01")})
	if f.at(t, "2027-04-02", "NY", opt...).Tree.Has("/us/t1/s4") {
		t.Fatal("opt-out ignored")
	}
	// Without a jurisdiction the whole text is served.
	if all := f.at(t, "2027-02-01", ""); !all.Tree.Has("/us/t1/s4") || all.Snapshot != all.HeadSnapshot {
		t.Fatal("whole text altered")
	}
}

func TestCheckEffective(t *testing.T) {
	open := MustDate("2027-01-10")
	if err := CheckEffective(Effective{Dated: true, Date: MustDate("2027-01-09")}, open); dag.CodeOf(err) != dag.CodeEffectiveInvalid {
		t.Fatalf("got %v", err)
	}
	for _, e := range []Effective{{}, {Dated: true, Date: open}, {Dated: true, Date: open + 1}} {
		if err := CheckEffective(e, open); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLawAddChecksContinuity(t *testing.T) {
	f := newLawFixture(t)
	other := edit(t, f.head, func(b *builder) { setText(t, b, "/us/t1/s1", "x") })
	if err := f.law.Add(Enactment{MR: testID("m"), Change: testID("c"), Effective: MustDate("2027-01-01"), Before: other, After: other}); err == nil {
		t.Fatal("an enactment not starting from the root head was accepted")
	}
}

func TestEffectiveJSON(t *testing.T) {
	for in, want := range map[string]Effective{
		`{"type":"on_merge"}`:                 {},
		`{"type":"date","date":"2027-01-02"}`: {Dated: true, Date: MustDate("2027-01-02")},
	} {
		var e Effective
		must(t, e.UnmarshalJSON([]byte(in)))
		if e != want {
			t.Errorf("%s -> %+v", in, e)
		}
		b, _ := e.MarshalJSON()
		var e2 Effective
		must(t, e2.UnmarshalJSON(b))
		if e2 != e || !dag.IsCanonical(b) {
			t.Errorf("round trip %s", b)
		}
	}
	for _, in := range []string{`{}`, `{"type":"date"}`, `{"type":"on_merge","date":"2027-01-01"}`, `{"type":"date","date":"2027-13-01"}`, `{"type":"later"}`, `"on_merge"`, `{"type":"date","date":"2027-01-01","x":1}`} {
		var e Effective
		if err := e.UnmarshalJSON([]byte(in)); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("%s: %v", in, err)
		}
	}
}
