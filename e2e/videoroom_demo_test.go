package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestVideoRoomSimulcast runs strata's videoroom demo (web/videoroom.html with lib/strata.js) in two
// browsers in one room created through the API. Alice publishes her camera as three-layer VP8
// simulcast (RIDs h, m, l); Bob publishes one layer and subscribes to Alice. Checked: Chromium sends
// all three layers and strata marks the stream simulcast; Bob decodes Alice's video and plays her
// audio, and each page shows the other's video; the page's "Max layer" control (configure with
// substream) brings Bob the lowest layer, then a higher one again; the caption shows the layer
// strata forwards, the bitrate and the size; Leave ends both sessions.
func TestVideoRoomSimulcast(t *testing.T) {
	srv := startStrata(t)
	createTestRoom(t, srv)
	page := fmt.Sprintf("http://%s/videoroom.html?room=%d", srv.HTTPAddr(), testRoom)

	alice, bob := newBrowser(t), newBrowser(t)
	joinDemo(alice, page, "alice", true)
	aliceLayers := requireThreeLayersSent(alice, "window.strataDemo.pubPc", 15*time.Second)
	requireSimulcastPublisher(t, srv)
	t.Logf("Alice's layers are %d to %d px wide", aliceLayers.low, aliceLayers.high)

	joinDemo(bob, page, "bob", false)
	bob.waitFor("Bob's page to show Alice", remoteShownJS("alice"), 15*time.Second)
	alice.waitFor("Alice's page to show Bob", remoteShownJS("bob"), 15*time.Second)
	requireDecodedVideo(bob, "window.strataDemo.subPc", "Alice's video at Bob", 15*time.Second)
	bob.waitFor("Bob's page to play Alice's audio", `[...window.strataDemo.streams.values()].some((s) => s.kind === 'audio'
		&& s.display === 'alice' && s.audio && !s.audio.paused && s.audio.srcObject.getAudioTracks()[0].readyState === 'live')`, 5*time.Second)

	substreamSwitch{
		t: t, srv: srv, pub: alice, sub: bob,
		pubPC: "window.strataDemo.pubPc", subPC: "window.strataDemo.subPc",
		configure: demoMaxLayerJS,
	}.run()

	// The caption follows strata's substream events and the page's own getStats sampling.
	bob.waitFor("Bob's caption to show the forwarded layer, a bitrate and a size", `(() => {
		const s = [...window.strataDemo.streams.values()].find((s) => s.kind === 'video' && s.display === 'alice');
		const last = window.strataDemo.events.filter((e) => e.name === 'layer').pop();
		const caption = s.el.querySelector('figcaption .muted').textContent;
		return last && last.detail === 'alice: ' + s.el.querySelector('.layer').textContent
			&& /^(low|medium|high) · t\d · [1-9]\d* kbit\/s · \d+×\d+$/.test(caption);
	})()`, 5*time.Second)
	caption, _ := eval[string](bob, `document.querySelector('#videos figure:nth-of-type(2) figcaption').textContent.replace(/\s+/g, ' ')`)
	t.Logf("Bob's caption of Alice's video: %q", caption)
	bob.screenshot("videoroom-bob")
	alice.screenshot("videoroom-alice")
	alice.requireCleanConsole("during the call")
	bob.requireCleanConsole("during the call")

	for _, b := range []*browser{bob, alice} {
		b.do(5*time.Second, chromedp.Click(chromedp.ID("start"))) // the button reads Leave now
		b.waitFor("the demo to leave", `window.strataDemo.state === 'idle' && window.strataDemo.session === null`, 10*time.Second)
	}
	waitNoSessions(t, srv, 5*time.Second)
	alice.requireCleanConsole("while leaving")
	bob.requireCleanConsole("while leaving")
}

// joinDemo opens the videoroom demo, fills in the name and the simulcast switch, clicks Join and
// waits until the page is in the room.
func joinDemo(b *browser, page, name string, simulcast bool) {
	b.t.Helper()
	b.do(10*time.Second, chromedp.Navigate(page))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
	setup := fmt.Sprintf(`document.getElementById('display').value = %q; document.getElementById('simulcast').checked = %v; true`, name, simulcast)
	if _, err := eval[bool](b, setup); err != nil {
		b.t.Fatalf("filling in the form: %v", err)
	}
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	took := b.waitFor(name+" to join and publish", `['up', 'error'].includes(window.strataDemo.state)`, 15*time.Second)
	if msg, _ := eval[string](b, `window.strataDemo.error || ''`); msg != "" {
		b.t.Fatalf("%s's page failed to join: %s", name, msg)
	}
	b.t.Logf("%s joined and published in %v", name, took.Round(time.Millisecond))
}

// remoteShownJS is true once the page shows a remote video of display whose track is live.
func remoteShownJS(display string) string {
	return fmt.Sprintf(`[...window.strataDemo.streams.values()].some((s) => s.kind === 'video' && s.display === %q && s.el
		&& s.el.isConnected && s.el.querySelector('video').srcObject?.getVideoTracks()[0]?.readyState === 'live')`, display)
}

// demoMaxLayerJS picks a layer in the page's "Max layer" control of the one remote video and
// resolves once the page logged strata's reply (or rejects with the error it logged).
func demoMaxLayerJS(substream int) string {
	return fmt.Sprintf(`new Promise((resolve, reject) => {
		const demo = window.strataDemo;
		const from = demo.events.length;
		const select = document.querySelector('#videos .cap');
		select.value = '%d';
		select.dispatchEvent(new Event('change'));
		const started = Date.now();
		(function poll() {
			const e = demo.events.slice(from).find((e) => e.name === 'configure' || e.name === 'error');
			if (e) return e.name === 'configure' ? resolve(true) : reject(new Error(e.detail));
			if (Date.now() - started > 5000) return reject(new Error('no reply to configure'));
			setTimeout(poll, 50);
		})();
	})`, substream)
}
