package node_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/meeting"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// epoch is the simulator's clock start of §8.4, 2026-10-14 00:00 UTC.
const epoch = int64(1791936000000)

type meetClock struct {
	mu gosync.Mutex
	t  time.Time
}

func (c *meetClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *meetClock) SetMS(ms int64) { c.mu.Lock(); c.t = time.UnixMilli(ms).UTC(); c.mu.Unlock() }

func openMeetingNode(t *testing.T, dir string, c *meetClock) *node.Node {
	t.Helper()
	n, err := node.Open(context.Background(), node.Options{InMemory: true, MeetingsDir: dir, MeetingClock: c})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func transcript(t *testing.T, locale string) []meeting.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "meeting", "testdata", "roadmap-"+locale+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []meeting.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev meeting.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// answers keeps every answer of call, for the check that none carries a
// label or a statement time.
var (
	answersMu gosync.Mutex
	answers   [][]byte
)

func call(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	answersMu.Lock()
	answers = append(answers, b)
	answersMu.Unlock()
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, b)
		}
	}
	return resp.StatusCode
}

// The §8.4 roadmap session fed over HTTP to a real node gives the note of
// §8.4 and the same outcomes as the pure engine; the note survives a
// restart, and after the midnight that ends the Attributed section's keep
// its key is gone across the restart.
func TestMeetingOverNodeHTTP(t *testing.T) {
	for _, locale := range []string{"en", "es"} {
		t.Run(locale, func(t *testing.T) {
			dir := t.TempDir()
			c := &meetClock{}
			c.SetMS(epoch)
			n := openMeetingNode(t, dir, c)
			srv, err := httpapi.New(httpapi.Options{Node: n})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			base := hs.URL + httpapi.Base
			var st meeting.StateView
			if code := call(t, "POST", base+"/meetings", meeting.StartOptions{Locale: locale, Start: epoch}, &st); code != 201 {
				t.Fatalf("start: %d", code)
			}
			evs := transcript(t, locale)
			var got []meeting.Result
			for _, ev := range evs {
				var a meeting.EventsAnswer
				if code := call(t, "POST", base+"/meetings/"+st.ID+"/events", ev, &a); code != 200 {
					t.Fatalf("event: %d", code)
				}
				got = append(got, a.Results...)
			}
			f, _ := os.Open(filepath.Join("..", "meeting", "testdata", "roadmap-"+locale+".jsonl"))
			want, err := meeting.Replay(meeting.StartOptions{Locale: locale}, f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want.Results)
			if !bytes.Equal(gj, wj) {
				t.Errorf("outcomes over the node differ from the pure engine's")
			}
			var note meeting.NoteView
			if code := call(t, "GET", base+"/meetings/"+st.ID+"/note", nil, &note); code != 200 {
				t.Fatalf("note: %d", code)
			}
			if note.Text != want.Note.Text {
				t.Errorf("the node's note differs from the engine's:\n%s", note.Text)
			}
			if locale == "en" {
				golden, _ := os.ReadFile(filepath.Join("..", "..", "sessions", "testdata", "roadmap-note.md"))
				if note.Text != string(golden) {
					t.Errorf("note differs from §8.4's:\n%s", note.Text)
				}
			}
			dates := []string{"2027-10-14", "2026-11-13", "2026-10-17"}
			if len(note.Sections) != 3 {
				t.Fatalf("%d sections", len(note.Sections))
			}
			for i, s := range note.Sections {
				if s.KeptUntil != dates[i] {
					t.Errorf("%s kept until %s, want %s", s.Title, s.KeptUntil, dates[i])
				}
			}

			// Publishing is explicit and says what it means.
			var pub meeting.Published
			if code := call(t, "POST", base+"/meetings/"+st.ID+"/publish", map[string]string{"space": "notes"}, &pub); code != 201 || pub.Warning != meeting.PublishWarning || pub.Ref == "" {
				t.Fatalf("publish: %d %+v", code, pub)
			}
			if !strings.Contains(pub.Warning, "can no longer be forgotten by this node alone") {
				t.Errorf("warning %q", pub.Warning)
			}
			var heads struct{ Heads []string }
			call(t, "GET", base+"/memory/notes/heads", nil, &heads)
			if len(heads.Heads) != 1 || heads.Heads[0] != pub.Ref {
				t.Errorf("memory space heads %v, want [%s]", heads.Heads, pub.Ref)
			}
			hs.Close()
			n.Close()
			answersMu.Lock()
			walked := answers
			answers = nil
			answersMu.Unlock()
			for _, b := range walked {
				for _, ev := range evs {
					for _, f := range []string{`"` + ev.Label + `"`, strconv.FormatInt(ev.Start, 10), strconv.FormatInt(ev.End, 10)} {
						if f != `""` && f != "0" && bytes.Contains(b, []byte(f)) {
							t.Errorf("an answer of the node carries %s: %s", f, b)
						}
					}
				}
			}

			// Restart: the note reads the same.
			n = openMeetingNode(t, dir, c)
			svc, _ := n.Meetings()
			id, _ := meeting.ParseID(st.ID)
			if again, err := svc.Note(context.Background(), id, 0); err != nil || again.Text != note.Text {
				t.Errorf("after a restart: %v\n%s", err, again.Text)
			}
			// 2026-10-17 00:00 ends the level-3 copies' keep (filed on
			// day 10-14, keep 3 d); forget, restart, and Attributed is gone
			// while Gist and Outcomes remain.
			c.SetMS(epoch + 3*86400_000)
			if err := n.ForgetMeetings(context.Background()); err != nil {
				t.Fatal(err)
			}
			n.Close()
			n = openMeetingNode(t, dir, c)
			defer n.Close()
			svc, _ = n.Meetings()
			later, err := svc.Note(context.Background(), id, epoch+3*86400_000)
			if err != nil || len(later.Sections) != 2 || later.Sections[1].Title != "Gist" {
				t.Errorf("after 3 d: %v %+v", err, later.Sections)
			}
			recs, _ := svc.Records(context.Background(), id, epoch+3*86400_000)
			for _, r := range recs {
				if r.Level > 2 || r.Voice != "" {
					t.Errorf("record %+v reads above 2 after 3 d", r)
				}
			}
		})
	}
}

// recorder is a peer's sync.Local that keeps every item it receives.
type recorder struct {
	*node.Node
	mu    gosync.Mutex
	items [][]byte
}

func (r *recorder) Ingest(ctx context.Context, space string, items []sync.Item) (sync.IngestResult, error) {
	r.mu.Lock()
	for _, it := range items {
		b := append([]byte(space+"\n"), it.Data...)
		for _, o := range it.Objects {
			b = append(b, o.Data...)
		}
		r.items = append(r.items, b)
	}
	r.mu.Unlock()
	return r.Node.Ingest(ctx, space, items)
}

func (r *recorder) received() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.items...)
}

// No meeting data ever leaves the node through sync: a peer syncing over
// real libp2p on loopback receives nothing of a meeting, and of a
// published note exactly the one block of its Outcomes.
func TestMeetingDataNeverSyncs(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p on loopback")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &meetClock{}
	c.SetMS(epoch)
	a := openMeetingNode(t, t.TempDir(), c)
	defer a.Close()
	svc, _ := a.Meetings()
	id, err := svc.Start(ctx, meeting.StartOptions{Start: epoch})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range transcript(t, "en") {
		if _, err := svc.Step(ctx, id, ev); err != nil {
			t.Fatal(err)
		}
	}
	// A memory space of a's own, so that the peer has something to sync.
	if _, err := svc.PublishOutcomes(ctx, id, "notes"); err != nil {
		t.Fatal(err)
	}
	bn, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bn.Close()
	b := &recorder{Node: bn}

	sa, err := sync.NewNode(ctx, a, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := sync.NewNode(ctx, b, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if err := sb.Connect(ctx, sa.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	// The peer asks for every space a holds, and for names a meeting
	// might hide under.
	spaces, err := a.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asked := append(spaces, "meetings", "mem:meetings", "meeting:"+id.String(), id.String())
	var in uint64
	for _, sp := range asked {
		st, err := sb.SyncWith(ctx, sa.ID(), sp)
		if err != nil {
			t.Logf("sync %s: %v", sp, err)
			continue
		}
		in += st.BytesIn
	}
	got := b.received()
	if in == 0 {
		t.Fatal("nothing crossed the wire: the check would be vacuous")
	}
	if len(got) != 1 || !bytes.HasPrefix(got[0], []byte("mem:notes\n")) ||
		!bytes.Contains(got[0], []byte("the importer ships in Q4")) {
		t.Fatalf("the peer received %d items, want exactly the published Outcomes block: %q", len(got), got)
	}
	// Nothing beyond the Outcomes: no attribution, no level-0 aside, no
	// label, no statement time.
	forbidden := []string{"v1:", "v5:", "vendor is late", "Between us", "Alice", "Dana", "happy to be named"}
	for _, ev := range transcript(t, "en") {
		for _, ms := range []int64{ev.Start, ev.End, ev.At} {
			if ms != 0 {
				forbidden = append(forbidden, strconv.FormatInt(ms, 10))
			}
		}
	}
	for _, f := range forbidden {
		if bytes.Contains(got[0], []byte(f)) {
			t.Errorf("the peer received %q", f)
		}
	}
}
