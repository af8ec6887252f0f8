// Command meeting replays the roadmap session of the Resolution Protocol
// memory model (§8.4) against a witan node over its HTTP API, once in
// English and once in Spanish: it starts a meeting, feeds it what a
// Goldfish device would send (speech with diarised labels, eye presses,
// ticks), reads the note, lets three days pass on the node's injected
// clock so that the Attributed copies' keys are destroyed at midnight, and
// publishes the English note's Outcomes to a memory space, which the node
// answers can no longer be forgotten by it alone.
//
//	go run ./examples/meeting
package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/meeting"
	"github.com/witan-dev/witan/replica/node"
)

//go:embed roadmap-en.jsonl
var roadmapEN []byte

//go:embed roadmap-es.jsonl
var roadmapES []byte

// epoch is the simulator's clock start of §8.4, 2026-10-14 00:00 UTC.
const epoch = int64(1791936000000)

func main() {
	if _, err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// clock is the node's meeting clock, which the example moves by days.
type clock struct {
	mu gosync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(ms int64)   { c.mu.Lock(); c.t = time.UnixMilli(ms).UTC(); c.mu.Unlock() }

// outcome is what the test checks.
type outcome struct {
	Notes    map[string]meeting.NoteView // by locale, at the end
	Later    map[string]meeting.NoteView // three days later
	Results  map[string][]meeting.Result
	Warning  string
	Received int // results received over HTTP
}

func run(ctx context.Context, w io.Writer) (*outcome, error) {
	dir, err := os.MkdirTemp("", "witan-meeting-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c := &clock{}
	c.set(epoch)
	// 1. A node with meetings: its entries in memory, its meeting store
	//    (sealed copies, day keys) in a directory of its own.
	n, err := node.Open(ctx, node.Options{InMemory: true, MeetingsDir: dir, MeetingClock: c})
	if err != nil {
		return nil, err
	}
	defer n.Close()
	srv, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String() + httpapi.Base

	o := &outcome{Notes: map[string]meeting.NoteView{}, Later: map[string]meeting.NoteView{},
		Results: map[string][]meeting.Result{}}
	ids := map[string]string{}
	for _, m := range []struct {
		locale string
		lines  []byte
	}{{"en", roadmapEN}, {"es", roadmapES}} {
		// 2. Start a meeting and feed it the device's events.
		var st meeting.StateView
		if err := call(ctx, "POST", base+"/meetings", meeting.StartOptions{Locale: m.locale, Start: epoch}, &st); err != nil {
			return nil, err
		}
		ids[m.locale] = st.ID
		sc := bufio.NewScanner(bytes.NewReader(m.lines))
		for sc.Scan() {
			var ev meeting.Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				return nil, err
			}
			var a meeting.EventsAnswer
			if err := call(ctx, "POST", base+"/meetings/"+st.ID+"/events", ev, &a); err != nil {
				return nil, err
			}
			o.Results[m.locale] = append(o.Results[m.locale], a.Results...)
			o.Received += len(a.Results)
			if a.State.Window != nil && ev.Type == "press" {
				fmt.Fprintf(w, "[%s] the room is raised provisionally; %d ms to object\n", m.locale, a.State.Window.RemainingMS)
			}
		}
		// 3. The last tick was 600 s after the last word: the meeting
		//    ended and its note was written.
		var note meeting.NoteView
		if err := call(ctx, "GET", base+"/meetings/"+st.ID+"/note", nil, &note); err != nil {
			return nil, err
		}
		o.Notes[m.locale] = note
		fmt.Fprintf(w, "\n[%s] the note:\n\n%s\n", m.locale, note.Text)
	}

	// 4. Three days on: at 2026-10-17 00:00 UTC the node destroys the day
	//    keys of the level-3 copies; Attributed is gone, for good.
	c.set(epoch + 3*86400_000)
	if err := n.ForgetMeetings(ctx); err != nil {
		return nil, err
	}
	for _, locale := range []string{"en", "es"} {
		var later meeting.NoteView
		if err := call(ctx, "GET", base+"/meetings/"+ids[locale]+"/note", nil, &later); err != nil {
			return nil, err
		}
		o.Later[locale] = later
		fmt.Fprintf(w, "[%s] three days later the note has %d sections:", locale, len(later.Sections))
		for _, s := range later.Sections {
			fmt.Fprintf(w, " %s (until %s)", s.Title, s.KeptUntil)
		}
		fmt.Fprintln(w)
	}

	// 5. Publishing the Outcomes is an explicit call, and the node says
	//    what it costs.
	var pub meeting.Published
	if err := call(ctx, "POST", base+"/meetings/"+ids["en"]+"/publish", map[string]string{"space": "roadmap-notes"}, &pub); err != nil {
		return nil, err
	}
	o.Warning = pub.Warning
	fmt.Fprintf(w, "\npublished to memory space %s as %s\n%s\n", pub.Space, pub.Ref, pub.Warning)
	return o, nil
}

func call(ctx context.Context, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json") // the node refuses a write that is not JSON
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}
