package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/witan-dev/witan/replica/meeting"
)

// MeetingCommand works with meetings offline. Its one verb, replay, runs a
// transcript (JSON lines of the engine's inputs, as POST
// /oth/v0/meetings/{id}/events takes them) through the Resolution Protocol
// engine and prints the outcomes and the note. Nothing is stored.
type MeetingCommand struct {
	main *Main
}

func (c *MeetingCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "replay" {
		return c.main.groupHelp(args, "meeting", []verbHelp{
			{"replay FILE", "replay a meeting transcript (one JSON event per line; - for stdin) offline: its outcomes and the note it leaves"},
		})
	}
	fs := c.main.newFlagSet("meeting replay", "meeting replay [-profile NAME] [-locale en|es] [-json] FILE (- for stdin)")
	profile := fs.String("profile", "goldfish-v01", "the profile")
	locale := fs.String("locale", "", "the locale tried first (en, es)")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if err := parseArgs(fs, args[1:], 1); err != nil {
		return err
	}
	var in io.Reader = c.main.Stdin
	if name := fs.Arg(0); name != "-" {
		if st, err := os.Stat(name); err == nil && st.IsDir() {
			return fmt.Errorf("%s is a folder: name a transcript file in it (one JSON event per line), or - for stdin", name)
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	r, err := meeting.Replay(meeting.StartOptions{Profile: *profile, Locale: *locale}, in)
	if err != nil {
		return err
	}
	note := ""
	if r.Note != nil {
		note = r.Note.Text
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(struct {
			Results []meeting.Result `json:"results"`
			Note    string           `json:"note"`
		}{r.Results, note})
	}
	for _, o := range r.Results {
		var b strings.Builder
		b.WriteString(o.Kind)
		if o.Seq != nil {
			fmt.Fprintf(&b, " u%d s=%d", *o.Seq, *o.Level)
			if o.Held != nil {
				fmt.Fprintf(&b, " h=%d", *o.Held)
			}
		}
		for _, s := range []string{o.Intent, o.Result, o.Reason, o.Refusal} {
			if s != "" {
				b.WriteString(" " + s)
			}
		}
		fmt.Fprintln(c.main.Stdout, b.String())
	}
	if note != "" {
		fmt.Fprintln(c.main.Stdout)
		fmt.Fprint(c.main.Stdout, note)
	}
	return nil
}
