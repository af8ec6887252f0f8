package sessions

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// ErrGrammar is wrapped by every error NewGrammar and Lint return.
var ErrGrammar = errors.New("sessions: invalid grammar")

// Rule is one phrase rule of a locale (Table 3.4). Rules are tried in order;
// the first that matches gives the intent.
type Rule struct {
	Name  string
	Kind  Kind
	Scope Scope
	Level Level // Unset for kinds without a level
	// Span is the fixed span or limit of the rule ("scratch that" forgets
	// 120 s); zero when the span is read from the utterance or not used.
	Span time.Duration
	All  bool // forget(self, all)
	// Patterns are regular expressions over the normalised utterance
	// (Def 3.2: lower case, words separated by one space, a space at each
	// end). {name} stands for the invocation words, {dur} for a spoken
	// duration ("the last five minutes"), which becomes the intent's span.
	Patterns []string
	// Examples are utterances this rule must parse (they are tests), with
	// the span they must give where the rule reads one.
	Examples []RuleExample
	// Extension names the profile extension the rule belongs to, if any.
	Extension string
}

// RuleExample is an utterance a rule must parse.
type RuleExample struct {
	Text string
	Span time.Duration // the expected span, for rules that read one
}

// Locale is the grammar of one language (Def 3.2).
type Locale struct {
	Tag string
	// Replacements are applied, in order, to the normalised utterance; each
	// From and To is a whole phrase ("do not" → "don't").
	Replacements [][2]string
	// FoldAccents removes combining marks after lower-casing.
	FoldAccents bool
	// Numbers are the number words a spoken duration may use; digits are
	// always understood, a missing number means one.
	Numbers map[string]int64
	// Units are the unit words of a spoken duration.
	Units map[string]time.Duration
	Rules []Rule
}

// locales is the registry of built locales. It is data, not an init side
// effect, and is never mutated.
var locales = map[string]*Locale{
	"en": &english,
	"es": &spanish,
}

// Locales lists the tags of the built locales, sorted.
func Locales() []string {
	tags := make([]string, 0, len(locales))
	for t := range locales {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	return tags
}

// LocaleRules returns a copy of the rules of a built locale, in order.
func LocaleRules(tag string) ([]Rule, bool) {
	l, ok := locales[tag]
	if !ok {
		return nil, false
	}
	return slices.Clone(l.Rules), true
}

// maxSpan bounds spoken spans: nobody says a century, and the bound keeps
// the arithmetic far from overflow.
const maxSpan = 100 * 365 * Day

// Grammar parses utterances into intents for an ordered list of locales
// and a set of invocation words. A Grammar is immutable and safe for
// concurrent use.
type Grammar struct {
	locales    []*compiledLocale
	invocation []string
	extensions []string
}

type compiledLocale struct {
	*Locale
	rules []compiledRule
	reps  [][2]string // Replacements, padded with spaces
}

type compiledRule struct {
	rule     *Rule
	patterns []compiledPattern
}

// compiledPattern is a pattern and the words any match must contain, so
// most patterns are ruled out by a substring search before the regexp runs.
type compiledPattern struct {
	re   *regexp.Regexp
	need []string
}

// requiredWords returns words of three letters or more that every match of
// pattern contains: literal words outside groups, classes, placeholders and
// quantified atoms. It returns nothing for a pattern with a top-level
// alternation.
func requiredWords(pattern string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) >= 3 {
			words = append(words, string(cur))
		}
		cur = cur[:0]
	}
	depth := 0
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '(':
			flush()
			depth++
		case r == ')':
			depth--
		case depth > 0:
		case r == '|':
			return nil
		case r == '[':
			flush()
			for i < len(rs) && rs[i] != ']' {
				i++
			}
		case r == '{':
			flush()
			for i < len(rs) && rs[i] != '}' {
				i++
			}
		case r == '?' || r == '*' || r == '+':
			if len(cur) > 0 {
				cur = cur[:len(cur)-1]
			}
			flush()
		case r == '\\':
			flush()
			i++
		case r == '\'' || unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return words
}

// NewGrammar compiles the given locales, in the order they will be tried,
// with the given invocation words. Rules that belong to an extension not in
// extensions are skipped. Every locale must pass Lint.
func NewGrammar(tags, invocation, extensions []string) (*Grammar, error) {
	g := &Grammar{invocation: slices.Clone(invocation), extensions: slices.Clone(extensions)}
	name := "(?:" + strings.Join(quoteAll(invocation), "|") + ")"
	if len(invocation) == 0 {
		name = "(?:[^ ]*[^ a-z0-9'][^ ]*)" // matches no normalised word
	}
	for _, tag := range tags {
		l, ok := locales[tag]
		if !ok {
			return nil, fmt.Errorf("%w: unknown locale %q", ErrGrammar, tag)
		}
		if err := Lint(l.Rules); err != nil {
			return nil, fmt.Errorf("locale %s: %w", tag, err)
		}
		dur := "(?:(?P<n>[0-9]{1,6}|" + strings.Join(quoteAll(keysByLength(l.Numbers)), "|") +
			") )?(?P<u>" + strings.Join(quoteAll(keysByLength(l.Units)), "|") + ")"
		cl := &compiledLocale{Locale: l, reps: padded(l.Replacements)}
		for i := range l.Rules {
			r := &l.Rules[i]
			if r.Extension != "" && !slices.Contains(extensions, r.Extension) {
				continue
			}
			cr := compiledRule{rule: r}
			for _, p := range r.Patterns {
				src := strings.ReplaceAll(strings.ReplaceAll(p, "{name}", name), "{dur}", dur)
				re, err := regexp.Compile(src)
				if err != nil {
					return nil, fmt.Errorf("%w: locale %s rule %s: %v", ErrGrammar, tag, r.Name, err)
				}
				cr.patterns = append(cr.patterns, compiledPattern{re: re, need: requiredWords(p)})
			}
			cl.rules = append(cl.rules, cr)
		}
		g.locales = append(g.locales, cl)
	}
	return g, nil
}

// NewGrammar returns the grammar the profile names: its locales in order,
// its invocation words and its extensions.
func (p *Profile) Grammar() (*Grammar, error) {
	return NewGrammar(p.Locales, p.Invocation, p.Extensions)
}

// Lint checks the protection order of Inv 3.3: every rule of kind object,
// forget, lower or shorten comes before every rule of kind raise or resume,
// so that a sentence that both lowers and raises parses as a lowering. It
// also refuses unnamed, duplicate-named and pattern-less rules.
func Lint(rules []Rule) error {
	var errs []error
	firstRaise := -1
	seen := map[string]bool{}
	for i, r := range rules {
		if r.Name == "" || seen[r.Name] {
			errs = append(errs, fmt.Errorf("%w: rule %d has an empty or repeated name %q", ErrGrammar, i, r.Name))
		}
		seen[r.Name] = true
		if len(r.Patterns) == 0 {
			errs = append(errs, fmt.Errorf("%w: rule %q has no pattern", ErrGrammar, r.Name))
		}
		switch {
		case r.Kind == Raise || r.Kind == Resume:
			if firstRaise < 0 {
				firstRaise = i
			}
		case r.Kind.protective() && firstRaise >= 0:
			errs = append(errs, fmt.Errorf("%w: protection order: %s rule %q comes after %s rule %q",
				ErrGrammar, r.Kind, r.Name, rules[firstRaise].Kind, rules[firstRaise].Name))
		}
	}
	return errors.Join(errs...)
}

// Match is the result of parsing one utterance.
type Match struct {
	Intent Intent
	// Text is the normalised utterance the rule matched.
	Text string
}

// Parse returns the intent of the first (locale, rule) pair that matches
// text, trying locales in order (Def 3.2). One utterance gives at most one
// intent. ok is false if no rule matches. The intent's Source is
// FromSpeech and Addressed says whether an invocation word occurs anywhere
// in the utterance.
func (g *Grammar) Parse(text string) (in Intent, ok bool) {
	m, ok := g.Match(text)
	return m.Intent, ok
}

// Match is Parse, also returning the normalised text the rule matched.
func (g *Grammar) Match(text string) (Match, bool) {
	var buf [4]string
	norms := buf[:0]
	addressed := false
	for _, l := range g.locales {
		n := l.normalise(text, l.reps)
		norms = append(norms, n)
		addressed = addressed || g.named(n)
	}
	for li, l := range g.locales {
		norm := norms[li]
		for _, cr := range l.rules {
		patterns:
			for _, cp := range cr.patterns {
				for _, w := range cp.need {
					if !strings.Contains(norm, w) {
						continue patterns
					}
				}
				re := cp.re
				sub := re.FindStringSubmatchIndex(norm)
				if sub == nil {
					continue
				}
				r := cr.rule
				in := Intent{Kind: r.Kind, Scope: r.Scope, Level: r.Level, Span: r.Span, All: r.All,
					Addressed: addressed, Source: FromSpeech, Rule: r.Name, Locale: l.Tag}
				if u := re.SubexpIndex("u"); u >= 0 && sub[2*u] >= 0 {
					in.Span = l.span(norm, re, sub)
				}
				return Match{Intent: in, Text: norm}, true
			}
		}
	}
	return Match{}, false
}

// span reads a spoken duration from the groups n (number, optional) and u
// (unit) of a match.
func (l *Locale) span(norm string, re *regexp.Regexp, sub []int) time.Duration {
	u := re.SubexpIndex("u")
	n := int64(1)
	if i := re.SubexpIndex("n"); i >= 0 && sub[2*i] >= 0 {
		word := norm[sub[2*i]:sub[2*i+1]]
		if v, err := strconv.ParseInt(word, 10, 64); err == nil {
			n = v
		} else {
			n = l.Numbers[word]
		}
	}
	unit := l.Units[norm[sub[2*u]:sub[2*u+1]]]
	if n <= 0 {
		// "the last 0 minutes" asks for nothing; read it as the smallest
		// span the unit can say, so a forget still reaches something.
		n = 1
	}
	if n > int64(maxSpan/unit) {
		return maxSpan
	}
	return time.Duration(n) * unit
}

func (g *Grammar) named(norm string) bool {
	for _, w := range g.invocation {
		if strings.Contains(norm, " "+w+" ") {
			return true
		}
	}
	return false
}

// Addressed reports whether an invocation word occurs anywhere in text.
func (g *Grammar) Addressed(text string) bool {
	for _, l := range g.locales {
		if g.named(l.normalise(text, l.reps)) {
			return true
		}
	}
	return false
}

// Normalise is Def 3.2: lower-case the text, fold accents if the locale
// asks, turn every run of characters other than letters, digits and
// apostrophes into one space, pad with a space at each end, and apply the
// locale's phrase replacements. Typographic apostrophes count as
// apostrophes. Invalid UTF-8 is read as U+FFFD, which is not a letter.
func (l *Locale) Normalise(text string) string {
	return l.normalise(text, padded(l.Replacements))
}

func padded(reps [][2]string) [][2]string {
	out := make([][2]string, len(reps))
	for i, r := range reps {
		out[i] = [2]string{" " + r[0] + " ", " " + r[1] + " "}
	}
	return out
}

func (l *Locale) normalise(text string, reps [][2]string) string {
	s := strings.ToLower(text)
	if l.FoldAccents && !isASCII(s) {
		s = foldAccents(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(' ')
	space := true
	for _, r := range s {
		if r == '’' || r == 'ʼ' || r == '‘' {
			r = '\''
		}
		if isWordRune(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	out := b.String()
	for _, rep := range reps {
		// Applied until none is left: "do not do not" has two, sharing a
		// space that one pass would consume.
		for i := 0; i < 4 && strings.Contains(out, rep[0]); i++ {
			out = strings.ReplaceAll(out, rep[0], rep[1])
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool {
	return r == '\'' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func foldAccents(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = regexp.QuoteMeta(w)
	}
	return out
}

// keysByLength returns the keys longest first (then alphabetically), so an
// alternation prefers "minutes" to "minute" and is deterministic.
func keysByLength[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	return keys
}
