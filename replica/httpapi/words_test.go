package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// inUsersWords fails if a detail names Go types or witan's packages.
func inUsersWords(t *testing.T, what, detail string) {
	t.Helper()
	for _, bad := range []string{"Go value", "Go struct", "httpapi.", "replica: ", "dag: ", "house: ", "json: "} {
		if strings.Contains(detail, bad) {
			t.Errorf("%s: detail %q names %q", what, detail, bad)
		}
	}
}

// Errors on the wire are in the user's words: JSON's kinds, not Go's
// types; no package prefixes; an envelope for a session the node does not
// hold says the session is unknown; a second group of the same id says it
// exists.
func TestErrorsInUsersWords(t *testing.T) {
	n := newNode(t)
	s := n.newSession(t)
	tx := httpapi.Base + "/transactions"
	p := n.problem(t, "POST", tx, "application/json", strings.NewReader(`[]`), 400, dag.CodeSchema)
	d, _ := p["detail"].(string)
	inUsersWords(t, "array body", d)
	if d != "the body must be a JSON object, not an array" {
		t.Errorf("array body: %q", d)
	}
	p = n.problem(t, "POST", tx, "application/json", strings.NewReader(`{"envelope":`), 400, dag.CodeSchema)
	inUsersWords(t, "cut body", p["detail"].(string))
	unknown := dag.Sum([]byte("nothing")).String()
	p = n.problem(t, "GET", httpapi.Base+"/objects/"+unknown, "", nil, 404, httpapi.CodeNotFound)
	inUsersWords(t, "unknown object", p["detail"].(string))
	p = n.problem(t, "GET", httpapi.Base+"/log?session="+unknown, "", nil, 404, httpapi.CodeNotFound)
	inUsersWords(t, "unknown session", p["detail"].(string))

	// A group.create in a session this node has never heard of.
	other := ht.New(ht.Options{Simulation: true, Label: "elsewhere"})
	_, err := n.c.Submit(context.Background(), other.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), other.Create.ID).Bytes, nil)
	var pe *httpapi.Error
	if !errors.As(err, &pe) {
		t.Fatalf("unknown session: %v", err)
	}
	inUsersWords(t, "envelope of an unknown session", pe.Problem.Detail)
	if !strings.Contains(pe.Problem.Detail, "unknown session") {
		t.Errorf("envelope of an unknown session: %s", err)
	}
	// The roster again.
	_, err = n.c.Submit(context.Background(), s.b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), s.last).Bytes, nil)
	if !errors.As(err, &pe) || !strings.Contains(pe.Problem.Detail, `group "roster" already exists`) {
		t.Errorf("duplicate group: %v", err)
	}
	inUsersWords(t, "duplicate group", pe.Problem.Detail)
}

// Every error is problem+json, also headers too large (431) and the
// redirect of a path that is not clean (301, with Location).
func TestHeadersAndUncleanPathAreProblems(t *testing.T) {
	n := newNode(t)
	n.newSession(t)
	req, _ := http.NewRequest("GET", n.srv.URL+httpapi.Base+"/heads", nil)
	req.Header.Set("X-Big", strings.Repeat("a", httpapi.MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 431 || resp.Header.Get("Content-Type") != httpapi.ContentTypeProblem {
		t.Fatalf("big headers: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Get(n.srv.URL + httpapi.Base + "//heads")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Content-Type") != httpapi.ContentTypeProblem ||
		resp.Header.Get("Location") != httpapi.Base+"/heads" || !strings.Contains(string(b), `"code":"witan:path_not_clean"`) {
		t.Fatalf("unclean path: %d %s %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location"), b)
	}
	// Followed, it lands on the heads.
	if resp, err := http.Get(n.srv.URL + httpapi.Base + "/./heads"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("followed: %v %v", resp, err)
	}
}
