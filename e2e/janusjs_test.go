package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// janusJSPath is where Debian's libjs-janus-gateway installs janus.js.
const janusJSPath = "/usr/share/javascript/janus-gateway/janus.js"

// servePage serves the test pages (the echotest at /, the videoroom at /videoroom.html, the
// videocall at /videocall.html, the
// videoroom features at /features.html, the audiobridge at /audiobridge.html, a streaming viewer at
// /streaming.html) and the installed janus.js, unmodified, from a test-local
// HTTP server. Its origin differs from strata's API, as it does when Janus's demos are served by a
// separate web server, so the calls also exercise strata's CORS handling and cross-origin
// WebSockets.
func servePage(t *testing.T) *httptest.Server {
	t.Helper()
	if _, err := os.Stat(janusJSPath); err != nil {
		t.Fatalf("janus.js is required at %s but is missing (%v).\n"+
			"Run `make test`: it installs Debian's libjs-janus-gateway package and then runs the tests.", janusJSPath, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/janus.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, janusJSPath)
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-echotest.html")
	})
	mux.HandleFunc("/videocall.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-videocall.html")
	})
	mux.HandleFunc("/videoroom.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-videoroom.html")
	})
	mux.HandleFunc("/features.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-features.html")
	})
	mux.HandleFunc("/audiobridge.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-audiobridge.html")
	})
	mux.HandleFunc("/streaming.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-streaming.html")
	})
	mux.HandleFunc("/textroom.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-textroom.html")
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// TestJanusJSEchotest drives an echotest with the janus.js that Janus users have, through its own
// API (Janus.init, new Janus, attach, createOffer, send, handleRemoteJsep), over HTTP long-poll and
// over the WebSocket, and checks webrtcState(true) and decoded echoed video.
func TestJanusJSEchotest(t *testing.T) {
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			srv := startStrata(t)
			pages := servePage(t)
			b := newBrowser(t)

			api := "http://" + srv.HTTPAddr() + "/janus"
			if transport == "ws" {
				api = "ws://" + srv.WSAddr()
			}
			b.do(10*time.Second, chromedp.Navigate(pages.URL+"/?server="+url.QueryEscape(api)))
			// Clicking before Janus.init has called back does nothing, so wait for it.
			b.waitFor("Janus.init", `window.janusTest && window.janusTest.state === 'ready' && Janus.initDone`, 10*time.Second)

			b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
			took := b.waitFor("webrtcState(true)", `window.janusTest.webrtcUp || window.janusTest.state === 'error'`, 20*time.Second)
			if msg, _ := eval[string](b, `window.janusTest.error || ''`); msg != "" {
				t.Fatalf("janus.js reported an error: %s", msg)
			}
			t.Logf("webrtcState(true) %v after Start", took.Round(time.Millisecond))

			requireEchoedVideo(b, "window.janusTest.handle && window.janusTest.handle.webrtcStuff.pc", 20*time.Second)
			b.screenshot("janusjs-echotest-" + transport)
			b.requireCleanConsole("during the call")

			// janus.js's own teardown: hang up, detach, destroy the session.
			_, err := eval[chromedp.Void](b, `new Promise((resolve, reject) =>
				window.janusTest.janus.destroy({ success: resolve, error: reject }))`)
			if err != nil {
				t.Fatalf("janus.destroy: %v", err)
			}
			waitNoSessions(t, srv, 5*time.Second)
			// janus.js keeps long-polling until the destroy reply arrives; against Janus that ends
			// quietly, so any error janus.js logs here is a difference from Janus.
			time.Sleep(500 * time.Millisecond)
			b.requireCleanConsole("while janus.js destroyed its session")
		})
	}
}
