package classroom_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestPageServed: "/" is the page, with the notice, its CSRF token and a
// strict content security policy; its assets are embedded; everything
// else reaches the API.
func TestPageServed(t *testing.T) {
	c := newClass(t, 2, 1)
	ana := c.laps[1]
	code, body, h := getText(t, ana.srv.URL+"/")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", code, h.Get("Content-Type"))
	}
	for _, want := range []string{"Not for use in real elections or governance", `content="` + ana.page.Token() + `"`, `content="` + ana.key.Key().String() + `"`, "/assets/app.js"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET / lacks %q", want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for path, ct := range map[string]string{"/assets/app.js": "text/javascript", "/assets/app.css": "text/css"} {
		if code, _, h := getText(t, ana.srv.URL+path); code != 200 || !strings.HasPrefix(h.Get("Content-Type"), ct) {
			t.Errorf("GET %s: %d %s", path, code, h.Get("Content-Type"))
		}
	}
	for _, path := range []string{"/assets/index.html", "/assets/nope.js", "/assets/../classroom.go", "/classroom/v0/nope"} {
		if code, _, _ := getText(t, ana.srv.URL+path); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	if code, body, _ := getText(t, ana.srv.URL+"/oth/v0/sessions"); code != 200 || !strings.Contains(body, c.space) {
		t.Errorf("the API behind the page: %d %s", code, body)
	}
}

// TestVoteFromPage: the node signs the ballot with the voter's key (the
// envelope's author), submits it through its write path and answers with
// its signed receipt; voting again supersedes the first ballot (two
// unlinked ballots would void the member, D10), so the tally counts the
// second choice once.
func TestVoteFromPage(t *testing.T) {
	c := newClass(t, 2, 1)
	ana := c.laps[1]
	ctx := context.Background()
	url := ana.srv.URL + "/classroom/v0/vote"
	code, a := post(t, url, ana.page.Token(), ana.srv.URL, map[string]string{"session": c.space, "mr": c.mr.String(), "choice": "approve"})
	if code != 200 {
		t.Fatalf("vote: %d %v", code, a)
	}
	first := checkVote(t, a, ana.node.Replica().NodeKey(), ana.key.Key(), c.mr, "approve", dag.ID{})
	code, a = post(t, url, ana.page.Token(), "", map[string]string{"session": c.space, "mr": c.mr.String(), "choice": "reject"})
	if code != 200 {
		t.Fatalf("second vote: %d %v", code, a)
	}
	checkVote(t, a, ana.node.Replica().NodeKey(), ana.key.Key(), c.mr, "reject", first)
	tl, err := ana.node.Views().Tally(ctx, dag.MustParseID(c.space), c.mr)
	if err != nil {
		t.Fatal(err)
	}
	if got := tl.Result.Tally; got.Approve != 0 || got.Reject != 1 || got.Void != 0 || got.Electorate != 2 {
		t.Fatalf("tally after approve then reject: %+v, want 0 approve, 1 reject, none void, of 2", got)
	}
}

// checkVote checks a vote answer and returns the ballot's tx id.
func checkVote(t *testing.T, a map[string]any, nodeKey, voter dag.Key, mr dag.ID, choice string, supersedes dag.ID) dag.ID {
	t.Helper()
	if a["simulation"] != true || a["finality"] != "provisional" {
		t.Fatalf("vote answer labels: %v", a)
	}
	raw, _ := json.Marshal(a["receipt"])
	rc, err := httpapi.DecodeReceipt(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Verify(); err != nil || rc.Node != nodeKey || rc.Status != "accepted" {
		t.Fatalf("receipt %s: %v", raw, err)
	}
	envRaw, _ := json.Marshal(a["envelope"])
	env, _, id, err := dag.DecodeEnvelope(envRaw)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.VerifySignature(); err != nil {
		t.Fatalf("ballot signature: %v", err)
	}
	if id != rc.Tx || env.Author != voter || env.Type != dag.TxBallotCast {
		t.Fatalf("ballot %s by %s, receipt for %s", env.Type, env.Author, rc.Tx)
	}
	var body struct {
		MR         dag.ID  `json:"mr"`
		Choice     string  `json:"choice"`
		Supersedes *dag.ID `json:"supersedes"`
	}
	if err := json.Unmarshal(env.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.MR != mr || body.Choice != choice || (body.Supersedes == nil) != !supersedes.Valid() ||
		(body.Supersedes != nil && *body.Supersedes != supersedes) {
		t.Fatalf("ballot body %s, want %s superseding %v", env.Body, choice, supersedes)
	}
	return id
}

// TestWriteGuard: a write without the page's token, with another's token,
// to a non-loopback Host (DNS rebinding), or to a read-only page is
// refused with not_authorized, one from another origin with the API's
// witan:forbidden (the front door every request passes first); a bad body is schema;
// an unknown MR is 404; and nothing refused is stored.
func TestWriteGuard(t *testing.T) {
	c := newClass(t, 2, 1)
	ana := c.laps[1]
	ctx := context.Background()
	before, _ := ana.node.Log(ctx, c.space, 0, 0)
	url := ana.srv.URL + "/classroom/v0/vote"
	good := map[string]string{"session": c.space, "mr": c.mr.String(), "choice": "approve"}
	// Another token of the same length: its first character differs from
	// the page's whatever that character is (a fixed "x" would equal the
	// page's token one time in 64).
	tok := ana.page.Token()
	wrong := "x" + tok[1:]
	if tok[0] == 'x' {
		wrong = "y" + tok[1:]
	}
	for name, tc := range map[string]struct {
		token, origin string
		body          any
		status        int
		code          string
	}{
		"no token":      {"", "", good, 403, "not_authorized"},
		"wrong token":   {wrong, "", good, 403, "not_authorized"},
		"other origin":  {ana.page.Token(), "http://evil.example", good, 403, "witan:forbidden"}, // the API's front door
		"bad choice":    {ana.page.Token(), "", map[string]string{"session": c.space, "mr": c.mr.String(), "choice": "yes"}, 400, "schema"},
		"unknown field": {ana.page.Token(), "", map[string]string{"session": c.space, "mr": c.mr.String(), "choice": "approve", "as": "teacher"}, 400, "schema"},
		"bad session":   {ana.page.Token(), "", map[string]string{"session": "nope", "mr": c.mr.String(), "choice": "approve"}, 400, "schema"},
		"unknown mr":    {ana.page.Token(), "", map[string]string{"session": c.space, "mr": dag.Sum([]byte("x")).String(), "choice": "approve"}, 404, "witan:not_found"},
		"huge body":     {ana.page.Token(), "", map[string]string{"session": c.space, "mr": strings.Repeat("a", 8000), "choice": "approve"}, 413, "witan:request_too_large"},
	} {
		code, a := post(t, url, tc.token, tc.origin, tc.body)
		if code != tc.status || a["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", name, code, a, tc.status, tc.code)
		}
	}
	// DNS rebinding: the request reaches loopback but names another host.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Witan-CSRF", ana.page.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("rebinding Host: %d, want 403", resp.StatusCode)
	}
	// A read-only page: no token in the page, every write refused.
	ro := &laptop{name: "ro", key: ana.key, node: ana.node}
	c.serve(t, ro, true)
	if _, body, _ := getText(t, ro.srv.URL+"/"); strings.Contains(body, ro.page.Token()) || !strings.Contains(body, `name="witan-readonly" content="true"`) {
		t.Errorf("read-only page carries a token or no read-only mark")
	}
	for _, p := range []string{"/classroom/v0/vote", "/classroom/v0/checkpoint"} {
		if code, a := post(t, ro.srv.URL+p, ro.page.Token(), "", good); code != 403 || a["code"] != "not_authorized" {
			t.Errorf("read-only %s: %d %v", p, code, a)
		}
	}
	after, _ := ana.node.Log(ctx, c.space, 0, 0)
	if len(after) != len(before) {
		t.Fatalf("refused writes stored %d entries", len(after)-len(before))
	}
}

// TestCheckpointAndPeers: the teacher's checkpoint endpoint signs a
// checkpoint of the whole log; the peers endpoint lists the connected
// laptop as up to date as soon as it caught up from the teacher's (it
// pulled the teacher's heads: the student's own announcements of them
// are mostly suppressed, and waiting for one took up to 13 s of 500 ms
// periods), and as behind by one after the teacher's node takes an entry
// the student's has not.
func TestCheckpointAndPeers(t *testing.T) {
	c := newClass(t, 2, 0)
	teacher := c.laps[0]
	ctx := context.Background()
	log, _ := teacher.node.Log(ctx, c.space, 0, 0)
	code, a := post(t, teacher.srv.URL+"/classroom/v0/checkpoint", teacher.page.Token(), "", map[string]string{"session": c.space})
	if code != 200 || a["finality"] != "final_advisory" || a["checkpoint"].(map[string]any)["size"] != float64(len(log)) {
		t.Fatalf("checkpoint: %d %v", code, a)
	}
	peers := func() map[string]any {
		var m map[string]any
		_, body, _ := getText(t, teacher.srv.URL+"/classroom/v0/peers?session="+c.space)
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// The class has converged (newClass): the student's laptop is listed
	// up to date at once, give or take a loaded machine; what the
	// teacher saw last, and what the student holds, if it is not.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		last := peers()
		ps := last["peers"].([]any)
		if len(ps) == 1 && ps[0].(map[string]any)["announced"] == true && ps[0].(map[string]any)["behind"] == float64(0) {
			break
		}
		if time.Now().After(deadline) {
			sl, _ := c.laps[1].node.Log(ctx, c.space, 0, 0)
			sh, _ := c.laps[1].node.Heads(ctx, c.space)
			th, _ := teacher.node.Heads(ctx, c.space)
			t.Fatalf("timed out waiting for the student's laptop listed up to date: the teacher's page says %v; the student holds %d entries of %d, heads %v (the teacher's %v)", last, len(sl), len(log), sh, th)
		}
	}
	for q, want := range map[string]int{"session=nope": 400, "": 400, "session=" + dag.Sum([]byte("none")).String(): 404} {
		if code, _, _ := getText(t, teacher.srv.URL+"/classroom/v0/peers?"+q); code != want {
			t.Errorf("peers?%s: %d, want %d", q, code, want)
		}
	}
	// The student's laptop stops syncing; the teacher votes.
	c.laps[1].sync.Close()
	c.ballot(t, teacher, "approve")
	m := peers()
	if m["log_size"] != float64(len(log)+1) || m["simulation"] != true {
		t.Fatalf("log_size %v", m["log_size"])
	}
	for _, p := range m["peers"].([]any) {
		if p.(map[string]any)["behind"] != float64(1) {
			t.Fatalf("after a ballot the student has not: %v", p)
		}
	}
}
