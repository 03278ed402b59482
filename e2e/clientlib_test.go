package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestClientLibrary runs testdata/clientlib-checks.js in Chromium on a page served by strata: unit
// checks of lib/strata.js (server resolution, stats arithmetic) and its request, reply and event
// handling against the live server over both transports, including core and plugin errors.
func TestClientLibrary(t *testing.T) {
	srv := startStrata(t)
	b := newBrowser(t)
	src, err := os.ReadFile("testdata/clientlib-checks.js")
	if err != nil {
		t.Fatal(err)
	}
	b.do(10*time.Second, chromedp.Navigate("http://"+srv.HTTPAddr()+"/"))

	type result struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	}
	js := fmt.Sprintf("(%s)(%q, %q)", src, "http://"+srv.HTTPAddr()+"/janus", "ws://"+srv.WSAddr())
	checks, err := eval[[]result](b, js)
	if err != nil {
		t.Fatalf("running the checks: %v", err)
	}
	if len(checks) < 20 {
		t.Fatalf("only %d checks ran", len(checks))
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s: got %s", c.Name, c.Detail)
		}
	}
	t.Logf("%d client library checks", len(checks))
	waitNoSessions(t, srv, 5*time.Second)
	b.requireCleanConsole("during the test")
}
