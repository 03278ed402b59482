package e2e

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJanusJSStreaming watches the sample mountpoint 1 (Opus + VP8, fed by ffmpeg over plain RTP)
// with the unmodified janus.js, as Janus's streaming demo negotiates it (watch, answer the
// plugin's offer, start), over HTTP long-poll and over the WebSocket. Checked: webrtcState(true),
// the statuses Janus sends (preparing with the offer, starting, started), video decoded at the size
// ffmpeg sends, the tone audible in the decoded audio; stop (stopping, the hangup), a second stop
// that nothing answers, and a clean teardown.
func TestJanusJSStreaming(t *testing.T) {
	srv := startStreaming(t)
	sendRTP(t, rtpOut{Kind: "audio", Port: srv.Samples.Audio}, rtpOut{Kind: "video", Port: srv.Samples.Video, Size: "320x180"})
	pages := servePage(t)
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			b := newBrowser(t)
			api := srv.HTTPAPI
			if transport == "ws" {
				api = srv.WSAPI
			}
			b.do(10*time.Second, chromedp.Navigate(pages.URL+"/streaming.html?id=1&server="+url.QueryEscape(api)))
			b.waitFor("Janus.init", `window.janusStream && window.janusStream.state === 'ready'`, 10*time.Second)
			b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
			took := b.waitFor("webrtcState(true)", `window.janusStream.webrtcUp || window.janusStream.state === 'error'`, 20*time.Second)
			if msg, _ := eval[string](b, `window.janusStream.error || ''`); msg != "" {
				t.Fatalf("janus.js reported an error: %s", msg)
			}
			t.Logf("webrtcState(true) %v after Watch", took.Round(time.Millisecond))

			const pc = "window.janusStream.handle.webrtcStuff.pc"
			if v := requireStreamVideo(b, pc, "mountpoint 1's video at 320x180", "320x180", 15*time.Second); v.Codec != "video/VP8" {
				t.Errorf("decoded %s, want video/VP8", v.Codec)
			}
			requireMixEnergy(b, pc, "mountpoint 1's tone", true)
			b.waitFor("the started status", `window.janusStream.statuses.includes('started')`, 15*time.Second)
			statuses, _ := eval[[]string](b, `window.janusStream.statuses`)
			if !slices.Equal(statuses, []string{"preparing", "starting", "started"}) {
				t.Errorf("statuses %q, want preparing, starting, started", statuses)
			}
			b.screenshot("janusjs-streaming-" + transport)
			b.requireCleanConsole("while watching")

			// stop hangs up; a second stop, once stopped, is ignored (Janus's streaming demo sends one).
			if _, err := eval[bool](b, `(janusStream.send({ request: 'stop' }), true)`); err != nil {
				t.Fatal(err)
			}
			b.waitFor("the hangup after stop", `window.janusStream.events.includes('cleanup')`, 10*time.Second)
			time.Sleep(500 * time.Millisecond)
			if _, err := eval[bool](b, `(janusStream.send({ request: 'stop' }), true)`); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			// Janus says "stopped" only when a mountpoint goes away, not when its viewer stops.
			statuses, _ = eval[[]string](b, `window.janusStream.statuses`)
			if want := []string{"preparing", "starting", "started", "stopping"}; !slices.Equal(statuses, want) {
				t.Errorf("statuses after stop and a second stop: %q, want %q", statuses, want)
			}

			_, err := eval[chromedp.Void](b, `new Promise((resolve, reject) =>
				window.janusStream.janus.destroy({ success: resolve, error: reject }))`)
			if err != nil {
				t.Fatalf("janus.destroy: %v", err)
			}
			srv.waitNoSessions(t, 15*time.Second)
			time.Sleep(500 * time.Millisecond)
			b.requireCleanConsole("while janus.js destroyed its session")
		})
	}
}
