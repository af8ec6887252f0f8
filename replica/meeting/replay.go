package meeting

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/witan-dev/witan/sessions"
)

// Replayed is what Replay makes of a transcript: every outcome, in order,
// as an answer shows it, and the note of the session it ended (nil if the
// transcript said nothing).
type Replayed struct {
	Results []Result
	Note    *sessions.Note
}

// Replay runs a transcript (JSON lines of Event) through the engine
// offline, with the same checks as the API, and ends the session at its
// last event if the transcript did not. Nothing is stored. A bad line is an
// *Error whose Detail names the line.
func Replay(so StartOptions, r io.Reader) (*Replayed, error) {
	name := so.Profile
	if name == "" {
		name = "goldfish-v01"
	}
	p, err := sessions.LoadProfile(name)
	if err != nil {
		return nil, &Error{Code: CodeUnknownProfile, Detail: fmt.Sprintf("profile %q", name)}
	}
	if so.Locale != "" {
		i := slices.Index(p.Locales, so.Locale)
		if i < 0 {
			return nil, &Error{Code: CodeUnknownLocale, Detail: fmt.Sprintf("locale %q", so.Locale)}
		}
		p.Locales = append([]string{so.Locale}, slices.Delete(slices.Clone(p.Locales), i, i+1)...)
	}
	eng, err := sessions.New(sessions.Options{Profile: p, Entropy: rand.Reader})
	if err != nil {
		return nil, fmt.Errorf("meeting: %w", err)
	}
	out := &Replayed{}
	texts := map[uint64]string{}
	var ref uint64
	var closure *sessions.Closure
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxBody)
	line := 0
	var lastAt int64
	absorb := func(os []sessions.Outcome) {
		for _, o := range os {
			out.Results = append(out.Results, resultOf(o))
			if o.Kind == sessions.SessionEnded && closure == nil {
				closure = o.Closure
			}
		}
	}
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if line > 20000 {
			return nil, &Error{Code: CodeTooLarge, Detail: "a transcript has at most 20000 lines"}
		}
		if closure != nil {
			return nil, &Error{Code: CodeEnded, Detail: fmt.Sprintf("line %d: the session ended before it", line)}
		}
		var ev Event
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.DisallowUnknownFields()
		if err := d.Decode(&ev); err != nil {
			return nil, &Error{Code: CodeBadRequest, Detail: fmt.Sprintf("line %d: %v", line, err)}
		}
		e, err := ev.toEngine(ref, DefaultMaxText)
		if err != nil {
			var me *Error
			errors.As(err, &me)
			return nil, &Error{Code: me.Code, Detail: fmt.Sprintf("line %d: %s", line, me.Detail)}
		}
		if sp, ok := e.(sessions.Speech); ok {
			texts[ref] = sp.Text
			ref++
		}
		os, err := eng.Step(e)
		if err != nil {
			var me *Error
			if !errors.As(stepError(err), &me) {
				return nil, err
			}
			return nil, &Error{Code: me.Code, Detail: fmt.Sprintf("line %d: %s", line, me.Detail)}
		}
		lastAt = max(lastAt, ev.End, ev.At)
		absorb(os)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("line %d is over %d bytes", line+1, MaxBody)}
		}
		return nil, fmt.Errorf("meeting: read transcript: %w", err)
	}
	if closure == nil {
		if st := eng.State(); st.Open {
			os, err := eng.Step(sessions.End{At: sessions.Time(lastAt)})
			if err != nil {
				return nil, fmt.Errorf("meeting: %w", err)
			}
			absorb(os)
		}
	}
	if closure != nil {
		if out.Note, err = sessions.WriteNote(p, closure, summarise(texts)); err != nil {
			return nil, fmt.Errorf("meeting: %w", err)
		}
	}
	return out, nil
}
