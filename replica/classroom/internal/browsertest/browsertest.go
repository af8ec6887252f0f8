// Package browsertest starts a headless Chromium for tests that drive a
// page through github.com/chromedp/chromedp.
//
// The browser is Debian's chromium-headless-shell (or chromium). Under
// CI=true a missing browser fails the test, so CI cannot pass without
// running the browser tests; elsewhere the test is skipped with a message
// that says how to install the browser. .ci/run installs it when absent.
//
// Screenshots and other artefacts go to the directory WITAN_ARTEFACTS
// names, or to a directory under the system's temporary directory; Dir
// logs where.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// InstallHint says how to get a browser the tests can use.
const InstallHint = "install Debian's headless Chromium (apt-get install chromium-headless-shell, or chromium), " +
	"or name a Chrome binary in WITAN_CHROME"

// candidates are the binaries looked for on PATH, best first.
var candidates = []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "headless_shell"}

// Find returns the path of a headless-capable Chromium, or "" if there is
// none: WITAN_CHROME if set, else the first candidate on PATH.
func Find() string {
	if p := os.Getenv("WITAN_CHROME"); p != "" {
		return p
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// InCI reports whether the tests run in CI (CI=true), where a missing
// browser is a failure rather than a skip.
func InCI() bool { return strings.EqualFold(os.Getenv("CI"), "true") }

// Browser returns a chromedp context with a fresh browser tab, closed when
// the test ends. It skips the test when no browser is installed, unless
// CI=true, where it fails it. Width and height size the window in CSS
// pixels (0: 1280x900).
func Browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	bin := Find()
	if bin == "" {
		if InCI() {
			t.Fatalf("browsertest: no headless Chromium found and CI=true: %s", InstallHint)
		}
		t.Skipf("browsertest: no headless Chromium found; %s (CI=true makes this a failure)", InstallHint)
	}
	if width <= 0 || height <= 0 {
		width, height = 1280, 900
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox (CI containers).
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelB()
		cancelA()
	})
	// Start the browser now, so a broken install fails here, clearly. (The
	// first action's context owns the browser, so it must be ctx itself,
	// not a child with a timeout.)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: starting %s: %v", bin, err)
	}
	return ctx
}

// Dir returns the directory test artefacts go to, creating it.
func Dir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("WITAN_ARTEFACTS")
	if d == "" {
		d = filepath.Join(os.TempDir(), "witan-browser-artefacts")
	}
	d = filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	return d
}

// Screenshot saves a PNG of the whole page as Dir(t)/name.png and returns
// its path.
func Screenshot(ctx context.Context, t testing.TB, name string) string {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	p := filepath.Join(Dir(t), name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	t.Logf("screenshot %s", p)
	return p
}
