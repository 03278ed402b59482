package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// janusSampleList is what Janus's streaming demo lists for the sample mountpoints of Janus's stock
// configuration: "<description> (<type>)", by id.
var janusSampleList = []string{
	"Opus/VP8 live stream coming from external source (live)",
	"a-law file source (radio broadcast) (live)",
	"mu-law file source (music) (on demand)",
	"Multistream test (1 audio, 2 video) (live)",
}

// TestJanusStreamingDemo runs Janus's own streaming demo (streamingtest.html and streamingtest.js
// from Debian's janus-demos, unmodified; settings.js as serveJanusDemos fixes it) over HTTP
// long-poll, as a user would: Start, pick "Opus/VP8 live stream coming from external source" in the
// list, "Watch or Listen". Mountpoint 1 is fed by ffmpeg. Checked: the list shows the four sample
// mountpoints, the demo shows the mountpoint's metadata (from info), its video element
// plays the video at the size ffmpeg sends, the demo's audio element plays and the tone is in the
// decoded audio; the demo's Stop stops the stream, and Start's Stop ends the session.
func TestJanusStreamingDemo(t *testing.T) {
	srv := startStreaming(t)
	sendRTP(t, rtpOut{Kind: "audio", Port: srv.Samples.Audio}, rtpOut{Kind: "video", Port: srv.Samples.Video, Size: "320x180"})
	b := newBrowser(t)
	pages := serveJanusDemos(t, srv.HTTPAPI, nil)
	b.do(10*time.Second, chromedp.Navigate(pages.URL+"/streamingtest.html"))
	b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the list of streams", `$('#streams').is(':visible') && $('#streamslist li').length > 0`, 10*time.Second)
	list, err := eval[[]string](b, `$('#streamslist a').map((i, a) => a.textContent).get()`)
	if err != nil || !slices.Equal(list, janusSampleList) {
		t.Errorf("the demo lists %q (err %v), want %q", list, err, janusSampleList) // mountpoint 1 is enough for the rest
	}

	b.do(5*time.Second, chromedp.Evaluate[chromedp.Void](`$('#streamslist a[id="1"]').click()`),
		chromedp.Click(chromedp.ID("watch")))
	took := b.waitFor("the video to play", `(v => v && !v.paused && v.videoWidth > 0)($('#videos video[id^="remotevideo"]').get(0))`, 20*time.Second)
	t.Logf("the demo plays mountpoint 1 %v after Watch", took.Round(time.Millisecond))
	const pc = "streaming.webrtcStuff.pc"
	requireStreamVideo(b, pc, "mountpoint 1's video in Janus's demo", "320x180", 10*time.Second)
	b.waitFor("the resolution and a bitrate shown", `$('#videos [id^="curres"]').text() === '320x180'
		&& /^[1-9][0-9]* kbits\/sec$/.test($('#videos [id^="curbitrate"]').text())`, 15*time.Second) // the demo measures once a second; a loaded machine may skip a beat
	b.waitFor("the audio element to play", `(a => a && !a.paused && a.srcObject.getAudioTracks()[0].readyState === 'live')($('#videos audio').get(0))`, 15*time.Second)
	requireMixEnergy(b, pc, "mountpoint 1's tone in Janus's demo", true)
	b.waitFor("the metadata shown", `$('#metadata').text() === 'You can use this metadata section to put any info you want!'`, 15*time.Second)
	b.screenshot("janus-streaming-demo")
	b.requireCleanConsole("while watching")

	// The demo's Stop sends stop and hangs up; the server's hangup empties the panel.
	b.do(5*time.Second, chromedp.Click(chromedp.ID("watch")))
	b.waitFor("the demo to clean up", `$('#watch').text() === 'Watch or Listen' && $('#videos').children().length === 0`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	srv.waitNoSessions(t, 10*time.Second)
	b.requireCleanDestroy("while stopping")
}
