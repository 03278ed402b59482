package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
)

// recordPlayStrata runs strata with its Record&Play recordings in a temporary directory.
func recordPlayStrata(t *testing.T) (api string, pages string) {
	t.Helper()
	dir := t.TempDir()
	srv := startStrata(t, func(c *config.Config) { c.Plugins.RecordPlay.Path = dir })
	return "http://" + srv.HTTPAddr() + "/janus", "http://" + srv.HTTPAddr()
}

// TestRecordPlayDemo runs strata's record-and-play page (web/recordplay.html) in Chromium: record
// the fake camera and microphone for 5 s, stop, find the recording in the list, play it back and
// decode its video; pause holds the video, resume lets it go on.
func TestRecordPlayDemo(t *testing.T) {
	_, pages := recordPlayStrata(t)
	b := newBrowser(t)
	b.do(10*time.Second, chromedp.Navigate(pages+"/recordplay.html"))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle' && window.strataDemo.handle`, 10*time.Second)
	b.do(5*time.Second, chromedp.SetValue(chromedp.ID("name"), "e2e recording"), chromedp.Click(chromedp.ID("record")))
	b.waitFor("the recording to start", `window.strataDemo.state === 'recording' && window.strataDemo.events.some((e) => e.name === 'webrtcup')`, 20*time.Second)
	time.Sleep(5 * time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("stop")))
	b.waitFor("the recording in the list", `window.strataDemo.state === 'idle' && window.strataDemo.recordings.some((r) =>
		r.id === window.strataDemo.recordingId && r.name === 'e2e recording' && r.audio_codec === 'opus' && r.video_codec)`, 15*time.Second)

	b.do(5*time.Second, chromedp.Click(chromedp.ID("play")))
	b.waitFor("the playback", `window.strataDemo.state === 'playing'`, 10*time.Second)
	requireDecodedVideo(b, "window.strataDemo.pc", "played-back video", 15*time.Second)
	b.screenshot("recordplay-demo")

	b.do(5*time.Second, chromedp.Click(chromedp.ID("pause")))
	b.waitFor("the pause", `window.strataDemo.state === 'paused'`, 5*time.Second)
	time.Sleep(300 * time.Millisecond)
	held, err := readInboundVideo(b, "window.strataDemo.pc")
	if err != nil || held == nil {
		t.Fatalf("stats: %v", err)
	}
	time.Sleep(time.Second)
	if v, _ := readInboundVideo(b, "window.strataDemo.pc"); v == nil || v.FramesDecoded > held.FramesDecoded+2 {
		t.Errorf("paused, yet frames decoded went from %d to %+v", held.FramesDecoded, v)
	}
	b.do(5*time.Second, chromedp.Click(chromedp.ID("pause"))) // now reads Resume
	b.waitFor("the playback to resume", `window.strataDemo.state === 'playing'`, 5*time.Second)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if v, _ := readInboundVideo(b, "window.strataDemo.pc"); v != nil && v.FramesDecoded > held.FramesDecoded+5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no frames decoded after resume")
		}
	}
	// The rest of the recording plays to its end: the server hangs up and says "done".
	b.waitFor("the end of the playback", `window.strataDemo.state === 'idle'`, 15*time.Second)
	b.requireCleanConsole("during the test")
}

// TestJanusJSRecordPlay records and plays back with the janus.js Janus users have, unmodified,
// making the calls Janus's recordplaytest.js makes, over HTTP long-poll and over the WebSocket.
func TestJanusJSRecordPlay(t *testing.T) {
	if _, err := os.Stat(janusJSPath); err != nil {
		t.Fatalf("janus.js is required at %s (Debian's libjs-janus-gateway): %v", janusJSPath, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/janus.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, janusJSPath) })
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/janusjs-recordplay.html")
	})
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			srv := startStrata(t, func(c *config.Config) { c.Plugins.RecordPlay.Path = dir })
			api := "http://" + srv.HTTPAddr() + "/janus"
			if transport == "ws" {
				api = "ws://" + srv.WSAddr()
			}
			b := newBrowser(t)
			b.do(10*time.Second, chromedp.Navigate(page.URL+"/?server="+url.QueryEscape(api)))
			b.waitFor("the plugin attached", `window.janusTest && window.janusTest.state === 'ready'`, 10*time.Second)
			if _, err := eval[chromedp.Void](b, `window.janusTest.record('janus.js recording')`); err != nil {
				t.Fatal(err)
			}
			b.waitFor("recording", `window.janusTest.status === 'recording' && window.janusTest.events.includes('webrtcState:true')
				|| window.janusTest.state === 'error'`, 20*time.Second)
			if msg, _ := eval[string](b, `window.janusTest.error || ''`); msg != "" {
				t.Fatalf("janus.js: %s", msg)
			}
			time.Sleep(4 * time.Second)
			if _, err := eval[chromedp.Void](b, `window.janusTest.send({ request: 'stop' })`); err != nil {
				t.Fatal(err)
			}
			b.waitFor("stopped and done", `window.janusTest.status === 'stopped' && window.janusTest.done === 1`, 10*time.Second)
			id, err := eval[float64](b, `window.janusTest.recordingId`)
			if err != nil || id == 0 {
				t.Fatalf("recording id %v (%v)", id, err)
			}
			if _, err := eval[chromedp.Void](b, fmt.Sprintf(`window.janusTest.play(%d)`, int64(id))); err != nil {
				t.Fatal(err)
			}
			b.waitFor("playing", `window.janusTest.status === 'playing' || window.janusTest.state === 'error'`, 10*time.Second)
			requireDecodedVideo(b, "window.janusTest.handle.webrtcStuff.pc", "played-back video", 15*time.Second)
			b.waitFor("the end of the playback", `window.janusTest.done === 2`, 15*time.Second)
			b.requireCleanConsole("during the test")
		})
	}
}

// TestJanusRecordPlayDemo runs Janus's own Record&Play demo (recordplaytest.html and
// recordplaytest.js from Debian's janus-demos, unmodified; settings.js as serveJanusDemos fixes it)
// against strata, as a user would: Start, Record, a name in the prompt, Stop after a few seconds,
// the recording picked from the demo's list, Play; the played-back video decodes.
func TestJanusRecordPlayDemo(t *testing.T) {
	api, _ := recordPlayStrata(t)
	b := newBrowser(t)
	pages := serveJanusDemos(t, api, nil)
	b.do(10*time.Second, chromedp.Navigate(pages.URL+"/recordplaytest.html"))
	b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the Record button", `!$('#record').prop('disabled')`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("record")))
	b.waitFor("the name prompt", `$('.bootbox-input').is(':visible')`, 5*time.Second)
	if _, err := eval[chromedp.Void](b, `$('.bootbox-input').val('Janus demo recording'); $('.bootbox-accept').click()`); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the recording to run", `recordingId && recordplay.webrtcStuff.pc && recordplay.webrtcStuff.pc.connectionState === 'connected'`, 20*time.Second)
	time.Sleep(4 * time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("stop")))
	b.waitFor("the demo's \"Recording completed!\"", `$('.bootbox-body:contains("Recording completed!")').is(':visible')`, 10*time.Second)
	if _, err := eval[chromedp.Void](b, `$('.bootbox-accept').click()`); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the recording in the demo's list", `$('#recslist a:contains("Janus demo recording")').length === 1`, 10*time.Second)
	if _, err := eval[chromedp.Void](b, `$('#recslist a:contains("Janus demo recording")').click()`); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the Play button", `!$('#play').prop('disabled') && !$('.modal-backdrop').length`, 5*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("play")))
	requireDecodedVideo(b, "recordplay.webrtcStuff.pc", "played-back video in Janus's demo", 20*time.Second)
	b.screenshot("janus-recordplay-demo")
	b.requireCleanConsole("during the test")
}
