package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pointsJS counts the points of a series' path on the dashboard's first PeerConnection card.
func pointsJS(chart, series string) string {
	return fmt.Sprintf(`(p => p && p.getAttribute('d') ? p.getAttribute('d').split(/[ML]/).length - 1 : 0)`+
		`(document.querySelector('.pc svg[data-chart=%q] path[data-series=%q]'))`, chart, series)
}

// TestDashboardDrawsACall runs strata's echotest page in one tab and opens the admin dashboard in
// another, with the admin secret in the URL's fragment (the page keeps it in sessionStorage and
// takes it out of the URL). The dashboard must list the call's session and PeerConnection and draw
// its charts: the bitrate and RTT paths gain points from one snapshot to the next, and a bitrate
// above zero shows. Then a wrong secret brings the login form back with the server's reason.
func TestDashboardDrawsACall(t *testing.T) {
	srv := startStrata(t)
	b := newBrowser(t)
	b.do(10*time.Second, chromedp.Navigate("http://"+srv.HTTPAddr()+"/echotest.html"))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the webrtcup event", `window.strataDemo.events.some((e) => e.name === 'webrtcup')`, 20*time.Second)

	dash := b.newTab()
	page := "http://" + srv.AdminAddr() + "/dashboard#secret=" + url.QueryEscape(srv.AdminSecret())
	dash.do(10*time.Second, chromedp.Navigate(page))
	dash.waitFor("the secret taken out of the URL", `location.hash === '' && sessionStorage.getItem('strata-admin-secret') !== null`, 5*time.Second)
	dash.waitFor("the session listed", `document.querySelectorAll('#sessions tbody tr').length === 1`, 10*time.Second)
	dash.waitFor("a PeerConnection card", `document.querySelectorAll('.pc').length === 1`, 10*time.Second)
	dash.waitFor("a bitrate above zero", `/in [1-9]\d* kbit\/s/.test(document.querySelector('.pc p').textContent)`, 15*time.Second)

	before, err := eval[int](dash, pointsJS("bitrate", "in"))
	if err != nil || before < 1 {
		t.Fatalf("bitrate chart has %d points (%v)", before, err)
	}
	dash.waitFor("the bitrate chart to grow", fmt.Sprintf(`%s >= %d`, pointsJS("bitrate", "in"), before+2), 10*time.Second)
	dash.waitFor("the RTT chart drawn", fmt.Sprintf(`%s >= %d`, pointsJS("path", "rtt"), before+2), 5*time.Second)
	dash.waitFor("the estimate drawn", fmt.Sprintf(`%s >= 2`, pointsJS("bitrate", "est")), 5*time.Second)
	dash.screenshot("dashboard")
	dash.requireCleanConsole("while the dashboard polled")

	// A wrong secret: the page drops it and asks again, showing why.
	if _, err := eval[bool](dash, `(sessionStorage.setItem('strata-admin-secret', 'wrong'), true)`); err != nil {
		t.Fatal(err)
	}
	dash.waitFor("the login form after a 403", `!document.getElementById('login').hidden && `+
		`document.getElementById('login-error').textContent.includes('wrong admin secret')`, 5*time.Second)
}

// newTab opens another tab in b's browser, its console recorded as b's is; it closes when the test
// ends.
func (b *browser) newTab() *browser {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx) // a child of a tab's context is a new tab of its browser
	tab := &browser{t: b.t, ctx: ctx}
	b.t.Cleanup(cancel)
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			tab.record(m)
		}
	}()
	tab.do(10*time.Second, chromedp.Navigate("about:blank"))
	b.t.Cleanup(tab.dumpConsoleIfFailed)
	return tab
}
