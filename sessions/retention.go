package sessions

import (
	"fmt"
	"strings"
	"time"
)

// Retention is the forgetting staircase of §7 for one profile. It is a
// value: copy it freely.
type Retention struct {
	steps []Step
}

// Staircase returns the profile's retention schedule.
func (p *Profile) Staircase() Retention { return Retention{steps: p.Retention} }

// Level is L_S(a) of Def 7.2: the level of the first step whose age is
// still ahead, or 0 once every step has passed. Boundaries are exclusive:
// at exactly 3 d goldfish-v01 reads 2, not 5.
func (r Retention) Level(age time.Duration) Level {
	if age < 0 {
		age = 0
	}
	for _, s := range r.steps {
		if age < s.Age {
			return s.Level
		}
	}
	return Off
}

// Readable is X_u(t) of Def 7.4 for a record stamped at s, held at h (⊥ if
// no raise is pending), with limit λ* (Forever if none), read at age a.
// A negative age is read as 0.
func (r Retention) Readable(s, h Level, limit, age time.Duration) Level {
	if age < 0 {
		age = 0
	}
	if limit != Forever && age >= limit {
		return Off
	}
	return Meet(Meet(s, h), r.Level(age))
}

// UnreadableAfter is Def 7.6: the age after which content kept at level l
// must be unrecoverable, max{u_j : m_j ≥ l} ∧ λ*. It is 0 for a level the
// schedule never reaches.
func (r Retention) UnreadableAfter(l Level, limit time.Duration) time.Duration {
	var u time.Duration
	for _, s := range r.steps {
		if s.Level >= l {
			u = s.Age
		}
	}
	return minDur(u, limit)
}

// Longest is u_k: after it nothing at all is kept, not even a gap marker
// (decision D5).
func (r Retention) Longest() time.Duration { return r.steps[len(r.steps)-1].Age }

// ReadableTable renders Table 7.5 (readable level by stamped level and
// age, no limit) as Markdown, from the schedule itself.
func (r Retention) ReadableTable() string {
	var b strings.Builder
	b.WriteString("| Stamped |")
	ages := []time.Duration{0}
	for i, s := range r.steps {
		if i == 0 {
			fmt.Fprintf(&b, " < %s |", FormatAge(s.Age))
		} else {
			fmt.Fprintf(&b, " %s to < %s |", FormatAge(r.steps[i-1].Age), FormatAge(s.Age))
		}
		ages = append(ages, s.Age)
	}
	fmt.Fprintf(&b, " ≥ %s |\n|---|", FormatAge(r.Longest()))
	for range ages {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for s := Top; s >= Off; s-- {
		fmt.Fprintf(&b, "| %d |", s)
		for _, a := range ages {
			fmt.Fprintf(&b, " %d |", r.Readable(s, Unset, Forever, a))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// UnreadableTable renders Table 7.6 (unreadable_after by level, no limit)
// as Markdown.
func (r Retention) UnreadableTable() string {
	var head, rule, row strings.Builder
	head.WriteString("| Level |")
	rule.WriteString("|---|")
	row.WriteString("| Unrecoverable after |")
	for l := Top; l >= Off; l-- {
		fmt.Fprintf(&head, " %d |", l)
		rule.WriteString("---|")
		fmt.Fprintf(&row, " %s |", FormatAge(r.UnreadableAfter(l, Forever)))
	}
	return head.String() + "\n" + rule.String() + "\n" + row.String() + "\n"
}

// FormatAge renders a duration in the largest whole unit of d, h, min, s or
// ms ("3 d", "90 s").
func FormatAge(d time.Duration) string {
	switch {
	case d == Forever:
		return "forever"
	case d == 0:
		return "0 s"
	case d%Day == 0:
		return fmt.Sprintf("%d d", d/Day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return fmt.Sprintf("%d ms", d/time.Millisecond)
}
