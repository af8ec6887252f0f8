package sessions

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func grammar(t testing.TB, tags ...string) *Grammar {
	t.Helper()
	g, err := NewGrammar(tags, []string{"goldfish"}, []string{ExtSideConversations})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Table 3.4 as it stands in the spec: every rule, in order, with its
// intent. Our English locale must carry exactly these, in this order (plus
// keep-my-words-for, decision D9).
var table34 = []struct {
	name  string
	kind  Kind
	scope Scope
	level Level
	all   bool
	span  time.Duration
}{
	{"objection", Object, Room, Unset, false, 0},
	{"erase-me", Forget, Self, Unset, true, 0},
	{"forget-what-i-said-span", Forget, Self, Unset, false, 0},
	{"forget-what-i-said", Forget, Self, Unset, false, 120 * time.Second},
	{"forget-span", Forget, Room, Unset, false, 0},
	{"leave-me-out", Lower, Self, 0, false, 0},
	{"off-the-record", Lower, Room, 0, false, 0},
	{"my-words-outcomes", Lower, Self, 1, false, 0},
	{"outcomes-only", Lower, Room, 1, false, 0},
	{"my-words-gist", Lower, Self, 2, false, 0},
	{"gist", Lower, Room, 2, false, 0},
	{"dont-quote-me", Lower, Self, 3, false, 0},
	{"no-verbatim", Lower, Room, 3, false, 0},
	{"keep-for", Shorten, Room, Unset, false, 0},
	{"quote-me", Raise, Self, 4, false, 0},
	{"back-on-record", Resume, Room, Unset, false, 0},
	{"word-for-word", Raise, Room, 4, false, 0},
	{"remember-me", Claim, Self, Unset, false, 0},
}

func TestEnglishIsTable34(t *testing.T) {
	rules, _ := LocaleRules("en")
	var names []string
	for _, r := range rules {
		if r.Name != "keep-my-words-for" {
			names = append(names, r.Name)
		}
	}
	var want []string
	for _, r := range table34 {
		want = append(want, r.name)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("English rules\n got %v\nwant %v", names, want)
	}
	for _, w := range table34 {
		for _, r := range rules {
			if r.Name == w.name && (r.Kind != w.kind || r.Scope != w.scope || r.Level != w.level || r.All != w.all || r.Span != w.span) {
				t.Errorf("%s: %v %v %d all=%v span=%v, want %v %v %d all=%v span=%v", r.Name, r.Kind, r.Scope, r.Level, r.All, r.Span, w.kind, w.scope, w.level, w.all, w.span)
			}
		}
	}
}

// Spanish covers the same rules, in the same order, with the same intents.
func TestSpanishMatchesEnglish(t *testing.T) {
	en, _ := LocaleRules("en")
	es, _ := LocaleRules("es")
	if len(en) != len(es) {
		t.Fatalf("en has %d rules, es %d", len(en), len(es))
	}
	for i := range en {
		a, b := en[i], es[i]
		if a.Name != b.Name || a.Kind != b.Kind || a.Scope != b.Scope || a.Level != b.Level || a.All != b.All || a.Span != b.Span || a.Extension != b.Extension {
			t.Errorf("rule %d: en %+v es %+v", i, a.Name, b.Name)
		}
		if len(b.Examples) < len(a.Examples)-1 || len(b.Examples) < 1 {
			t.Errorf("%s: es has %d examples, en %d", a.Name, len(b.Examples), len(a.Examples))
		}
	}
}

// Every example of every rule parses to that rule, in its own locale alone
// and under the profile's order (en, then es), with its span.
func TestRuleExamples(t *testing.T) {
	all := []string{"en", "es"}
	gAll, err := NewGrammar(all, []string{"goldfish"}, []string{ExtSideConversations, ExtClaiming})
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range all {
		gOne, err := NewGrammar([]string{tag}, []string{"goldfish"}, []string{ExtClaiming})
		if err != nil {
			t.Fatal(err)
		}
		rules, _ := LocaleRules(tag)
		for _, r := range rules {
			if len(r.Examples) == 0 {
				t.Errorf("%s/%s has no example", tag, r.Name)
			}
			for _, ex := range r.Examples {
				for gi, g := range []*Grammar{gOne, gAll} {
					in, ok := g.Parse(ex.Text)
					if !ok || in.Rule != r.Name || in.Locale != tag {
						t.Errorf("%s/%s (grammar %d): %q parsed as %s/%s ok=%v", tag, r.Name, gi, ex.Text, in.Locale, in.Rule, ok)
						continue
					}
					if in.Kind != r.Kind || in.Scope != r.Scope || in.Level != r.Level || in.All != r.All || in.Source != FromSpeech {
						t.Errorf("%q: intent %v", ex.Text, in)
					}
					if ex.Span != 0 && in.Span != ex.Span {
						t.Errorf("%q: span %v, want %v", ex.Text, in.Span, ex.Span)
					}
					if r.Span == 0 && strings.Contains(strings.Join(r.Patterns, ""), "{dur}") && in.Span == 0 {
						t.Errorf("%q: rule reads a span but gave none", ex.Text)
					}
				}
			}
		}
	}
}

// The claim rule belongs to an extension that goldfish-v01 leaves off.
func TestExtensionRulesSkipped(t *testing.T) {
	g := grammar(t, "en", "es")
	for _, text := range []string{"Remember me.", "Recuérdame"} {
		if in, ok := g.Parse(text); ok {
			t.Errorf("%q parsed as %v with claiming off", text, in)
		}
	}
}

func TestParseTable(t *testing.T) {
	g := grammar(t, "en", "es")
	tests := []struct {
		text      string
		rule      string // "" for no intent
		addressed bool
		span      time.Duration
	}{
		{"", "", false, 0},
		{"The weather is nice.", "", false, 0},
		{"no", "objection", false, 0},
		{"No, I think we should go on.", "", false, 0}, // not the whole utterance
		{"Goldfish, stop!", "objection", true, 0},
		{"Stop recording.", "off-the-record", false, 0},
		{"goldfish word for word", "word-for-word", true, 0},
		{"Word for word.", "word-for-word", false, 0}, // parsed, but not addressed
		{"goldfishes, word for word", "word-for-word", false, 0},
		{"Goldfish: not word for word", "no-verbatim", true, 0},
		// Inv 3.3: a sentence that both lowers and raises is a lowering.
		{"Back on the record, but off the record for me.", "off-the-record", false, 0},
		{"You can quote me, but leave me out of the budget.", "leave-me-out", false, 0},
		{"Goldfish, word for word, but no names.", "gist", true, 0},
		{"We're back on. Keep this for two days.", "keep-for", false, 2 * Day},
		{"Forget what I said in the last 3 minutes", "forget-what-i-said-span", false, 3 * time.Minute},
		{"Delete the last 0 minutes", "forget-span", false, time.Minute},
		{"Delete the last 999999 years", "forget-span", false, maxSpan},
		{"DON'T QUOTE ME", "dont-quote-me", false, 0},
		{"dont quote me", "dont-quote-me", false, 0},
		{"Don’t record me", "leave-me-out", false, 0},
		{"Entre nosotros: goldfish, palabra por palabra", "off-the-record", true, 0},
		{"BÓRRAME", "erase-me", false, 0},
	}
	for _, tt := range tests {
		in, ok := g.Parse(tt.text)
		if ok != (tt.rule != "") || in.Rule != tt.rule {
			t.Errorf("%q: rule %q ok=%v, want %q", tt.text, in.Rule, ok, tt.rule)
			continue
		}
		if ok && in.Addressed != tt.addressed {
			t.Errorf("%q: addressed=%v, want %v", tt.text, in.Addressed, tt.addressed)
		}
		if tt.span != 0 && in.Span != tt.span {
			t.Errorf("%q: span %v, want %v", tt.text, in.Span, tt.span)
		}
	}
}

func TestNormalise(t *testing.T) {
	en, es := locales["en"], locales["es"]
	tests := []struct {
		l    *Locale
		in   string
		want string
	}{
		{en, "", " "},
		{en, "  Hello,   World!! ", " hello world "},
		{en, "Don’t quote me", " don't quote me "},
		{en, "I do not know", " i don't know "},
		{en, "high-level", " high level "},
		{en, "café", " café "},
		{es, "Bórrame, ¡ya!", " borrame ya "},
		{es, "AÑO", " ano "},
		{en, "\xff\xfeok", " ok "},
	}
	for _, tt := range tests {
		if got := tt.l.Normalise(tt.in); got != tt.want {
			t.Errorf("%s.Normalise(%q) = %q, want %q", tt.l.Tag, tt.in, got, tt.want)
		}
	}
}

// Inv 3.3 as a test: every built locale passes the lint, and the lint
// catches a protective rule placed after a raise.
func TestProtectionOrder(t *testing.T) {
	for _, tag := range Locales() {
		rules, _ := LocaleRules(tag)
		if err := Lint(rules); err != nil {
			t.Errorf("locale %s: %v", tag, err)
		}
		// Move each protective rule after the first raise or resume: the
		// lint must refuse every such order.
		first := -1
		for i, r := range rules {
			if r.Kind == Raise || r.Kind == Resume {
				first = i
				break
			}
		}
		if first < 0 {
			t.Fatalf("locale %s has no raise", tag)
		}
		for i, r := range rules[:first] {
			if !r.Kind.protective() {
				continue
			}
			bad := append(append(append([]Rule{}, rules[:i]...), rules[i+1:first+1]...), r)
			bad = append(bad, rules[first+1:]...)
			if err := Lint(bad); !errors.Is(err, ErrGrammar) {
				t.Errorf("locale %s: moving %s after %s passed the lint", tag, r.Name, rules[first].Name)
			}
		}
	}
	if err := Lint([]Rule{{Name: "a", Kind: Lower, Patterns: []string{"x"}}, {Name: "a", Kind: Lower, Patterns: []string{"y"}}}); err == nil {
		t.Error("duplicate names passed the lint")
	}
	if err := Lint([]Rule{{Name: "a", Kind: Lower}}); err == nil {
		t.Error("a rule without patterns passed the lint")
	}
}

func TestNewGrammarErrors(t *testing.T) {
	if _, err := NewGrammar([]string{"fr"}, nil, nil); !errors.Is(err, ErrGrammar) {
		t.Errorf("unknown locale: %v", err)
	}
	// Without invocation words nothing is addressed.
	g, err := NewGrammar([]string{"en"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in, ok := g.Parse("goldfish, word for word"); !ok || in.Addressed {
		t.Errorf("no invocation: %v %v", in, ok)
	}
}

func BenchmarkParse(b *testing.B) {
	g := grammar(b, "en", "es")
	texts := []string{
		"I think the importer can ship in the fourth quarter if we cut scope.",
		"Keep my words to just the decisions from here.",
		"Goldfish, word for word.",
		"Olvida lo que dije en los últimos cinco minutos.",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.Parse(texts[i%len(texts)])
	}
}

func BenchmarkParseNoIntent(b *testing.B) {
	g := grammar(b, "en", "es")
	text := "I think the importer can ship in the fourth quarter if we cut scope, and the vendor agrees."
	b.ReportAllocs()
	for b.Loop() {
		g.Parse(text)
	}
}

func TestRequiredWords(t *testing.T) {
	tests := map[string]string{
		` (?:erase|delete) everything i(?:'ve)? said `: "everything said",
		` forget what i (?:just )?said `:               "forget what said",
		`^ (?:{name} )?(?:no|nope) $`:                  "",
		` keep (?:this|it) (?:only )?for {dur} `:       "keep for",
		` olvida el ultim[oa]s? {dur} `:                "olvida ultim",
		` don't quote me `:                             "don't quote",
		` a|b `:                                        "",
		` quotes? `:                                    "quote",
	}
	for p, want := range tests {
		if got := strings.Join(requiredWords(p), " "); got != want {
			t.Errorf("requiredWords(%q) = %q, want %q", p, got, want)
		}
	}
}
