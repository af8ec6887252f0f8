package classroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/classroom"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// notWordRune separates the words of a text: base64url and hex strings,
// ids and names are each one word.
func notWordRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

// The class endpoints over HTTP on real listeners, two laptops syncing
// over libp2p: the teacher starts a class and enrols Ana by her code; a
// preview signs nothing and a confirmation signs exactly what it showed
// (a stale one is refused); closing plans the determination the rule
// allows and signs it only as shown; the address book is a file of mode
// 0600 that no envelope repeats.
func TestClassEndpoints(t *testing.T) {
	ctx := context.Background()
	laps := room(t, 2)
	teacher, ana := laps[0], laps[1]
	tok := teacher.page.Token()
	at := func(l *laptop, p string) string { return l.srv.URL + "/classroom/v0/" + p }

	code, a := post(t, at(teacher, "start"), tok, teacher.srv.URL, map[string]string{"label": "Civics"})
	if code != 200 || len(a["receipts"].([]any)) != 3 || a["simulation"] != true {
		t.Fatalf("start: %d %v", code, a)
	}
	sid, err := dag.ParseID(a["made"].(string))
	if err != nil {
		t.Fatal(err)
	}
	space := sid.String()

	// Enrolment codes: the student's page carries its own.
	anaCode := classroom.EnrolCode(ana.key.Key(), ana.sync.ID().String())
	if _, body, _ := getText(t, ana.srv.URL+"/"); !strings.Contains(body, `name="witan-code" content="`+anaCode+`"`) {
		t.Fatalf("ana's page lacks her code %s", anaCode)
	}
	for name, code := range map[string]string{"not a key": "hello", "a path": ana.key.Key().String() + "@/ip4/1.2.3.4"} {
		if st, a := post(t, at(teacher, "enrol"), tok, "", map[string]string{"session": space, "code": code, "name": "x"}); st != 400 || a["code"] != "schema" {
			t.Errorf("enrol with %s: %d %v", name, st, a)
		}
	}
	// Pasted with a line break in it, as chat programs do.
	pasted := anaCode[:20] + "\n " + anaCode[20:]
	if st, a := post(t, at(teacher, "enrol"), tok, "", map[string]string{"session": space, "code": pasted, "name": "Ana Lopez"}); st != 200 || len(a["receipts"].([]any)) != 1 {
		t.Fatalf("enrol: %d %v", st, a)
	}
	// Again: nothing to sign, the name kept.
	if st, a := post(t, at(teacher, "enrol"), tok, "", map[string]string{"session": space, "code": anaCode, "name": "Ana"}); st != 200 || len(a["receipts"].([]any)) != 0 {
		t.Fatalf("enrol again: %d %v", st, a)
	}
	_, body, _ := getText(t, at(teacher, "names"))
	var book struct {
		Names []classroom.Name `json:"names"`
	}
	if err := json.Unmarshal([]byte(body), &book); err != nil || len(book.Names) != 1 || book.Names[0] != (classroom.Name{Key: ana.key.Key(), Name: "Ana", Peer: ana.sync.ID().String()}) {
		t.Fatalf("address book %s", body)
	}
	// The address book file, as witan up keeps it: the owner's only.
	if fi, err := os.Stat(teacher.names); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("address book file: %v %v", fi, err)
	}
	if raw, _ := os.ReadFile(teacher.names); !strings.Contains(string(raw), `"name": "Ana"`) {
		t.Fatalf("address book file: %s", raw)
	}
	// A node that restarts reads it back.
	again, err := classroom.New(classroom.Options{Node: teacher.node, API: teacher.page, Voter: teacher.key, Names: teacher.names})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(again)
	defer srv.Close()
	if _, b2, _ := getText(t, srv.URL+"/classroom/v0/names"); b2 != body {
		t.Errorf("names after a restart: %s, want %s", b2, body)
	}
	ids, _ := teacher.node.Log(ctx, space, 0, 0)
	for _, id := range ids {
		e, _ := teacher.node.Get(ctx, id)
		// A word of the entry's text, not a substring: the base64 of its
		// keys and signatures holds "Ana" at random, about once in 64³
		// places, some hundreds of them an entry.
		if words := strings.FieldsFunc(string(e.Data), notWordRune); slices.Contains(words, "Ana") || slices.Contains(words, "Lopez") {
			t.Fatalf("entry %s carries the name", id)
		}
	}

	// Ana joins and, enrolled, proposes. The preview signs nothing.
	if st, a := post(t, at(ana, "join"), ana.page.Token(), "", map[string]string{"session": space}); st != 200 {
		t.Fatalf("join: %d %v", st, a)
	}
	waitFor(t, func() bool {
		h1, _ := teacher.node.Heads(ctx, space)
		h2, _ := ana.node.Heads(ctx, space)
		return len(h1) > 0 && len(h2) == len(h1) && h2[0] == h1[0]
	}, "the class on ana's laptop")
	// Ana is no roster admin: her laptop's enrolment is refused (a signed
	// rejection) and her address book keeps no name.
	if st, a := post(t, at(ana, "enrol"), ana.page.Token(), "", map[string]string{"session": space, "code": ht.Member(7).Key().String(), "name": "Zed"}); st != 422 ||
		a["receipts"].([]any)[0].(map[string]any)["errors"].([]any)[0].(map[string]any)["code"] != "not_authorized" {
		t.Errorf("a student's enrolment: %d %v", st, a)
	}
	if _, b, _ := getText(t, at(ana, "names")); !strings.Contains(b, `"names":[]`) {
		t.Errorf("a refused enrolment kept a name: %s", b)
	}
	prop := map[string]any{"session": space, "nid": "/us/t1/s2", "text": "Phones may be used for class work.", "summary": ""}
	st, plan := post(t, at(ana, "propose"), ana.page.Token(), "", prop)
	if st != 200 || plan["diff"] != "@@ /us/t1/s2 (modified) @@\n [section] Phones\n-Phones stay in bags during lessons.\n+Phones may be used for class work.\n" ||
		plan["electorate"] != float64(2) || plan["transactions"] != float64(4) || plan["new_group"] != true {
		t.Fatalf("propose preview: %d %v", st, plan)
	}
	before, _ := ana.node.Log(ctx, space, 0, 0)
	// Confirming another plan than the one shown is refused.
	prop["sign"], prop["mr"] = true, dag.Sum([]byte("another")).String()
	if st, a := post(t, at(ana, "propose"), ana.page.Token(), "", prop); st != 422 || a["code"] != "stale_mr" {
		t.Errorf("confirming a stale plan: %d %v", st, a)
	}
	if after, _ := ana.node.Log(ctx, space, 0, 0); len(after) != len(before) {
		t.Fatalf("the preview or a stale confirmation signed %d entries", len(after)-len(before))
	}
	prop["mr"] = plan["mr"]
	st, a = post(t, at(ana, "propose"), ana.page.Token(), "", prop)
	if st != 200 || a["made"] != plan["mr"] || len(a["receipts"].([]any)) != 4 {
		t.Fatalf("propose: %d %v", st, a)
	}
	mr, _ := dag.ParseID(plan["mr"].(string))

	// A section that does not exist, and the text in force, are refused.
	for _, bad := range []map[string]any{
		{"session": space, "nid": "/us/t9", "text": "x"},
		{"session": space, "nid": "/us/t1/s3", "text": "The class meets every Monday to review these rules."},
	} {
		if st, a := post(t, at(ana, "propose"), ana.page.Token(), "", bad); st != 403 || a["code"] != "not_authorized" {
			t.Errorf("propose %v: %d %v", bad["nid"], st, a)
		}
	}

	// Closing: nothing to close with one ballot of two (1 of 2 is not more
	// than half, and approval is still possible).
	if st, a := post(t, at(ana, "vote"), ana.page.Token(), "", map[string]string{"session": space, "mr": mr.String(), "choice": "approve"}); st != 200 {
		t.Fatalf("vote: %d %v", st, a)
	}
	waitFor(t, func() bool {
		tl, err := teacher.node.Views().Tally(ctx, dag.MustParseID(space), mr)
		return err == nil && tl.Result.Tally.Approve == 1
	}, "ana's ballot at the teacher's")
	closeReq := map[string]any{"session": space, "mr": mr.String()}
	if st, a := post(t, at(teacher, "close"), tok, "", closeReq); st != 403 || !strings.Contains(a["detail"].(string), "no determination yet") {
		t.Errorf("close while pending: %d %v", st, a)
	}
	if st, a := post(t, at(teacher, "vote"), tok, "", map[string]string{"session": space, "mr": mr.String(), "choice": "reject"}); st != 200 {
		t.Fatalf("teacher's vote: %d %v", st, a)
	}
	// One approve and one reject of two: 1 of 2 can no longer be more
	// than half, so the rule rejects.
	st, cp := post(t, at(teacher, "close"), tok, "", closeReq)
	if st != 200 || cp["outcome"] != "rejected" || len(cp["ballots"].([]any)) != 2 {
		t.Fatalf("close plan: %d %v", st, cp)
	}
	closeReq["sign"], closeReq["outcome"], closeReq["ballots"] = true, "approved", 2
	if st, a := post(t, at(teacher, "close"), tok, "", closeReq); st != 403 || !strings.Contains(a["detail"].(string), "moved") {
		t.Errorf("confirming another outcome: %d %v", st, a)
	}
	closeReq["outcome"] = "rejected"
	if st, a := post(t, at(teacher, "close"), tok, "", closeReq); st != 200 || a["receipts"].([]any)[0].(map[string]any)["status"] != "accepted" {
		t.Fatalf("close: %d %v", st, a)
	}
	m, err := teacher.node.Views().MR(ctx, dag.MustParseID(space), mr)
	if err != nil || m.Status != "rejected" {
		t.Fatalf("MR after the determination: %v %v", m.Status, err)
	}
	law, _ := teacher.node.Views().Law(ctx, dag.MustParseID(space))
	tr, _ := teacher.node.Views().Snapshot(ctx, dag.MustParseID(space), law.Head)
	if n, _ := tr.Get("/us/t1/s2"); n.Text != "Phones stay in bags during lessons." {
		t.Errorf("a rejected MR changed the law: %q", n.Text)
	}
}

// postRaw posts body as JSON with the Content-Type ct and, when host is
// set, that Host header; it returns the status.
func postRaw(t testing.TB, url, token, ct, host string, body any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("X-Witan-CSRF", token)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestClassWriteGuard: every new write passes the API's front door and the
// page's guard: another origin (403 witan:forbidden), another Content-Type
// (415), a rebinding Host (403), no token or a read-only page (403
// not_authorized) are refused, and nothing is stored.
func TestClassWriteGuard(t *testing.T) {
	c := newClass(t, 2, 0)
	teacher := c.laps[0]
	ctx := context.Background()
	before, _ := teacher.node.Log(ctx, c.space, 0, 0)
	bodies := map[string]any{
		"start":   map[string]string{"label": "x"},
		"enrol":   map[string]string{"session": c.space, "code": c.laps[1].key.Key().String(), "name": "x"},
		"join":    map[string]string{"session": c.space},
		"propose": map[string]any{"session": c.space, "nid": "/us/t1/s2", "text": "x", "sign": true},
		"close":   map[string]any{"session": c.space, "mr": c.mr.String(), "sign": true},
	}
	ro := &laptop{name: "ro", key: teacher.key, node: teacher.node}
	c.serve(t, ro, true)
	for p, body := range bodies {
		url := teacher.srv.URL + "/classroom/v0/" + p
		if st, a := post(t, url, "", "", body); st != 403 || a["code"] != "not_authorized" {
			t.Errorf("%s without the token: %d %v", p, st, a)
		}
		if st, a := post(t, url, teacher.page.Token(), "http://evil.example", body); st != 403 || a["code"] != "witan:forbidden" {
			t.Errorf("%s from another origin: %d %v", p, st, a)
		}
		if st, a := post(t, ro.srv.URL+"/classroom/v0/"+p, ro.page.Token(), "", body); st != 403 || a["code"] != "not_authorized" {
			t.Errorf("%s on a read-only page: %d %v", p, st, a)
		}
		if st := postRaw(t, url, teacher.page.Token(), "text/plain", "", body); st != 415 {
			t.Errorf("%s as text/plain: %d", p, st)
		}
		if st := postRaw(t, url, teacher.page.Token(), "application/json", "evil.example", body); st != 403 {
			t.Errorf("%s to a rebinding Host: %d", p, st)
		}
	}
	if after, _ := teacher.node.Log(ctx, c.space, 0, 0); len(after) != len(before) {
		t.Fatalf("refused writes stored %d entries", len(after)-len(before))
	}
	if len(teacher.node.Replica().Sessions()) != 1 {
		t.Fatalf("a refused start made a session")
	}
}
