package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// topSentWidthJS is the width of the widest encoding the PeerConnection pcExpr sends.
const topSentWidthJS = `(async () => {
  const pc = %s;
  if (!pc) return 0;
  let w = 0;
  (await pc.getStats()).forEach((s) => { if (s.type === 'outbound-rtp' && s.kind === 'video') w = Math.max(w, s.frameWidth || 0); });
  return w;
})()`

// TestJanusJSEchotestLayers runs the echotest with janus.js as Janus's echotest demo does with
// simulcast and with VP9 SVC, so that the echo goes through the media core's layer selection: the
// browser sends three simulcast encodings (or one L3T3_KEY VP9 stream), the echo is the top layer,
// substream 0 (spatial_layer 0) brings the lowest one with Janus's event, and the top layer comes
// back when asked for.
func TestJanusJSEchotestLayers(t *testing.T) {
	for _, c := range []struct {
		name, query, spatial string
	}{
		{"simulcast", "&simulcast=1&capture=hires-16:9", "substream"},
		{"vp9-svc", "&vcodec=vp9&svc=L3T3_KEY&capture=hires-16:9", "spatial_layer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startStrata(t)
			pages := servePage(t)
			b := newBrowser(t)
			b.do(10*time.Second, chromedp.Navigate(pages.URL+"/?server="+url.QueryEscape("ws://"+srv.WSAddr())+c.query))
			b.waitFor("Janus.init", `window.janusTest && window.janusTest.state === 'ready' && Janus.initDone`, 10*time.Second)
			b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
			b.waitFor("webrtcState(true)", `window.janusTest.webrtcUp || window.janusTest.state === 'error'`, 20*time.Second)
			if msg, _ := eval[string](b, `window.janusTest.error || ''`); msg != "" {
				t.Fatalf("janus.js reported an error: %s", msg)
			}
			const pc = "window.janusTest.handle && window.janusTest.handle.webrtcStuff.pc"
			requireEchoedVideo(b, pc, 20*time.Second)
			top := waitInbound(b, pc, "the top layer echoed", 20*time.Second, func(v videoStats) bool {
				sent, err := eval[int](b, fmt.Sprintf(topSentWidthJS, pc))
				return err == nil && sent >= 640 && v.FrameWidth == sent
			})

			sendAndWaitEvent := func(layer int) {
				t.Helper()
				if _, err := eval[chromedp.Void](b, fmt.Sprintf(`window.janusTest.send({%s: %d})`, c.spatial, layer)); err != nil {
					t.Fatal(err)
				}
				b.waitFor(fmt.Sprintf("the %s %d event", c.spatial, layer),
					fmt.Sprintf(`window.janusTest.events.some((e) => e.includes('"%s":%d'))`, c.spatial, layer), 10*time.Second)
			}
			sendAndWaitEvent(0)
			waitInbound(b, pc, "the lowest layer echoed", 10*time.Second, func(v videoStats) bool {
				return v.FrameWidth > 0 && v.FrameWidth <= top.FrameWidth/4
			})
			framesFlowing(b, pc, "the lowest layer")
			sendAndWaitEvent(2)
			waitInbound(b, pc, "the top layer echoed again", 15*time.Second, func(v videoStats) bool {
				return v.FrameWidth == top.FrameWidth
			})
			framesFlowing(b, pc, "the top layer")
			b.screenshot("janusjs-echotest-" + c.name)
			b.requireCleanConsole("during the call")
		})
	}
}
