package sessions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrNote is wrapped by errors WriteNote returns.
var ErrNote = errors.New("sessions: cannot write the note")

// Summariser turns the records an artefact at level l may use into the
// lines of the note's section at l (§8.2, §8.3). It is the caller's
// (typically a language model reading the transcripts it holds by
// Record.Ref); the engine never sees text. It must use nothing but the
// records it is given.
type Summariser func(l Level, records []Record) []string

// NoteSection is one section of the note.
type NoteSection struct {
	Level Level
	Title string
	// KeptUntil is start + unreadable_after(level) ∧ λ*: the instant after
	// which the section's content must be unrecoverable. Spoken limits
	// count (decision D2).
	KeptUntil Time
	Lines     []string
}

// Note is the Goldfish note (§8.3), written once when a session ends.
type Note struct {
	Sections []NoteSection // the sections kept, least detailed first
	Dropped  []Level       // sections dropped to fit the budget, most detailed first
	// Truncated is the number of lines left out of the least detailed
	// section when even it alone did not fit.
	Truncated int
	Text      string // the rendered note, at most the profile's budget in bytes
}

var sectionTitles = map[Level]string{Outcomes: "Outcomes", Gist: "Gist", Attributed: "Attributed",
	Verbatim: "Quoted", Audio: "Audio"}

// WriteNote writes the note for a closed session. Each section at level l
// holds the lines the summariser makes of the records readable at l when
// the session ended, and is dated start + unreadable_after(l), shortened by
// the room's limit and by the limit of every voice in the section. The
// front matter gives the number of voices, never their IDs, and the date.
// If the note is over the profile's budget, the most detailed section is
// dropped first, and the note says so; if the least detailed section alone
// is over, its last lines are left out, and the note says that too.
func WriteNote(p *Profile, c *Closure, sum Summariser) (*Note, error) {
	if p == nil || c == nil || sum == nil {
		return nil, fmt.Errorf("%w: missing profile, closure or summariser", ErrNote)
	}
	st := p.Staircase()
	n := &Note{}
	for _, l := range p.NoteSections {
		var recs []Record
		limit := c.RoomLimit
		for _, r := range c.Records {
			if r.Readable(st, c.End) >= l {
				recs = append(recs, r)
				limit = minDur(limit, r.Limit)
			}
		}
		sec := NoteSection{Level: l, Title: sectionTitles[l],
			KeptUntil: c.Start.Add(st.UnreadableAfter(l, limit))}
		if len(recs) > 0 {
			for _, line := range sum(l, slices.Clone(recs)) {
				line = strings.Join(strings.Fields(line), " ")
				if line != "" {
					sec.Lines = append(sec.Lines, line)
				}
			}
		}
		n.Sections = append(n.Sections, sec)
	}
	for {
		n.Text = n.render(c)
		if len(n.Text) <= p.NoteBudget {
			return n, nil
		}
		if len(n.Sections) > 1 {
			last := n.Sections[len(n.Sections)-1]
			n.Sections = n.Sections[:len(n.Sections)-1]
			n.Dropped = append(n.Dropped, last.Level)
			continue
		}
		sec := &n.Sections[0]
		if len(sec.Lines) == 0 {
			return nil, fmt.Errorf("%w: the front matter alone is over %d bytes", ErrNote, p.NoteBudget)
		}
		sec.Lines = sec.Lines[:len(sec.Lines)-1]
		n.Truncated++
	}
}

func (n *Note) render(c *Closure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Goldfish note\n\n%s · %s · %d %s\n", c.Start.UTC().Format(time.DateOnly),
		c.Profile, c.Voices, plural(c.Voices, "voice", "voices"))
	for _, l := range n.Dropped {
		fmt.Fprintf(&b, "The %s section was left out to fit the tag.\n", sectionTitles[l])
	}
	if n.Truncated > 0 {
		fmt.Fprintf(&b, "%d %s of %s left out to fit the tag.\n", n.Truncated,
			plural(n.Truncated, "line", "lines"), sectionTitles[n.Sections[0].Level])
	}
	for _, sec := range n.Sections {
		fmt.Fprintf(&b, "\n## %s (kept until %s)\n\n", sec.Title, sec.KeptUntil.UTC().Format(time.DateOnly))
		if len(sec.Lines) == 0 {
			b.WriteString("Nothing.\n")
		}
		for _, line := range sec.Lines {
			b.WriteString("- " + line + "\n")
		}
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
