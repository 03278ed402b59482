package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
)

// TestJanusNoSIPDemo runs Janus's own NoSIP demo (nosiptest.html and nosiptest.js from Debian's
// janus-demos, unmodified) in headless Chromium against strata: the page's caller handle offers
// its fake camera and microphone, `generate` turns the offer into a plain SDP, the callee handle
// `process`es it, answers and `generate`s the plain answer, which the caller `process`es — two
// bridges joined by plain RTP on loopback. Each side's video element plays the other's video,
// and each side's audio arrives, with energy where the page plays it (Chromium's fake microphone
// beeps).
func TestJanusNoSIPDemo(t *testing.T) {
	srv := startStrata(t, func(c *config.Config) {
		c.Plugins.NoSIP.LocalIP = "127.0.0.1"
	})
	b := newBrowser(t)
	pages := serveJanusDemos(t, "http://"+srv.HTTPAddr()+"/janus", nil)
	b.do(10*time.Second, chromedp.Navigate(pages.URL+"/nosiptest.html"))
	b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	took := b.waitFor("the peer's video playing on the caller's side",
		`(v => v && v.videoWidth > 0 && v.currentTime > 0.5)($('#videoright video').get(0))`, 20*time.Second)
	t.Logf("peer video after %v", took.Round(time.Millisecond))
	b.waitFor("the plain SDPs shown", `$('#localsdp').text().includes('m=audio') && $('#remotesdp').text().includes('m=audio')`, 5*time.Second)
	// Chromium's G.722 and telephone-event are offered to the plain side: the handle's
	// PeerConnection has the bridge's codecs.
	if ok, err := eval[bool](b, `$('#localsdp').text().includes('G722/8000') && $('#localsdp').text().includes('telephone-event/')`); err != nil || !ok {
		sdp, _ := eval[string](b, `$('#localsdp').text()`)
		t.Errorf("the plain offer lacks G.722 or telephone-event (%v):\n%s", err, sdp)
	}
	// The caller plays what it receives: its audio must carry energy. The callee (the page's fake
	// peer) plays nothing, so Chromium measures no energy there: its audio must arrive.
	for side, energy := range map[string]string{"caller": "s.totalAudioEnergy > 0", "callee": "true"} {
		// waitFor tests a plain expression; getStats is a promise, so this polls it itself.
		js := fmt.Sprintf(`(async () => {
			const report = await %s.webrtcStuff.pc.getStats();
			let ok = false;
			report.forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio' && s.packetsReceived > 50 && %s) ok = true; });
			return ok;
		})()`, side, energy)
		deadline := time.Now().Add(10 * time.Second)
		for ok, err := eval[bool](b, js); !ok; ok, err = eval[bool](b, js) {
			if time.Now().After(deadline) {
				t.Fatalf("the %s's audio did not arrive with energy (%v)", side, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	b.requireCleanConsole("during the NoSIP call")
}
