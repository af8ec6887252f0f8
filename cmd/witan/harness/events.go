package harness

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"time"
)

// Event is one server-sent event of GET /events.
type Event struct {
	ID   string
	Type string
	Data map[string]any
	Raw  string
}

// readEvents reads GET /events of session from position after until ctx
// ends or stop reports true for an event, and returns what it read.
func readEvents(ctx context.Context, c *Client, session, after string, stop func(Event) bool) ([]Event, *Answer) {
	a := &Answer{Node: c.URL, Method: http.MethodGet, Path: q("/events?last_event_id="+after, session)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+Base+a.Path, nil)
	if err != nil {
		a.Err = err.Error()
		return nil, a
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		a.Err = err.Error()
		return nil, a
	}
	defer resp.Body.Close()
	a.Status, a.Type = resp.StatusCode, resp.Header.Get("Content-Type")
	var out []Event
	var cur Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Type != "" || cur.Data != nil {
				out = append(out, cur)
				if stop(cur) {
					return out, a
				}
			}
			cur = Event{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Type = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.Raw = line[6:]
			if v, err := decodeJSON([]byte(cur.Raw)); err == nil {
				cur.Data, _ = v.(map[string]any)
			}
		}
	}
	return out, a
}

// s12Events: the events stream of S1's session, replayed from the start,
// then a new entry live. Every entry event carries finality, none says
// final on an eventual node; the live entry arrives, and a checkpoint
// event then covers it (final_advisory).
func s12Events(s *sc) {
	r := s.r
	ss := r.s1.ss
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.FinalityTimeout)
	defer cancel()
	// A new group: any member may create one, and no rate limit applies.
	live := ss.Tx(4, "group.create", map[string]any{"id": "readers", "members": []string{ss.Members[4].Key}, "admins": []string{ss.Members[4].Key}})
	livePos := int64(-1)
	go func() {
		// Submitted once the stream is open and replaying.
		time.Sleep(300 * time.Millisecond)
		ss.AcceptQuiet(ss.c, live)
	}()
	var sawDet, sawLive, covered bool
	evs, a := readEvents(ctx, ss.c, ss.ID, "0", func(e Event) bool {
		switch e.Type {
		case "entry":
			if Str(e.Data, "tx") == r.s1.det {
				sawDet = true
			}
			if Str(e.Data, "tx") == live.ID {
				sawLive, livePos = true, Int(e.Data, "position")
			}
		case "checkpoint":
			if livePos > 0 && Int(e.Data, "size") >= livePos {
				covered = true
			}
		}
		return sawLive && covered
	})
	bad := 0
	for _, e := range evs {
		f := Str(e.Data, "finality")
		if e.Type == "entry" && f != "provisional" && f != "final_advisory" || r.eventual() && f == "final" {
			bad++
		}
	}
	s.check("/events: every event carries finality provisional or final_advisory, never final", len(evs) > 0 && bad == 0, a, "%d of %d events", bad, len(evs))
	s.check("/events replays S1's determination", sawDet, a, "not among %d events", len(evs))
	s.check("/events delivers a new entry live, then a checkpoint event covering it", sawLive && covered, a, "live %v covered %v", sawLive, covered)
}
