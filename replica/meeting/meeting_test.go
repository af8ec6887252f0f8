package meeting

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/sessions"
	"github.com/witan-dev/witan/sessions/meetstore"
)

// epoch is the simulator's clock start of §8.4, 2026-10-14 00:00 UTC.
const epoch = int64(1791936000000)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) SetMS(ms int64)  { c.Set(time.UnixMilli(ms).UTC()) }

type rig struct {
	t      *testing.T
	clock  *clock
	store  *meetstore.Store
	svc    *Service
	srv    *httptest.Server
	bodies [][]byte // every answer, for the walk
}

func newRig(t *testing.T) *rig {
	t.Helper()
	c := &clock{t: time.UnixMilli(epoch).UTC()}
	st, err := meetstore.Open(context.Background(), t.TempDir(), meetstore.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: st, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, clock: c, store: st, svc: svc}
	r.srv = httptest.NewServer(Handler(svc, "/oth/v0"))
	t.Cleanup(func() { r.srv.Close(); st.Close() })
	return r
}

// do sends a request and decodes a JSON answer into out (if not nil).
func (r *rig) do(method, path string, body any, out any) int {
	r.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, r.srv.URL+"/oth/v0"+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r.bodies = append(r.bodies, b)
	if resp.StatusCode >= 400 {
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			r.t.Errorf("%s %s: %d with %s, want problem+json", method, path, resp.StatusCode, ct)
		}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			r.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

func (r *rig) start(so StartOptions) string {
	r.t.Helper()
	var st StateView
	if code := r.do("POST", "/meetings", so, &st); code != 201 {
		r.t.Fatalf("start: %d", code)
	}
	return st.ID
}

func readTranscript(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// pure runs the events through the engine directly, as a reference.
func pure(t *testing.T, locale string, evs []Event) []Result {
	t.Helper()
	p, _ := sessions.LoadProfile("goldfish-v01")
	if locale == "es" {
		p.Locales = []string{"es", "en"}
	}
	e, err := sessions.New(sessions.Options{Profile: p, Entropy: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	var out []Result
	var ref uint64
	for _, ev := range evs {
		se, err := ev.toEngine(ref, DefaultMaxText)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "speech" {
			ref++
		}
		os, err := e.Step(se)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range os {
			out = append(out, resultOf(o))
		}
	}
	return out
}

func feed(r *rig, id string, evs []Event) []Result {
	r.t.Helper()
	var all []Result
	for i, ev := range evs {
		var a EventsAnswer
		if code := r.do("POST", "/meetings/"+id+"/events", ev, &a); code != 200 {
			r.t.Fatalf("event %d: %d %s", i, code, r.bodies[len(r.bodies)-1])
		}
		all = append(all, a.Results...)
	}
	return all
}

// The §8.4 roadmap session over HTTP gives the note of §8.4 and the same
// outcomes as the pure engine.
func TestRoadmapOverHTTP(t *testing.T) {
	for _, locale := range []string{"en", "es"} {
		t.Run(locale, func(t *testing.T) {
			r := newRig(t)
			evs := readTranscript(t, filepath.Join("testdata", "roadmap-"+locale+".jsonl"))
			id := r.start(StartOptions{Profile: "goldfish-v01", Locale: locale, Start: epoch})
			got := feed(r, id, evs)
			want := pure(t, locale, evs)
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if !bytes.Equal(gj, wj) {
				t.Errorf("outcomes over HTTP differ from the engine's:\n got %s\nwant %s", gj, wj)
			}
			if last := got[len(got)-1]; last.Kind != "session-ended" {
				t.Errorf("the gap did not end the meeting: %+v", last)
			}
			var n NoteView
			if code := r.do("GET", "/meetings/"+id+"/note", nil, &n); code != 200 {
				t.Fatalf("note: %d", code)
			}
			// The model's dates: Outcomes until 2027-10-14, Gist until
			// 2026-11-13, Attributed until 2026-10-17; five voices.
			wantSecs := []struct {
				title, until string
				lines        int
			}{{"Outcomes", "2027-10-14", 9}, {"Gist", "2026-11-13", 8}, {"Attributed", "2026-10-17", 7}}
			if len(n.Sections) != 3 || n.Voices != 5 || n.Date != "2026-10-14" {
				t.Fatalf("note: %d sections, %d voices, date %s", len(n.Sections), n.Voices, n.Date)
			}
			for i, w := range wantSecs {
				s := n.Sections[i]
				if s.Title != w.title || s.KeptUntil != w.until || len(s.Lines) != w.lines {
					t.Errorf("section %d: %s until %s, %d lines; want %s until %s, %d lines", i, s.Title, s.KeptUntil, len(s.Lines), w.title, w.until, w.lines)
				}
			}
			if locale == "en" {
				golden, err := os.ReadFile(filepath.Join("..", "..", "sessions", "testdata", "roadmap-note.md"))
				if err != nil {
					t.Fatal(err)
				}
				if n.Text != string(golden) {
					t.Errorf("note differs from sessions' roadmap note:\n%s", n.Text)
				}
			} else {
				for _, gone := range []string{"proveedor", "nombren", "segura"} {
					if strings.Contains(n.Text, gone) {
						t.Errorf("the Spanish note keeps %q", gone)
					}
				}
				if !strings.Contains(n.Text, "- v5: Puedes citarme en esto.") {
					t.Errorf("the Spanish note lacks Eve's attributed line:\n%s", n.Text)
				}
			}
			// Dana (v4) never appears in Attributed.
			if strings.Contains(strings.Join(n.Sections[2].Lines, "\n"), "v4") {
				t.Errorf("Dana in Attributed")
			}
			// The pure engine's final levels are the records' levels at the
			// end: levels 1-3 read as they were stamped on day one.
			var recs struct{ Records []RecordView }
			r.do("GET", "/meetings/"+id+"/records?at="+strconv.FormatInt(epoch+800_000, 10), nil, &recs)
			levels := map[int]int{}
			for _, rec := range recs.Records {
				levels[rec.Seq] = rec.Level
			}
			// Stamps from §8.4 (sessions' roadmap test): seq → level; 0s
			// are absent.
			want84 := map[int]int{0: 3, 1: 3, 2: 3, 4: 2, 5: 3, 6: 3, 10: 1, 11: 3, 12: 3}
			if len(levels) != len(want84) {
				t.Errorf("readable records %v, want %v", levels, want84)
			}
			for seq, l := range want84 {
				if levels[seq] != l {
					t.Errorf("record %d reads %d, want %d", seq, levels[seq], l)
				}
			}
		})
	}
}

// Labels, voice IDs of the binding and statement times appear in no
// answer of any meeting endpoint.
func TestNoLabelsOrTimesInAnswers(t *testing.T) {
	r := newRig(t)
	evs := readTranscript(t, filepath.Join("testdata", "roadmap-en.jsonl"))
	id := r.start(StartOptions{Start: epoch})
	r.do("GET", "/meetings/"+id, nil, nil)
	feed(r, id, evs[:10])
	r.do("GET", "/meetings/"+id, nil, nil)
	r.do("GET", "/meetings/"+id+"/note", nil, nil) // still open: 409
	feed(r, id, evs[10:])
	r.do("GET", "/meetings/"+id, nil, nil)
	r.do("POST", "/meetings/"+id+"/events", evs[0], nil) // ended: 409
	r.do("POST", "/meetings/"+id+"/end", nil, nil)
	for _, at := range []int64{0, epoch + 3600_000, epoch + 4*86400_000, epoch + 40*86400_000} {
		q := "?at=" + strconv.FormatInt(at, 10)
		r.do("GET", "/meetings/"+id+"/note"+q, nil, nil)
		r.do("GET", "/meetings/"+id+"/records"+q, nil, nil)
		for l := 1; l <= 5; l++ {
			r.do("GET", "/meetings/"+id+"/artefact"+q+"&level="+strconv.Itoa(l), nil, nil)
		}
	}
	r.do("POST", "/meetings/"+id+"/publish", map[string]string{"space": "notes"}, nil)
	r.do("GET", "/meetings/0000000000000000/records", nil, nil)

	var forbidden []string
	for _, ev := range evs {
		if ev.Label != "" {
			forbidden = append(forbidden, ev.Label)
		}
		for _, ms := range []int64{ev.Start, ev.End, ev.At} {
			if ms != 0 {
				forbidden = append(forbidden, strconv.FormatInt(ms, 10), strconv.FormatInt(ms-epoch, 10))
			}
		}
		for _, ms := range []int64{ev.Start, ev.End} {
			if ms != 0 {
				forbidden = append(forbidden, time.UnixMilli(ms).UTC().Format("15:04:05"))
			}
		}
	}
	if len(r.bodies) < 40 {
		t.Fatalf("only %d answers walked", len(r.bodies))
	}
	var texts int
	for _, b := range r.bodies {
		if bytes.Contains(b, []byte("roadmap")) {
			texts++ // answers with content were walked, not only errors
		}
		// The meeting's id, drawn at random, is the answers' only random
		// text: its 16 hex digits would hold a time such as "4000" or
		// "12300" about one run in 750.
		b = bytes.ReplaceAll(b, []byte(id), []byte("<id>"))
		for _, f := range forbidden {
			if len(f) >= 4 && bytes.Contains(b, []byte(f)) {
				t.Errorf("an answer contains %q: %s", f, b)
			}
		}
		for _, label := range []string{`"Alice"`, `"Bob"`, "Charlie", "Dana", `"Eve"`, "label"} {
			if bytes.Contains(b, []byte(label)) {
				t.Errorf("an answer contains %s: %s", label, b)
			}
		}
	}
	if texts < 5 {
		t.Errorf("only %d answers carried content", texts)
	}
}

// Ages by an injected clock: a record stamped 4 reads 4 before 3 d and 2
// at exactly 3 d; "keep this for a week" makes the meeting unreadable at
// 7 d.
func TestReadsByAge(t *testing.T) {
	r := newRig(t)
	id := r.start(StartOptions{Start: epoch})
	feed(r, id, []Event{
		{Type: "speech", Label: "A", Start: epoch + 1000, End: epoch + 3000, Confidence: 950, Text: "You can quote me."},
		{Type: "speech", Label: "A", Start: epoch + 4000, End: epoch + 10_000, Confidence: 950, Text: "Our plan is sound."},
	})
	var a EventsAnswer
	r.do("POST", "/meetings/"+id+"/events", Event{Type: "tick", At: epoch + 11_000}, &a)
	var st StateView
	r.do("GET", "/meetings/"+id, nil, &st)
	if len(st.Voices) != 1 || st.Voices[0].Level != 4 || st.Voices[0].ID != "v1" {
		t.Fatalf("state %+v", st)
	}
	r.do("POST", "/meetings/"+id+"/end", map[string]int64{"at": epoch + 12_000}, nil)
	end := epoch + 10_000 // t₁ of the level-4 record
	read := func(at int64) map[int]RecordView {
		t.Helper()
		r.clock.SetMS(at)
		var recs struct{ Records []RecordView }
		if code := r.do("GET", "/meetings/"+id+"/records?at="+strconv.FormatInt(at, 10), nil, &recs); code != 200 {
			t.Fatalf("records at %d: %d", at, code)
		}
		m := map[int]RecordView{}
		for _, rec := range recs.Records {
			m[rec.Seq] = rec
		}
		return m
	}
	const d = int64(86400_000)
	if rec := read(end + 2*d); rec[1].Level != 4 || rec[1].Voice != "v1" || rec[1].Text != "Our plan is sound." || rec[0].Level != 3 {
		t.Errorf("at 2 d: %+v, want the second record at 4 by v1, the first at 3", rec)
	}
	// 2 d 23 h 59 min: still day 10-16, so the level-3 copy lives.
	if rec := read(end + 3*d - 60_000); rec[1].Level != 4 {
		t.Errorf("just before 3 d: %+v, want 4", rec)
	}
	if rec := read(end + 3*d); rec[1].Level != 2 || rec[1].Voice != "" || rec[0].Level != 2 {
		t.Errorf("at exactly 3 d: %+v, want 2 with no voice", rec)
	}
	var art Artefact
	r.do("GET", "/meetings/"+id+"/artefact?level=3&at="+strconv.FormatInt(end+3*d, 10), nil, &art)
	if len(art.Lines) != 0 {
		t.Errorf("an artefact at 3 uses records readable at 2: %v", art.Lines)
	}
	r.do("GET", "/meetings/"+id+"/artefact?level=2&at="+strconv.FormatInt(end+3*d, 10), nil, &art)
	if len(art.Lines) != 2 {
		t.Errorf("artefact at 2: %v", art.Lines)
	}

	// "Keep this for a week."
	r2 := newRig(t)
	id2 := r2.start(StartOptions{Start: epoch})
	feed(r2, id2, []Event{
		{Type: "speech", Label: "A", Start: epoch + 1000, End: epoch + 3000, Confidence: 950, Text: "Keep this for a week."},
		{Type: "speech", Label: "B", Start: epoch + 4000, End: epoch + 9000, Confidence: 950, Text: "The budget is fine."},
	})
	r2.do("POST", "/meetings/"+id2+"/end", nil, nil)
	var n NoteView
	r2.clock.SetMS(epoch + 6*d)
	if code := r2.do("GET", "/meetings/"+id2+"/note", nil, &n); code != 200 || len(n.Sections) == 0 {
		t.Fatalf("at 6 d the note should read: %d %+v", code, n)
	}
	for _, s := range n.Sections {
		if s.KeptUntil != "2026-10-21" && s.KeptUntil != "2026-10-17" {
			t.Errorf("%s kept until %s, want at most a week (D2)", s.Title, s.KeptUntil)
		}
	}
	r2.store.Forget(context.Background())
	r2.clock.SetMS(epoch + 7*d)
	if code := r2.do("GET", "/meetings/"+id2+"/note", nil, nil); code != 404 {
		t.Errorf("note at 7 d: %d, want 404", code)
	}
	if code := r2.do("GET", "/meetings/"+id2+"/records", nil, nil); code != 404 {
		t.Errorf("records at 7 d: %d, want 404", code)
	}
	r2.store.Forget(context.Background())
	n2 := 0
	r2.store.Scan(context.Background(), nil, func(meetstore.Copy) error { n2++; return nil })
	if n2 != 0 {
		t.Errorf("%d copies left in the store after a week", n2)
	}
}

// Bad input gets problem+json with a code and leaves the meeting as it was.
func TestBadInput(t *testing.T) {
	r := newRig(t)
	var p Problem
	if code := r.do("POST", "/meetings", StartOptions{Profile: "goldfish-v99"}, &p); code != 422 || p.Code != CodeUnknownProfile {
		t.Errorf("unknown profile: %d %+v", code, p)
	}
	if code := r.do("POST", "/meetings", StartOptions{Locale: "fr"}, &p); code != 422 || p.Code != CodeUnknownLocale {
		t.Errorf("unknown locale: %d %+v", code, p)
	}
	id := r.start(StartOptions{Start: epoch + 5000})
	feed(r, id, []Event{{Type: "speech", Label: "A", Start: epoch + 6000, End: epoch + 9000, Confidence: 950, Text: "Hello."}})
	var before, after StateView
	r.do("GET", "/meetings/"+id, nil, &before)
	cases := []struct {
		name string
		body any
		code Code
		st   int
	}{
		{"out of order", Event{Type: "speech", Label: "B", Start: epoch + 6500, End: epoch + 8000, Text: "Late."}, CodeOutOfOrder, 422},
		{"press out of order", Event{Type: "press", At: epoch + 8000}, CodeOutOfOrder, 422},
		{"before start", Event{Type: "speech", Label: "B", Start: epoch + 1000, End: epoch + 9500, Text: "Early."}, CodeBeforeStart, 422},
		{"huge transcript", Event{Type: "speech", Label: "B", Start: epoch + 9500, End: epoch + 9900, Text: strings.Repeat("word ", 2000)}, CodeTooLarge, 413},
		{"huge body", []byte(`{"type":"speech","text":"` + strings.Repeat("x", MaxBody) + `"}`), CodeTooLarge, 413},
		{"unknown type", Event{Type: "shout", At: epoch + 9500}, CodeBadEvent, 422},
		{"no label", Event{Type: "speech", Start: epoch + 9500, End: epoch + 9900}, CodeBadEvent, 422},
		{"end before start", Event{Type: "speech", Label: "B", Start: epoch + 9900, End: epoch + 9500}, CodeBadEvent, 422},
		{"bad confidence", Event{Type: "speech", Label: "B", Start: epoch + 9500, End: epoch + 9900, Confidence: 2000}, CodeBadEvent, 422},
		{"unknown field", []byte(`{"type":"tick","at":1791936010000,"voice_id":"x"}`), CodeBadRequest, 400},
		{"not JSON", []byte(`{"type":`), CodeBadRequest, 400},
	}
	for _, c := range cases {
		var p Problem
		if code := r.do("POST", "/meetings/"+id+"/events", c.body, &p); code != c.st || p.Code != c.code {
			t.Errorf("%s: %d %+v, want %d %s", c.name, code, p, c.st, c.code)
		}
		r.do("GET", "/meetings/"+id, nil, &after)
		bj, _ := json.Marshal(before)
		aj, _ := json.Marshal(after)
		if !bytes.Equal(bj, aj) {
			t.Errorf("%s changed the state:\n%s\n%s", c.name, bj, aj)
		}
	}
	if code := r.do("GET", "/meetings/zz/records", nil, &p); code != 404 || p.Code != CodeNotFound {
		t.Errorf("bad id: %d %+v", code, p)
	}
	if code := r.do("GET", "/meetings/"+id+"/records?at=-1", nil, &p); code != 400 {
		t.Errorf("negative at: %d", code)
	}
}

// "Erase me" (Def 2.6) removes the voice from the event log on disk, and
// the log does not outlive the schedule's last step (§7.9).
func TestEventLogEraseAndLifetime(t *testing.T) {
	r := newRig(t)
	idStr := r.start(StartOptions{Start: epoch})
	feed(r, idStr, []Event{
		{Type: "speech", Label: "A", Start: epoch + 1000, End: epoch + 3000, Confidence: 950, Text: "We ship in Q4."},
		{Type: "speech", Label: "B", Start: epoch + 4000, End: epoch + 6000, Confidence: 950, Text: "I doubt it."},
		{Type: "speech", Label: "C", Start: epoch + 7000, End: epoch + 8000, Confidence: 950, Text: "Me too."},
		{Type: "speech", Label: "B", Start: epoch + 9000, End: epoch + 11_000, Confidence: 950, Text: "Erase me."},
	})
	r.do("POST", "/meetings/"+idStr+"/end", nil, nil)
	id, _ := ParseID(idStr)
	readLog := func() (string, bool) {
		var log string
		found := false
		r.store.Scan(context.Background(), append(id[:], itemLog), func(c meetstore.Copy) error {
			log, found = log+string(c.Plain), true
			return nil
		})
		return log, found
	}
	log, ok := readLog()
	if !ok {
		t.Fatal("no event log kept")
	}
	if !strings.Contains(log, "filed v1") || !strings.Contains(log, "filed v3") {
		t.Errorf("the log lacks the other voices:\n%s", log)
	}
	if strings.Contains(log, "v2") {
		t.Errorf("the erased voice is still in the log on disk:\n%s", log)
	}
	var recs struct{ Records []RecordView }
	r.do("GET", "/meetings/"+idStr+"/records", nil, &recs)
	for _, rec := range recs.Records {
		if strings.Contains(rec.Text, "doubt") || rec.Voice == "v2" {
			t.Errorf("the erased voice is readable: %+v", rec)
		}
	}
	const d = int64(86400_000)
	r.clock.SetMS(epoch + 364*d)
	r.store.Forget(context.Background())
	if _, ok := readLog(); !ok {
		t.Errorf("the log is gone before the last step")
	}
	r.clock.SetMS(epoch + 365*d)
	r.store.Forget(context.Background())
	if _, ok := readLog(); ok {
		t.Errorf("the log outlives the last step of the schedule")
	}
}

// Replay gives the outcomes of the pure engine and the §8.4 note.
func TestReplay(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "roadmap-en.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Replay(StartOptions{}, f)
	if err != nil {
		t.Fatal(err)
	}
	want := pure(t, "en", readTranscript(t, filepath.Join("testdata", "roadmap-en.jsonl")))
	gj, _ := json.Marshal(got.Results)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Errorf("replay outcomes differ from the engine's")
	}
	golden, _ := os.ReadFile(filepath.Join("..", "..", "sessions", "testdata", "roadmap-note.md"))
	if got.Note == nil || got.Note.Text != string(golden) {
		t.Errorf("replay note differs")
	}
	// A transcript that never ends is ended at its last event.
	short := `{"type":"speech","label":"A","start":1791936001000,"end":1791936002000,"confidence":950,"text":"Hello."}
{"type":"tick","at":1791936005000}
`
	got, err = Replay(StartOptions{}, strings.NewReader(short))
	if err != nil || got.Note == nil || !strings.Contains(got.Note.Text, "- v1: Hello.") {
		t.Fatalf("%v %+v", err, got)
	}
	for name, c := range map[string]struct {
		in   string
		code Code
	}{
		"out of order": {`{"type":"tick","at":1791936005000}` + "\n" + `{"type":"tick","at":1791936004000}`, CodeOutOfOrder},
		"unknown":      {`{"type":"shout","at":1}`, CodeBadEvent},
		"bad json":     {`{"type":`, CodeBadRequest},
		"long line":    {`{"type":"speech","text":"` + strings.Repeat("x", MaxBody+10) + `"}`, CodeTooLarge},
	} {
		if _, err := Replay(StartOptions{}, strings.NewReader(c.in)); CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	if _, err := Replay(StartOptions{Profile: "nope"}, strings.NewReader("")); CodeOf(err) != CodeUnknownProfile {
		t.Errorf("unknown profile: %v", err)
	}
}

// The transcripts an open meeting holds in RAM are bounded.
func TestTranscriptBudget(t *testing.T) {
	r := newRig(t)
	svc, err := New(Options{Store: r.store, Clock: r.clock, MaxTexts: 20, MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := svc.Start(ctx, StartOptions{Start: epoch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(ctx, StartOptions{Start: epoch}); CodeOf(err) != CodeTooMany {
		t.Errorf("second meeting over MaxOpen: %v", err)
	}
	if _, err := svc.Step(ctx, id, Event{Type: "speech", Label: "A", Start: epoch + 1, End: epoch + 2, Text: "twelve bytes"}); err != nil {
		t.Fatal(err)
	}
	before, _ := svc.State(ctx, id)
	if _, err := svc.Step(ctx, id, Event{Type: "speech", Label: "A", Start: epoch + 3, End: epoch + 4, Text: "twelve bytes"}); CodeOf(err) != CodeTooLarge {
		t.Errorf("over the budget: %v", err)
	}
	if after, _ := svc.State(ctx, id); after.Events != before.Events || after.Segments != before.Segments {
		t.Errorf("a refused event changed the meeting")
	}
}

// An event heard after G of silence ends the meeting at the gap and is
// refused; the meeting's note is then readable.
func TestGapEndsTheMeeting(t *testing.T) {
	r := newRig(t)
	id := r.start(StartOptions{Start: epoch})
	feed(r, id, []Event{{Type: "speech", Label: "A", Start: epoch + 1000, End: epoch + 2000, Confidence: 950, Text: "Hello."}})
	var p Problem
	late := Event{Type: "speech", Label: "B", Start: epoch + 2000 + 600_000, End: epoch + 2000 + 601_000, Confidence: 950, Text: "Anyone?"}
	if code := r.do("POST", "/meetings/"+id+"/events", late, &p); code != 409 || p.Code != CodeEnded {
		t.Fatalf("event after the gap: %d %+v", code, p)
	}
	var n NoteView
	if code := r.do("GET", "/meetings/"+id+"/note", nil, &n); code != 200 || !strings.Contains(n.Text, "- v1: Hello.") || strings.Contains(n.Text, "Anyone") {
		t.Errorf("note after the gap: %d\n%s", code, n.Text)
	}
	var c ClosedView
	if code := r.do("GET", "/meetings/"+id, nil, &c); code != 200 || c.Open || c.Voices != 1 {
		t.Errorf("closed meeting: %d %+v", code, c)
	}
}
