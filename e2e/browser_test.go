package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/chromium"
)

const chromiumPath = chromium.Path

// browser is one headless Chromium with one tab, owned by one test.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []string // formatted, in arrival order
	errors  []string // the subset that are errors or uncaught exceptions
	checked int      // errors already reported by requireCleanConsole
	known   []string // substrings of errors that are the page's own bugs, not the server's
}

// newBrowser starts Chromium with fake media devices and a fresh profile. The browser is closed and
// its profile removed when the test ends; if the test failed, the page's console is logged first.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	return newBrowserWith(t)
}

// newBrowserWith is newBrowser with more launch options (later ones override).
func newBrowserWith(t *testing.T, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("headless Chromium is required at %s but is missing (%v).\n"+
			"Run `make test`: it installs the Debian chromium package and then runs the tests.", chromiumPath, err)
	}
	opts := append(chromium.Options(chromiumPath, t.TempDir()),
		// ICE candidates from the default route's interface only, as strata's in these tests
		// (stableICE): other packages' tests add and remove interfaces while these run.
		chromedp.Flag("force-webrtc-ip-handling-policy", "default_public_interface_only"),
		// The pages attach the echoed stream to a <video> without a click of their own.
		chromium.Autoplay,
		chromedp.WindowSize(1280, 1100),
	)
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b := &browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser process to exit
	})

	start := time.Now()
	messages := chromedp.Console(ctx) // starts the browser and subscribes before any page loads
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.record(m)
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	t.Logf("Chromium started in %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(b.dumpConsoleIfFailed)
	return b
}

func (b *browser) record(m chromedp.ConsoleMessage) {
	line := fmt.Sprintf("%s %-9s %s", m.Time.Format("15:04:05.000"), m.Type, m.Text)
	if m.URL != "" && (m.Type == chromedp.ConsoleError || m.IsException()) {
		line += fmt.Sprintf("  (%s:%d)", m.URL, m.Line+1)
	}
	b.mu.Lock()
	b.console = append(b.console, line)
	if (m.Type == chromedp.ConsoleError || m.IsException()) && !b.isKnown(m.Text+" "+m.URL) {
		b.errors = append(b.errors, line)
	}
	b.mu.Unlock()
}

// tolerate makes requireCleanConsole ignore errors whose text or source URL contains text: a bug
// of the page itself, which it shows against Janus too. Call it before loading the page.
func (b *browser) tolerate(text string) {
	b.mu.Lock()
	b.known = append(b.known, text)
	b.mu.Unlock()
}

func (b *browser) isKnown(text string) bool {
	for _, k := range b.known {
		if strings.Contains(text, k) {
			return true
		}
	}
	return false
}

// requireCleanConsole fails the test if the page logged an error or threw an uncaught exception
// since the previous call; phase names the part of the test in the failure message.
func (b *browser) requireCleanConsole(phase string) {
	b.t.Helper()
	b.requireConsoleWithout(phase, func(string) bool { return false })
}

// requireCleanDestroy is requireCleanConsole for a phase that destroys the Janus session over
// HTTP. janus.js polls again as soon as the destroy's hangup event arrives, before it has read the
// destroy's reply; when that poll reaches the server after the destroy, the server answers 404
// (Janus does the same: a long poll for a session that is gone is a 404) and janus.js logs the
// failed request and "API call failed". Those two lines are the race, not a fault; any other
// error still fails the test.
func (b *browser) requireCleanDestroy(phase string) {
	b.t.Helper()
	b.requireConsoleWithout(phase, func(line string) bool {
		return strings.Contains(line, "status of 404") && strings.Contains(line, "maxev=") ||
			strings.Contains(line, `API call failed: {message: "API call failed"`)
	})
}

func (b *browser) requireConsoleWithout(phase string, expected func(string) bool) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var fresh []string
	for _, line := range b.errors[b.checked:] {
		if !expected(line) {
			fresh = append(fresh, line)
		}
	}
	if len(fresh) > 0 {
		b.t.Errorf("the page logged %d errors %s:\n%s", len(fresh), phase, strings.Join(fresh, "\n"))
	}
	b.checked = len(b.errors)
}

func (b *browser) dumpConsoleIfFailed() {
	if !b.t.Failed() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t.Logf("browser console (%d messages):\n%s", len(b.console), strings.Join(b.console, "\n"))
}

// do runs actions with a deadline; a failure ends the test.
func (b *browser) do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise result) and decodes the result into T.
func eval[T any](b *browser, js string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// waitFor polls a JavaScript condition until it is true; on timeout the test fails with what.
func (b *browser) waitFor(what, cond string, timeout time.Duration) time.Duration {
	b.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		ok, err := eval[bool](b, "Boolean("+cond+")")
		if err == nil && ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// screenshot saves a PNG of the viewport under $STRATA_E2E_ARTIFACTS, if that is set.
func (b *browser) screenshot(name string) {
	dir := os.Getenv("STRATA_E2E_ARTIFACTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	// CaptureScreenshot, not FullScreenshot: the latter resizes the viewport, which stalls the page's
	// media pipeline for a moment and shows up as a gap in the echo.
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot saved to %s", path)
}
