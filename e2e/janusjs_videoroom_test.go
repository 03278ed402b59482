package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJanusJSVideoRoom runs the videoroom with the unmodified janus.js from Debian's
// libjs-janus-gateway (testdata/janusjs-videoroom.html, in two browsers): the publisher joins and
// publishes its camera with janus.js's `simulcast: true` (three RIDs) over HTTP long-poll; the
// subscriber joins with a streams array, answers strata's offer with createAnswer and sends `start`,
// over the WebSocket. Checked: three layers sent and marked simulcast by strata, the subscriber
// decodes the video, `configure` with substream 0 and then 2 makes the received frames narrower,
// then wider, strata's substream events reach janus.js, text the publisher sends on janus.js's data
// channel reaches the subscriber's ondata on a channel labelled with the feed's id (Janus's
// labelling), and janus.js tears both sessions down without an error.
func TestJanusJSVideoRoom(t *testing.T) {
	srv := startStrata(t)
	createTestRoom(t, srv)
	pages := servePage(t)
	pub, sub := newBrowser(t), newBrowser(t)
	openJanusRoom(pub, pages.URL, "http://"+srv.HTTPAddr()+"/janus")
	openJanusRoom(sub, pages.URL, "ws://"+srv.WSAddr())

	start := time.Now()
	feed, err := eval[string](pub, fmt.Sprintf(`janusRoom.publish(%d, 'janus.js publisher').then(String)`, testRoom))
	if err != nil {
		t.Fatalf("janus.js publish: %v", err)
	}
	t.Logf("janus.js published feed %s, webrtcState(true) %v after joining", feed, time.Since(start).Round(time.Millisecond))
	requireThreeLayersSent(pub, "window.janusRoom.pc", 15*time.Second)
	requireSimulcastPublisher(t, srv)

	start = time.Now()
	mid, err := eval[string](sub, fmt.Sprintf(`janusRoom.subscribe(%d, %s)`, testRoom, feed))
	if err != nil || mid == "" {
		t.Fatalf("janus.js subscribe: mid %q, %v", mid, err)
	}
	t.Logf("janus.js subscribed (video mid %s), webrtcState(true) %v after joining", mid, time.Since(start).Round(time.Millisecond))
	requireDecodedVideo(sub, "window.janusRoom.pc", "the publisher's video at the subscriber", 15*time.Second)

	substreamSwitch{
		t: t, srv: srv, pub: pub, sub: sub,
		pubPC: "window.janusRoom.pc", subPC: "window.janusRoom.pc",
		configure: func(substream int) string { return fmt.Sprintf(`janusRoom.configure(%d)`, substream) },
	}.run()
	// strata announces every change of the forwarded layer as Janus does ({mid, substream, temporal}):
	// down to 0 after the cap, then up again once it is lifted (to a layer above the lowest, as
	// substreamSwitch requires: a CPU-starved browser on this machine can look like a narrow path).
	sub.waitFor("janus.js to see strata's substream events: down to 0, then up again",
		`(ls => { const i = ls.findIndex((l) => l.mid === janusRoom.mid && l.substream === 0);
		          return i >= 0 && ls.slice(i + 1).some((l) => l.mid === janusRoom.mid && l.substream > 0); })(janusRoom.layers)`,
		5*time.Second)

	// The publisher's data channel (janus.js's JanusDataChannel), relayed to the subscriber, which
	// asked for the whole feed and so for its data stream too.
	for i := range 3 {
		if _, err := eval[bool](pub, fmt.Sprintf(`janusRoom.sendData('hello %d from janus.js')`, i)); err != nil {
			t.Fatalf("janus.js data: %v", err)
		}
	}
	sub.waitFor("the publisher's data messages at the subscriber, in order, labelled with the feed id",
		fmt.Sprintf(`janusRoom.data.length === 3 && janusRoom.data.every((m, i) => m.label === '%s' && m.data === 'hello ' + i + ' from janus.js')`, feed),
		10*time.Second)

	pub.screenshot("janusjs-videoroom-publisher")
	sub.screenshot("janusjs-videoroom-subscriber")
	pub.requireCleanConsole("during the call")
	sub.requireCleanConsole("during the call")

	for _, b := range []*browser{sub, pub} {
		if _, err := eval[chromedp.Void](b, `janusRoom.destroy()`); err != nil {
			t.Fatalf("janus.destroy: %v", err)
		}
	}
	waitNoSessions(t, srv, 5*time.Second)
	// As in TestJanusJSEchotest: against Janus, janus.js ends its sessions without an error.
	time.Sleep(500 * time.Millisecond)
	pub.requireCleanConsole("while janus.js destroyed its session")
	sub.requireCleanConsole("while janus.js destroyed its session")
}

// openJanusRoom loads the janus.js videoroom page for the API at api and waits for Janus.init.
func openJanusRoom(b *browser, pages, api string) {
	b.t.Helper()
	b.do(10*time.Second, chromedp.Navigate(pages+"/videoroom.html?server="+url.QueryEscape(api)))
	b.waitFor("Janus.init", `window.janusRoom && window.janusRoom.state === 'ready' && Janus.initDone`, 10*time.Second)
}
