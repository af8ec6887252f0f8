package browsertest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/witan-dev/witan/replica/classroom/internal/browsertest"
)

// TestBrowserRunsScript proves the browser the tests use starts, loads a
// page from a real listener and runs its script: the page writes a value
// only its script can compute.
func TestBrowserRunsScript(t *testing.T) {
	ctx := browsertest.Browser(t, 320, 640)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="out">no script</p>
<script>document.getElementById("out").textContent = String(6*7) + " at " + window.innerWidth;</script>`)
	}))
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("out").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if got != "42 at 320" {
		t.Fatalf("page says %q, want %q", got, "42 at 320")
	}
	p := browsertest.Screenshot(ctx, t, "smoke")
	var b []byte
	b, err = os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("screenshot is not a PNG")
	}
}
