package harness

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLinkCutHeal: a link forwards a request (path, query, method and
// body) to its target on a real loopback listener; cut, it refuses every
// request 503 without reaching the target and ends a request in flight
// (a stream the target holds open); healed, it forwards again. Its counts
// are the requests it forwarded and refused.
func TestLinkCutHeal(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	var mu sync.Mutex
	var reached []string
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reached)
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.RequestURI()+" "+string(body))
		mu.Unlock()
		if r.URL.Path == "/stream" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	defer target.Close()
	listen, to, err := ParseLink("127.0.0.1:0=" + strings.TrimPrefix(target.URL, "http://"))
	if err != nil || to != target.URL {
		t.Fatalf("ParseLink: %q %v", to, err)
	}
	l, err := StartLink(listen, to)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	base := "http://" + l.Listen
	get := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("POST", "/oth/v0/tx?session=x", "envelope"); code != 200 || body != "ok /oth/v0/tx" {
		t.Fatalf("forwarded: %d %q", code, body)
	}
	if got := seen(); len(got) != 1 || got[0] != "POST /oth/v0/tx?session=x envelope" {
		t.Fatalf("the target saw %q", got)
	}

	// A stream in flight when the link is cut is ended.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("stream: %v", err)
	}
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body)
	if ctx.Err() != nil {
		t.Fatal("the stream outlived the cut until the client gave up")
	}
	res.Body.Close()
	for range 3 {
		if code, _ := get("GET", "/oth/v0/heads", ""); code != http.StatusServiceUnavailable {
			t.Fatalf("cut: %d, want 503", code)
		}
	}
	if got := seen(); len(got) != 2 {
		t.Fatalf("the target was reached through a cut link: %q", got)
	}
	if f, r := l.Counts(); f != 2 || r != 3 {
		t.Fatalf("counts: forwarded %d refused %d, want 2 and 3", f, r)
	}
	l.Heal()
	if code, body := get("GET", "/oth/v0/heads", ""); code != 200 || body != "ok /oth/v0/heads" {
		t.Fatalf("healed: %d %q", code, body)
	}
	if _, _, err := ParseLink("127.0.0.1:1"); err == nil {
		t.Error("a link without a target was accepted")
	}
	if _, _, err := ParseLink("127.0.0.1:1=ftp://x"); err == nil {
		t.Error("an ftp target was accepted")
	}
}
