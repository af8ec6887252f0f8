package meeting

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/witan-dev/witan/sessions"
	"github.com/witan-dev/witan/sessions/meetstore"
)

// closed is what the store still holds of a meeting that ended.
type closed struct {
	meta    meta
	p       *sessions.Profile
	records map[int][]meetstore.Copy // by seq, the live copies
	notes   []noteCopy
}

func (s *Service) closedExists(id ID) bool {
	found := false
	s.o.Store.Scan(context.Background(), item(id, itemMeta, 0), func(meetstore.Copy) error {
		found = true
		return nil
	})
	return found
}

func (s *Service) load(ctx context.Context, id ID) (*closed, error) {
	c := &closed{records: map[int][]meetstore.Copy{}}
	var haveMeta bool
	err := s.o.Store.Scan(ctx, id[:], func(cp meetstore.Copy) error {
		switch cp.Item[8] {
		case itemMeta:
			haveMeta = true
			return json.Unmarshal(cp.Plain, &c.meta)
		case itemRecord:
			if len(cp.Item) == 13 {
				seq := int(binary.BigEndian.Uint32(cp.Item[9:]))
				c.records[seq] = append(c.records[seq], cp)
			}
		case itemNote:
			var nc noteCopy
			if err := json.Unmarshal(cp.Plain, &nc); err != nil {
				return err
			}
			c.notes = append(c.notes, nc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meeting: read: %w", err)
	}
	if !haveMeta {
		s.mu.Lock()
		_, open := s.open[id]
		s.mu.Unlock()
		if open {
			return nil, &Error{Code: CodeStillOpen, Detail: "the meeting is still open; end it first"}
		}
		return nil, &Error{Code: CodeNotFound, Detail: "no meeting " + id.String() + " (or it has been forgotten)"}
	}
	if c.p, err = sessions.LoadProfile(c.meta.Profile); err != nil {
		return nil, fmt.Errorf("meeting: %w", err)
	}
	slices.SortFunc(c.notes, func(a, b noteCopy) int { return a.Level - b.Level })
	return c, nil
}

func (s *Service) at(at int64) sessions.Time {
	if at == 0 {
		return sessions.At(s.o.Clock.Now())
	}
	return sessions.Time(at)
}

// RecordView is one record read at an age: its readable level X_u(t) and
// what the copy kept at that level says. No times.
type RecordView struct {
	Seq   int    `json:"seq"`
	Level int    `json:"level"`
	Voice string `json:"voice,omitempty"` // from level 3: the pseudonym
	Text  string `json:"text"`
}

// Records reads a closed meeting's records at at (Unix ms; 0 means now):
// each at its readable level X_u(t) of Def 7.4, shown from the copy kept
// at min(X_u(t), 3), and nothing whose level is 0. If the store forgot a
// copy early (it may, by up to a day), the record reads at the level of
// the copy it still has.
func (s *Service) Records(ctx context.Context, id ID, at int64) ([]RecordView, error) {
	c, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.read(s.at(at)), nil
}

func (c *closed) read(t sessions.Time) []RecordView {
	st := c.p.Staircase()
	seqs := make([]int, 0, len(c.records))
	for seq := range c.records {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	out := []RecordView{}
	for _, seq := range seqs {
		var best *recordCopy
		var bestLevel int
		var x sessions.Level
		for _, cp := range c.records[seq] {
			var rc recordCopy
			if json.Unmarshal(cp.Plain, &rc) != nil {
				continue
			}
			r := sessions.Record{Stamped: sessions.Level(rc.Stamped), End: sessions.Time(rc.End), Limit: limitOf(rc.Limit)}
			x = r.Readable(st, t)
			if cp.Level <= min(int(x), 3) && cp.Level > bestLevel {
				best, bestLevel = &rc, cp.Level
			}
		}
		if best == nil || x < 1 {
			continue
		}
		v := RecordView{Seq: seq, Level: int(x), Text: best.Text}
		if bestLevel < min(int(x), 3) {
			v.Level = bestLevel
		}
		if v.Level >= int(sessions.Attributed) {
			v.Voice = best.Voice
		}
		out = append(out, v)
	}
	return out
}

// Artefact is a derived artefact at a level (§8.2): its lines use only the
// records readable at that level at the time asked.
type Artefact struct {
	Level int      `json:"level"`
	Lines []string `json:"lines"`
}

// Artefact builds the stand-in artefact at level l of a closed meeting at
// at: one line per record readable at l or above, attributed from level 3.
func (s *Service) Artefact(ctx context.Context, id ID, l int, at int64) (Artefact, error) {
	if l < 1 || l > int(sessions.Top) {
		return Artefact{}, &Error{Code: CodeBadRequest, Detail: fmt.Sprintf("level %d is not in 1-5", l)}
	}
	c, err := s.load(ctx, id)
	if err != nil {
		return Artefact{}, err
	}
	a := Artefact{Level: l, Lines: []string{}}
	for _, r := range c.read(s.at(at)) {
		if r.Level < l || r.Text == "" {
			continue
		}
		line := r.Text
		if l >= int(sessions.Attributed) {
			line = r.Voice + ": " + line
		}
		a.Lines = append(a.Lines, line)
	}
	return a, nil
}

// SectionView is a section of the note as read back.
type SectionView struct {
	Level     int      `json:"level"`
	Title     string   `json:"title"`
	KeptUntil string   `json:"kept_until"` // a UTC date
	Lines     []string `json:"lines"`
}

// NoteView is the note of §8.3 as read back at a time: the sections whose
// "kept until" has not passed and whose copy the store still holds.
type NoteView struct {
	Date     string        `json:"date"`
	Voices   int           `json:"voices"`
	Sections []SectionView `json:"sections"`
	Text     string        `json:"text"`
}

// Note reads a closed meeting's note at at (0 means now). A meeting with
// nothing left to read answers CodeForgotten.
func (s *Service) Note(ctx context.Context, id ID, at int64) (NoteView, error) {
	c, err := s.load(ctx, id)
	if err != nil {
		return NoteView{}, err
	}
	t := s.at(at)
	start := sessions.Time(c.meta.Start)
	n := NoteView{Date: start.UTC().Format(time.DateOnly), Voices: c.meta.Voices, Sections: []SectionView{}}
	for _, nc := range c.notes {
		if sessions.Time(nc.KeptUntil) <= t {
			continue
		}
		n.Sections = append(n.Sections, SectionView{Level: nc.Level, Title: nc.Title,
			KeptUntil: sessions.Time(nc.KeptUntil).UTC().Format(time.DateOnly), Lines: nc.Lines})
	}
	if len(n.Sections) == 0 && len(c.read(t)) == 0 {
		return NoteView{}, &Error{Code: CodeForgotten, Detail: "nothing of the meeting is readable any more"}
	}
	n.Text = c.render(n)
	return n, nil
}

// render writes the note as sessions.WriteNote does, with the sections
// still readable.
func (c *closed) render(n NoteView) string {
	var b strings.Builder
	voices := "voices"
	if n.Voices == 1 {
		voices = "voice"
	}
	fmt.Fprintf(&b, "# Goldfish note\n\n%s · %s · %d %s\n", n.Date, c.meta.Profile, n.Voices, voices)
	titles := map[int]string{1: "Outcomes", 2: "Gist", 3: "Attributed", 4: "Quoted", 5: "Audio"}
	for _, l := range c.meta.Dropped {
		fmt.Fprintf(&b, "The %s section was left out to fit the tag.\n", titles[l])
	}
	if c.meta.Trunc > 0 && len(c.meta.Levels) > 0 {
		lines := "lines"
		if c.meta.Trunc == 1 {
			lines = "line"
		}
		fmt.Fprintf(&b, "%d %s of %s left out to fit the tag.\n", c.meta.Trunc, lines, titles[c.meta.Levels[0]])
	}
	for _, sec := range n.Sections {
		fmt.Fprintf(&b, "\n## %s (kept until %s)\n\n", sec.Title, sec.KeptUntil)
		if len(sec.Lines) == 0 {
			b.WriteString("Nothing.\n")
		}
		for _, line := range sec.Lines {
			b.WriteString("- " + line + "\n")
		}
	}
	return b.String()
}

// Published is the answer to PublishOutcomes.
type Published struct {
	Space string `json:"space"`
	Ref   string `json:"ref"`
	// Warning says what publishing means for forgetting.
	Warning string `json:"warning"`
}

// PublishWarning is the sentence every publication answers with.
const PublishWarning = "The Outcomes section is now a block in a memory space that syncs to its peers: " +
	"what is published can no longer be forgotten by this node alone."

// PublishOutcomes puts the Outcomes section of a closed meeting's note, as
// it reads now, in a memory space as a CAT7 block. It is always an explicit
// call: nothing of a meeting is published otherwise.
func (s *Service) PublishOutcomes(ctx context.Context, id ID, space string) (Published, error) {
	if s.o.Publisher == nil {
		return Published{}, &Error{Code: CodeNotPublished, Detail: "this node has no memory spaces to publish to"}
	}
	if space == "" || len(space) > 256 {
		return Published{}, &Error{Code: CodeBadRequest, Detail: "a space name of 1-256 bytes is needed"}
	}
	n, err := s.Note(ctx, id, 0)
	if err != nil {
		return Published{}, err
	}
	var sec *SectionView
	for i := range n.Sections {
		if n.Sections[i].Level == int(sessions.Outcomes) {
			sec = &n.Sections[i]
		}
	}
	if sec == nil {
		return Published{}, &Error{Code: CodeForgotten, Detail: "the note has no Outcomes section any more"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Outcomes of a meeting on %s (%d voices)\n", n.Date, n.Voices)
	for _, l := range sec.Lines {
		b.WriteString("- " + l + "\n")
	}
	ref, err := s.o.Publisher.PublishBlock(ctx, space, b.String())
	if err != nil {
		return Published{}, err
	}
	return Published{Space: space, Ref: ref, Warning: PublishWarning}, nil
}
