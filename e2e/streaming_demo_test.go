package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The mountpoints the demo test creates next to the samples: 10 like mountpoint 1 but at another
// size (a switch target), 20 a VP8 simulcast video (three encodings of one picture on port, port2
// and port3, lowest first, as Janus's simulcast mountpoints take them).
const (
	switchTarget = 10
	simulcastMP  = 20
)

// The sizes are small so that ffmpeg keeps up on a loaded machine; what counts is that they differ.
var simulcastSizes = [3]string{"160x90", "256x144", "480x270"}

const switchSize = "480x270"

// TestStreamingDemo runs strata's streaming demo (web/streaming.html) as a user would, over HTTP
// long-poll: Start lists the mountpoints; Watch plays mountpoint 1; Switch moves to mountpoint 10 on
// the same PeerConnection (the picture changes size and keeps coming, the tone too); Stop, then
// Watch the simulcast mountpoint 20 and pick substream 1, 0, then 2, in the demo's layer control: the
// decoded size follows, and the page shows the layer the plugin reports; the received bitrate and
// size are shown; Switch to the live file mountpoint 2 watches it on a new PeerConnection (switch
// is for live RTP mountpoints only) and its audio is decoded; Disconnect ends the session. Over the WebSocket, a shorter pass: list, watch 1,
// disconnect.
func TestStreamingDemo(t *testing.T) {
	srv := startStreaming(t)
	free := freeUDPPorts(t, 5)
	target, sim := [2]int(free[:2]), [3]int(free[2:])
	srv.createMountpoint(t, switchTarget, "switch target (Opus + VP8 "+switchSize+")", []map[string]any{
		{"type": "audio", "mid": "a", "port": target[0], "pt": 111, "codec": "opus"},
		{"type": "video", "mid": "v", "port": target[1], "pt": 100, "codec": "vp8"},
	})
	srv.createMountpoint(t, simulcastMP, "VP8 simulcast", []map[string]any{
		{"type": "video", "mid": "v", "port": sim[0], "port2": sim[1], "port3": sim[2], "simulcast": true, "pt": 100, "codec": "vp8"},
	})
	sendRTP(t,
		rtpOut{Kind: "audio", Port: srv.Samples.Audio}, rtpOut{Kind: "video", Port: srv.Samples.Video, Size: "320x180"},
		rtpOut{Kind: "audio", Port: target[0]}, rtpOut{Kind: "video", Port: target[1], Size: switchSize},
		rtpOut{Kind: "video", Port: sim[0], Size: simulcastSizes[0]}, rtpOut{Kind: "video", Port: sim[1], Size: simulcastSizes[1]},
		rtpOut{Kind: "video", Port: sim[2], Size: simulcastSizes[2]})
	const pc = "window.strataDemo.pc"

	t.Run("http", func(t *testing.T) {
		b := openStreamingDemo(t, srv, "http")
		watchInDemo(b, 1)
		requireStreamVideo(b, pc, "mountpoint 1 in the demo", "320x180", 15*time.Second)
		requireMixEnergy(b, pc, "mountpoint 1's tone in the demo", true)
		b.waitFor("the received bitrate and size shown", `/^[1-9][0-9]* kbit\/s$/.test(document.getElementById('v-in').textContent)
			&& /^320×180 · /.test(document.querySelector('#videos figure .info').textContent)`, 15*time.Second)
		if _, err := eval[bool](b, `(window.firstPC = window.strataDemo.pc, true)`); err != nil {
			t.Fatal(err)
		}

		selectMountpoint(b, switchTarget)
		b.do(5*time.Second, chromedp.Click(chromedp.ID("watch"))) // reads Switch now
		b.waitFor("the switch", fmt.Sprintf(`window.strataDemo.watching === %d && window.strataDemo.state === 'up'
			|| window.strataDemo.state === 'error'`, switchTarget), 10*time.Second)
		requireNoDemoError(b)
		requireStreamVideo(b, pc, "mountpoint 10's picture after the switch", switchSize, 10*time.Second)
		if same, _ := eval[bool](b, `window.firstPC === window.strataDemo.pc && window.firstPC.connectionState === 'connected'`); !same {
			t.Fatalf("the switch did not keep the PeerConnection")
		}
		requireMixEnergy(b, pc, "mountpoint 10's tone after the switch", true)
		b.screenshot("streaming-demo-switched")

		b.do(5*time.Second, chromedp.Click(chromedp.ID("stop")))
		b.waitFor("the demo to stop watching", `window.strataDemo.state === 'ready' && window.strataDemo.viewer === null
			&& document.querySelectorAll('#videos figure').length === 0`, 10*time.Second)
		watchInDemo(b, simulcastMP)
		b.waitFor("the layer control", `!document.querySelector('#videos figure .layers').hidden`, 15*time.Second)
		for _, sub := range []int{1, 0, 2} { // each a change, whatever layer the server started with
			pickSubstream(b, sub)
			requireStreamVideo(b, pc, fmt.Sprintf("substream %d", sub), simulcastSizes[sub], 15*time.Second)
			b.waitFor(fmt.Sprintf("the page to show substream %d", sub), fmt.Sprintf(`window.strataDemo.layers.v && window.strataDemo.layers.v.substream === %d
				&& document.querySelector('#videos figure .layer').textContent.includes('substream %d')`, sub, sub), 15*time.Second)
		}
		b.screenshot("streaming-demo-simulcast")

		// A file mountpoint is no live RTP one, so switch says 458 and the demo watches it anew.
		if _, err := eval[bool](b, `(window.simulcastPC = window.strataDemo.pc, true)`); err != nil {
			t.Fatal(err)
		}
		selectMountpoint(b, 2)
		b.do(5*time.Second, chromedp.Click(chromedp.ID("watch")))
		b.waitFor("the file mountpoint watched on a new PeerConnection", `window.strataDemo.watching === 2 && window.strataDemo.state === 'up'
			&& window.strataDemo.pc !== window.simulcastPC`, 15*time.Second)
		requireAudioDecoding(b, pc, "mountpoint 2's a-law file")
		b.requireCleanConsole("while watching")
		disconnectDemo(t, b, srv)
	})

	t.Run("ws", func(t *testing.T) {
		b := openStreamingDemo(t, srv, "ws")
		watchInDemo(b, 1)
		requireStreamVideo(b, pc, "mountpoint 1 in the demo over the WebSocket", "320x180", 15*time.Second)
		b.requireCleanConsole("while watching")
		disconnectDemo(t, b, srv)
	})
}

// openStreamingDemo opens the demo in a new browser, presses Start and checks the list.
func openStreamingDemo(t *testing.T, srv *streamingServer, transport string) *browser {
	t.Helper()
	b := newBrowser(t)
	b.do(10*time.Second, chromedp.Navigate(srv.demoPage("streaming.html", transport == "ws")))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the list", `window.strataDemo.state === 'ready' && window.strataDemo.mountpoints.length > 0
		|| window.strataDemo.state === 'error'`, 10*time.Second)
	requireNoDemoError(b)
	if used, _ := eval[string](b, `window.strataDemo.session.transport`); used != transport {
		t.Fatalf("the page used transport %q, want %q", used, transport)
	}
	// The demo shows what the server lists (which sample mountpoints a server has is
	// TestJanusStreamingDemo's business), sorted by id, with the test's own among them.
	ids, _ := eval[[]int](b, `window.strataDemo.mountpoints.map((m) => m.id)`)
	options, _ := eval[[]string](b, `[...document.querySelectorAll('#mountpoints option')].map((o) => o.value)`)
	want := srv.mountpointIDs(t)
	if !slices.Equal(ids, want) || len(options) != len(want) || !slices.Contains(ids, 1) || !slices.Contains(ids, switchTarget) || !slices.Contains(ids, simulcastMP) {
		t.Fatalf("the demo lists mountpoints %v (%d options), the server %v; want them equal, with 1, %d and %d", ids, len(options), want, switchTarget, simulcastMP)
	}
	return b
}

// disconnectDemo presses Disconnect and checks that the session is gone.
func disconnectDemo(t *testing.T, b *browser, srv *streamingServer) {
	t.Helper()
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the demo to disconnect", `window.strataDemo.state === 'idle' && window.strataDemo.session === null`, 10*time.Second)
	srv.waitNoSessions(t, 10*time.Second)
	b.requireCleanConsole("while disconnecting")
}

// selectMountpoint picks id in the demo's list, as a user does.
func selectMountpoint(b *browser, id int) {
	b.t.Helper()
	js := fmt.Sprintf(`(s => { s.value = '%d'; s.dispatchEvent(new Event('change')); return s.value === '%d'; })(document.getElementById('mountpoints'))`, id, id)
	if ok, err := eval[bool](b, js); err != nil || !ok {
		b.t.Fatalf("selecting mountpoint %d in the list: %v", id, err)
	}
}

// watchInDemo picks id and clicks Watch, and waits until the demo says media flows.
func watchInDemo(b *browser, id int) {
	b.t.Helper()
	selectMountpoint(b, id)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("watch")))
	took := b.waitFor(fmt.Sprintf("mountpoint %d to play", id), fmt.Sprintf(`window.strataDemo.watching === %d && window.strataDemo.state === 'up'
		|| window.strataDemo.state === 'error' || window.strataDemo.events.some((e) => e.name === 'error')`, id), 15*time.Second)
	requireNoDemoError(b)
	b.t.Logf("watching mountpoint %d, up %v after Watch", id, took.Round(time.Millisecond))
}

// pickSubstream chooses a substream in the demo's layer control of its (only) video.
func pickSubstream(b *browser, sub int) {
	b.t.Helper()
	js := fmt.Sprintf(`(s => { s.value = '%d'; s.dispatchEvent(new Event('change')); return true; })(document.querySelector('#videos figure .substream'))`, sub)
	if _, err := eval[bool](b, js); err != nil {
		b.t.Fatalf("picking substream %d: %v", sub, err)
	}
}

// requireAudioDecoding fails the test unless the PeerConnection pcExpr decodes a second of received
// audio within 5 s.
func requireAudioDecoding(b *browser, pcExpr, what string) {
	b.t.Helper()
	js := fmt.Sprintf(`(async () => {
		let a = null;
		(await (%s).getStats()).forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio') a = s; });
		return a ? a.totalSamplesDuration || 0 : 0;
	})()`, pcExpr)
	first, err := eval[float64](b, js)
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		now, err2 := eval[float64](b, js)
		if err == nil && err2 == nil && now >= first+1 {
			b.t.Logf("%s: %.1f s of audio decoded", what, now)
			return
		}
		if time.Since(start) > 5*time.Second {
			b.t.Fatalf("%s: decoded audio went from %.2f s to %.2f s in 5 s (%v, %v)", what, first, now, err, err2)
		}
	}
}

// requireNoDemoError fails the test if the demo logged an error.
func requireNoDemoError(b *browser) {
	b.t.Helper()
	errs, _ := eval[[]string](b, `window.strataDemo.events.filter((e) => e.name === 'error').map((e) => e.detail)`)
	if len(errs) > 0 {
		b.t.Fatalf("the demo reported errors: %q", errs)
	}
}
