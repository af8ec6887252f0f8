package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/classroom"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// meetClock is the meetings' clock, moved by hand.
type meetClock struct {
	mu gosync.Mutex
	t  time.Time
}

func (c *meetClock) Now() time.Time             { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *meetClock) Add(d time.Duration)        { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func (c *meetClock) set(t time.Time) *meetClock { c.t = t; return c }

// frontDoor is what `witan up` serves: the classroom page in front of the
// API, on a real listener, over a node with meetings.
func frontDoor(t *testing.T) (*httptest.Server, *httpapi.Server, *meetClock) {
	t.Helper()
	clk := (&meetClock{}).set(time.Date(2026, 9, 21, 9, 0, 0, 0, time.UTC))
	n, err := node.Open(context.Background(), node.Options{InMemory: true, MeetingsDir: t.TempDir(), MeetingClock: clk})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{Node: n})
	if err != nil {
		t.Fatal(err)
	}
	page, err := classroom.New(classroom.Options{Node: n, API: api})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(page)
	t.Cleanup(func() { srv.Close(); n.Close() })
	return srv, api, clk
}

// doorPaths are every path the API routes (its route table, wildcards
// filled in) and the meeting API's, which the API mounts as a whole.
func doorPaths(api *httpapi.Server) []string {
	wild := regexp.MustCompile(`\{[^}]*\}`)
	var out []string
	for _, p := range httpapi.Patterns(api) {
		out = append(out, wild.ReplaceAllString(p, "x"))
	}
	for _, p := range []string{"/meetings", "/meetings/x", "/meetings/x/events", "/meetings/x/end", "/meetings/x/publish", "/meetings/x/note"} {
		out = append(out, httpapi.Base+p)
	}
	return append(out, "/classroom/v0/vote", "/classroom/v0/checkpoint", "/classroom/v0/anything")
}

// Every write door is behind the one guard: a POST from another site's
// page (Origin, Sec-Fetch-Site: cross-site, a text/plain body as a form
// sends) is refused 403 witan:forbidden on every path of the route table,
// the meeting API and the page's own endpoints included, and a POST that
// is not JSON is refused 415 wherever anything takes a POST; a request whose Host does not
// name the node is refused, the page and its peers included. A route
// added later is walked too: nothing to remember.
func TestEveryWriteDoorGuarded(t *testing.T) {
	srv, api, _ := frontDoor(t)
	paths := doorPaths(api)
	if len(paths) < 60 {
		t.Fatalf("the walk found %d paths; the route table is not being read", len(paths))
	}
	for _, p := range paths {
		st, code := sendSite(t, srv, "POST", p, "", "http://evil.example", "cross-site", "text/plain", `{"profile":"goldfish-v01"}`)
		if st != http.StatusForbidden || code != httpapi.CodeForbidden {
			t.Errorf("cross-site POST %s: %d %s, want 403 %s", p, st, code, httpapi.CodeForbidden)
		}
		// Not JSON: refused 415, or 405 where the route takes no POST at
		// all; never served.
		st, code = sendSite(t, srv, "POST", p, "", "", "", "text/plain", `{"profile":"goldfish-v01"}`)
		if (st != http.StatusUnsupportedMediaType || code != httpapi.CodeUnsupportedMediaType) &&
			(st != http.StatusMethodNotAllowed || code != httpapi.CodeMethodNotAllowed) {
			t.Errorf("text/plain POST %s: %d %s, want 415 %s (or 405)", p, st, code, httpapi.CodeUnsupportedMediaType)
		}
	}
	for _, p := range append(paths, "/", "/assets/x") {
		st, code := sendSite(t, srv, "GET", p, "rebind.attacker.example", "", "", "", "")
		if st != http.StatusForbidden || code != httpapi.CodeForbidden {
			t.Errorf("GET %s with Host rebind.attacker.example: %d %s, want 403 %s", p, st, code, httpapi.CodeForbidden)
		}
	}
	// The node's own clients still get through.
	if st, code := sendSite(t, srv, "GET", "/classroom/v0/peers", "", "", "", "", ""); st != http.StatusBadRequest || code != dag.CodeSchema {
		t.Errorf("GET /classroom/v0/peers with no session: %d %s, want 400 %s", st, code, dag.CodeSchema)
	}
	if st, _ := sendSite(t, srv, "GET", "/", "", "", "", "", ""); st != http.StatusOK {
		t.Errorf("GET /: %d", st)
	}
}

// Paths with "//", "." or ".." get one answer wherever they point: 301
// problem+json witan:path_not_clean with the clean path in Location,
// never a redirect in text/html.
func TestUncleanPathsOneAnswer(t *testing.T) {
	srv, _, _ := frontDoor(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]string{
		"/oth/v0//sessions":          "/oth/v0/sessions",
		"/oth/v0/x/../sessions":      "/oth/v0/sessions",
		"/classroom/v0/./peers":      "/classroom/v0/peers",
		"//":                         "/",
		"/oth/v0/meetings/../heads":  "/oth/v0/heads",
		"/assets/../oth/v0/sessions": "/oth/v0/sessions",
	} {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Content-Type") != httpapi.ContentTypeProblem ||
			resp.Header.Get("Location") != want || !regexp.MustCompile(`"code":"witan:path_not_clean"`).Match(b) {
			t.Errorf("GET %s: %d %s Location %q %s, want 301 problem witan:path_not_clean to %s",
				path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location"), b, want)
		}
	}
}

// A web page cannot lock the user out of meetings: its cross-site starts
// are refused, one client holds at most MaxOpenPerClient meetings at
// once, and a meeting idle for IdleAfter ends, freeing its slot.
func TestMeetingsCannotBeLockedOut(t *testing.T) {
	srv, _, clk := frontDoor(t)
	start := httpapi.Base + "/meetings"
	for range 20 {
		if st, code := sendSite(t, srv, "POST", start, "", "http://evil.example", "cross-site", "text/plain", `{}`); st != http.StatusForbidden {
			t.Fatalf("cross-site meeting start: %d %s, want 403", st, code)
		}
	}
	for i := range 4 {
		if st, code := sendSite(t, srv, "POST", start, "", "", "", "application/json", `{}`); st != http.StatusCreated {
			t.Fatalf("start %d: %d %s, want 201", i+1, st, code)
		}
	}
	// One client (this one) holds its four: a fifth waits.
	if st, code := sendSite(t, srv, "POST", start, "", "", "", "application/json", `{}`); st != http.StatusTooManyRequests || code != "witan:too_many_meetings" {
		t.Fatalf("fifth start of one client: %d %s, want 429 witan:too_many_meetings", st, code)
	}
	// Left idle, they end.
	clk.Add(31 * time.Minute)
	if st, code := sendSite(t, srv, "POST", start, "", "", "", "application/json", `{}`); st != http.StatusCreated {
		t.Fatalf("start after the idle ones expired: %d %s, want 201", st, code)
	}
}

// sendSite sends a request as a browser might, with Host, Origin and
// Sec-Fetch-Site when given, and returns the status and problem code.
func sendSite(t *testing.T, srv *httptest.Server, method, path, host, origin, site, ctype, body string) (int, dag.Code) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = stringsReader(body)
	}
	hr, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		hr.Host = host
	}
	for k, v := range map[string]string{"Origin": origin, "Sec-Fetch-Site": site, "Content-Type": ctype} {
		if v != "" {
			hr.Header.Set(k, v)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`"code":"([^"]*)"`).FindSubmatch(b)
	if m == nil {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, dag.Code(m[1])
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
