package sessions

import (
	"fmt"
	"strings"
)

// Table renders the profile's parameters as the Markdown table of §1.2.
func (p *Profile) Table() string {
	var b strings.Builder
	b.WriteString("| Symbol | Profile key | " + p.Name + " |\n|---|---|---|\n")
	row := func(sym, key, v string) { fmt.Fprintf(&b, "| %s | `%s` | %s |\n", sym, key, v) }
	row("δ₀", "default_level", fmt.Sprint(int(p.DefaultLevel)))
	row("D̂", "max_default_level", fmt.Sprint(int(p.MaxDefaultLevel)))
	row("V̂", "max_voice_level", fmt.Sprint(int(p.MaxVoiceLevel)))
	row("W", "objection_window", FormatAge(p.ObjectionWindow))
	row("G", "session_gap", FormatAge(p.SessionGap))
	row("θ", "attribution_threshold_permille", fmt.Sprintf("%d ‰", p.AttributionPermille))
	row("N", "max_participants", fmt.Sprint(p.MaxParticipants))
	row("—", "room_raise", p.RoomRaise)
	row("—", "invocation", strings.Join(p.Invocation, ", "))
	row("—", "locales", strings.Join(p.Locales, ", "))
	row("—", "extensions", strings.Join(p.Extensions, ", "))
	row("—", "reply_window", FormatAge(p.ReplyWindow))
	row("—", "replies_for_group", fmt.Sprint(p.RepliesForGroup))
	var steps []string
	for _, s := range p.Retention {
		steps = append(steps, fmt.Sprintf("(%s, %d)", FormatAge(s.Age), s.Level))
	}
	row("S", "retention", strings.Join(steps, ", "))
	row("—", "eye.double_press, eye.hold", FormatAge(p.EyeDoublePress)+", "+FormatAge(p.EyeHold))
	var secs []string
	for _, l := range p.NoteSections {
		secs = append(secs, fmt.Sprint(int(l)))
	}
	row("—", "note.budget_bytes, note.sections", fmt.Sprintf("%d B; levels %s", p.NoteBudget, strings.Join(secs, ", ")))
	return b.String()
}

// RulesTable renders a locale's rules, in order, as a Markdown table in the
// form of Table 3.4, with each rule's examples.
func RulesTable(tag string) (string, bool) {
	l, ok := locales[tag]
	if !ok {
		return "", false
	}
	var b strings.Builder
	b.WriteString("| Rule | Matches, for example | Intent |\n|---|---|---|\n")
	for _, r := range l.Rules {
		var ex []string
		for _, e := range r.Examples {
			ex = append(ex, "\""+e.Text+"\"")
		}
		in := r.Kind.String() + ", " + r.Scope.String()
		switch {
		case r.Level != Unset:
			in += fmt.Sprintf(", %d", r.Level)
		case r.All:
			in += ", all"
		case r.Span != 0:
			in += ", " + FormatAge(r.Span)
		case strings.Contains(strings.Join(r.Patterns, ""), "{dur}"):
			in += ", N"
		}
		if r.Extension != "" {
			in += " (extension " + r.Extension + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Name, strings.Join(ex, ", "), in)
	}
	return b.String(), true
}
