package e2e

import (
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestEchotestDemo runs strata's own echotest page (web/echotest.html with lib/strata.js) against a
// strata server, over HTTP long-poll and over the WebSocket: Start, webrtcup, echoed video decoded,
// strata's estimate of the path to the browser in handle_info, live stats drawn, Stop, and no
// session left on the server.
func TestEchotestDemo(t *testing.T) {
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			srv := startStrata(t)
			b := newBrowser(t)

			page := "http://" + srv.HTTPAddr() + "/echotest.html"
			if transport == "ws" {
				// The WebSocket listens on its own port, which the page cannot guess: pass it.
				page += "?transport=ws&ws=" + url.QueryEscape("ws://"+srv.WSAddr())
			}
			b.do(10*time.Second, chromedp.Navigate(page))
			b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)

			b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
			took := b.waitFor("the webrtcup event", `window.strataDemo.events.some((e) => e.name === 'webrtcup')`, 20*time.Second)
			t.Logf("webrtcup %v after Start", took.Round(time.Millisecond))

			used, err := eval[string](b, `window.strataDemo.session.transport`)
			if err != nil || used != transport {
				t.Fatalf("the page used transport %q (err %v), want %q", used, err, transport)
			}
			requireEchoedVideo(b, "window.strataDemo.pc", 20*time.Second)
			est := requireEstimate(t, srv, 10*time.Second)
			t.Logf("strata's %s estimate of the path to Chromium: %.0f kbit/s (%s), from %d TWCC feedback packets",
				est.Estimator.Algorithm, est.Estimator.Target/1000, est.Estimator.Usage, est.Feedback)

			// The page's own sampler must see the same call: incoming bitrate and decoded frames.
			b.waitFor("the page's stats sampler to report the echo",
				`(s => s && s.bitrateInKbps > 50 && s.framesDecoded > 0 && s.frameWidth > 0)(window.strataDemo.lastStats)`, 5*time.Second)
			state, _ := eval[string](b, `window.strataDemo.state`)
			if state != "up" {
				t.Fatalf("demo state %q, want up", state)
			}
			b.screenshot("echotest-" + transport)

			b.do(5*time.Second, chromedp.Click(chromedp.ID("start"))) // the same button now reads Stop
			b.waitFor("the demo to stop", `window.strataDemo.state === 'idle' && window.strataDemo.pc === null`, 10*time.Second)
			waitNoSessions(t, srv, 5*time.Second)
			b.requireCleanConsole("during the test")
		})
	}
}
