package statute

import (
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func TestParseMarkers(t *testing.T) {
	h := "sha256:" + strings.Repeat("0f", 32)
	m := ParseMarkers("Annex "+h, "See [[ref:/us/t1/s2]] and [[def:agency]]; [[sunset:90]] [[effective:2027-01-01]] "+
		"[[approp:Treasury:Salaries:1500000:2027]] [[avail:cond-1]] [[applies:CA,NY]] [[opt_in:medicaid-x]] [[unknown:x]] [[ref:bad nid]]")
	if !slices.Equal(m.Refs, []string{"/us/t1/s2"}) || !slices.Equal(m.Defs, []string{"agency"}) {
		t.Errorf("refs %v defs %v", m.Refs, m.Defs)
	}
	if d, ok := m.Sunset(); !ok || d != 90 {
		t.Errorf("sunset %v", m.Sunsets)
	}
	if d, ok := m.EffectiveDate(); !ok || d != MustDate("2027-01-01") {
		t.Errorf("effective %v", m.Effective)
	}
	if len(m.Approps) != 1 || m.Approps[0] != (Approp{Account: "Treasury:Salaries", Dollars: "1500000", FY: 2027}) {
		t.Errorf("approp %+v", m.Approps)
	}
	if !slices.Equal(m.Avails, []string{"cond-1"}) || len(m.Applies) != 1 || !slices.Equal(m.Applies[0], []string{"CA", "NY"}) || !slices.Equal(m.OptIns, []string{"medicaid-x"}) {
		t.Errorf("avail %v applies %v opt_in %v", m.Avails, m.Applies, m.OptIns)
	}
	if len(m.Hashes) != 1 || m.Hashes[0] != dag.MustParseID(h) {
		t.Errorf("hashes %v", m.Hashes)
	}
	if len(m.Malformed) != 1 || !strings.HasPrefix(m.Malformed[0], "ref:") {
		t.Errorf("malformed %v", m.Malformed)
	}
	for _, bad := range []string{"[[sunset:0]]", "[[sunset:x]]", "[[sunset:090]]", "[[effective:2027-02-30]]", "[[approp:a:1.5:2027]]",
		"[[approp:a:100:27]]", "[[approp:100:2027]]", "[[applies:CA,,NY]]", "[[applies:CA,CA]]", "[[def:]]", "[[avail:]]", "[[opt_in:]]"} {
		if m := ParseMarkers("", bad); len(m.Malformed) != 1 {
			t.Errorf("%s: malformed %v", bad, m.Malformed)
		}
	}
	if m := ParseMarkers("", "plain [[text]] and [[x:y]] and [[[[ref:/a]]"); len(m.Malformed) != 0 || !slices.Equal(m.Refs, []string{"/a"}) {
		t.Errorf("plain: %+v", m)
	}
}

func TestStripMarkers(t *testing.T) {
	got := StripMarkers("A [[def:x]]term[[sunset:9]] stays [[not a marker]] [[ref:/a]].")
	if got != "A term stays [[not a marker]] ." {
		t.Fatalf("%q", got)
	}
}

func TestNumbers(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"The period is 30 days.", []string{"30"}},
		{"$1,000,000 and 2.5 percent", []string{"1,000,000", "2.5"}},
		{"in 1,000, then 3.", []string{"1,000,", "3"}}, // maximal match keeps the trailing comma
		{"version 1.2.3", []string{"1.2", "3"}},
		{"no digits", nil},
		{"section 5(a)(2)", []string{"5", "2"}},
		{"٣ Arabic-Indic digits are not [0-9]", []string{"0", "9"}},
	}
	for _, tc := range tests {
		if got := Numbers(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Numbers(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFiscalWords(t *testing.T) {
	for s, want := range map[string]string{
		"Sums are Appropriated.": "appropriat", "no FUNDS": "funds", "to obligate": "obligat",
		"refunds": "", "funding": "", "unobligated": "", "(funds)": "funds", "éfunds": "",
	} {
		if got := fiscalWord(s); got != want {
			t.Errorf("fiscalWord(%q) = %q, want %q", s, got, want)
		}
	}
	if !hasDollar("costs $5") || hasDollar("$ 5") || hasDollar("5$") {
		t.Error("hasDollar")
	}
}
