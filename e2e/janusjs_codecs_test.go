package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/server"
)

// Rooms of the codec tests, one per codec.
const (
	vp9Room  = 5101
	h264Room = 5102
	av1Room  = 5103
)

// TestJanusJSVideoRoomCodecs publishes with janus.js, in one browser, into rooms whose videocodec
// is VP9, H.264 and AV1, and subscribes with janus.js in the same page:
//
//   - VP9SVC: the publisher sends one 1280×720 VP9 encoding with scalabilityMode L3T3_KEY
//     (janus.js's `svc`; at 640×360 Chromium falls back to L2T3_KEY) and strata marks the stream
//     SVC; the subscriber decodes the top spatial layer; `configure` with spatial_layer 0 brings a
//     quarter of the width and strata's spatial_layer event, temporal_layer 0 there at most half the
//     frame rate of temporal_layer 2; spatial_layer 2 brings a wider layer back.
//   - H264, AV1: the publisher encodes that codec, strata forwards it, the subscriber decodes it.
func TestJanusJSVideoRoomCodecs(t *testing.T) {
	srv := startStrata(t)
	pages := servePage(t)
	page := openFeatures(newBrowser(t), pages.URL, "ws://"+srv.WSAddr())
	page.requireCleanTeardown(srv)

	t.Run("VP9SVC", func(t *testing.T) { testVP9SVC(t, srv, page.use(t)) })
	for _, c := range []struct {
		name string
		room uint64
		mime string
	}{{"h264", h264Room, "video/H264"}, {"av1", av1Room, "video/AV1"}} {
		t.Run(strings.ToUpper(c.name), func(t *testing.T) {
			page.use(t)
			createRoom(t, srv, c.room, fmt.Sprintf(`"videocodec":%q`, c.name))
			pub := page.publish(fmt.Sprintf(`{room: %d, display: %q, video: 'lowres-16:9'}`, c.room, c.name))
			sent := requireSending(page.browser, pub.pc(), c.mime, 10*time.Second)
			t.Logf("the publisher encodes %s at %dx%d", sent.Codec, sent.FrameWidth, sent.FrameHeight)
			requirePublisherStream(t, srv, pub.Feed, c.name)
			sub := page.subscribe(c.room, fmt.Sprintf("[{feed: %d}]", pub.Feed))
			got := requireDecodedVideo(page.browser, sub.pc(), c.name+" video at the subscriber", 15*time.Second)
			if !strings.EqualFold(got.Codec, c.mime) {
				t.Fatalf("the subscriber decodes %q, want %s", got.Codec, c.mime)
			}
			page.requireCleanConsole("during the " + c.name + " call")
		})
	}
}

// testVP9SVC: one VP9 L3T3_KEY publisher, one subscriber, spatial and temporal caps down and up.
func testVP9SVC(t *testing.T, srv *server.Server, page featurePage) {
	createRoom(t, srv, vp9Room, `"videocodec":"vp9"`)
	pub := page.publish(fmt.Sprintf(`{room: %d, display: 'svc', video: 'hires-16:9', svc: 'L3T3_KEY'}`, vp9Room))
	sent := requireSending(page.browser, pub.pc(), "video/VP9", 10*time.Second)
	t.Logf("the publisher encodes %s %s at %dx%d", sent.Codec, sent.ScalabilityMode, sent.FrameWidth, sent.FrameHeight)
	if sent.ScalabilityMode != "L3T3_KEY" {
		t.Fatalf("the publisher's VP9 encoding has scalabilityMode %q, want L3T3_KEY", sent.ScalabilityMode)
	}
	if st := requirePublisherStream(t, srv, pub.Feed, "vp9"); !st.SVC || st.Simulcast {
		t.Fatalf("handle_info shows the publisher's video as %+v, want it marked svc", st)
	}

	sub := page.subscribe(vp9Room, fmt.Sprintf("[{feed: %d}]", pub.Feed))
	requireDecodedVideo(page.browser, sub.pc(), "the VP9 video at the subscriber", 15*time.Second)
	full := waitInbound(page.browser, sub.pc(), "the top spatial layer", 20*time.Second, func(v videoStats) bool {
		top, err := eval[*sentVideo](page.browser, fmt.Sprintf(sentVideoJS, pub.pc()))
		return err == nil && top != nil && v.FrameWidth == top.FrameWidth
	})
	page.screenshot("janusjs-vp9-svc")

	configure := func(spatial, temporal int) {
		page.request(sub, fmt.Sprintf(`{request: 'configure', streams: [{mid: %q, spatial_layer: %d, temporal_layer: %d}]}`,
			sub.Mids["video"], spatial, temporal), `(m) => m.configured === 'ok'`)
	}
	// Spatial layer 0 of L3T3 is a quarter of the width; its temporal layers are measured there,
	// where the path surely carries them all (at the top the allocator may leave out temporal
	// layers the subscriber's estimate does not cover yet).
	configure(0, 2)
	low := waitInbound(page.browser, sub.pc(), "the lowest spatial layer after spatial_layer 0", 10*time.Second, func(v videoStats) bool {
		return v.FrameWidth > 0 && v.FrameWidth <= full.FrameWidth/4
	})
	page.waitFor("the spatial_layer 0 event at janus.js",
		fmt.Sprintf(`%s.messages.some((m) => m.mid === %q && m.spatial_layer === 0)`, sub.part(), sub.Mids["video"]), 5*time.Second)
	allTemporal := frameRate(page.browser, sub.pc())
	configure(0, 0)
	time.Sleep(500 * time.Millisecond) // temporal layers go down at the next frame; let the decoder's queue drain
	baseTemporal := frameRate(page.browser, sub.pc())
	t.Logf("spatial layer 0: %.1f frames/s with temporal_layer 2, %.1f with temporal_layer 0", allTemporal, baseTemporal)
	if baseTemporal > allTemporal/2 || baseTemporal == 0 {
		t.Fatalf("temporal_layer 0 should leave a quarter of the frames: %.1f frames/s, after %.1f with temporal_layer 2", baseTemporal, allTemporal)
	}

	// Back up: strata's estimate of the subscriber's path fell with what it sent under the cap and
	// has to grow again before the top layer (or all temporal layers of a higher one) returns, so a
	// wider layer is enough here (as in substreamSwitch); the test does not measure how fast the
	// allocator climbs.
	configure(2, 2)
	waitInbound(page.browser, sub.pc(), "a wider layer after spatial_layer 2", 15*time.Second, func(v videoStats) bool {
		return v.FrameWidth > low.FrameWidth
	})
	framesFlowing(page.browser, sub.pc(), "the VP9 video after spatial_layer 2")
	page.requireCleanConsole("during the VP9 call")
}

// frameRate measures the decoded frames per second of pcExpr's inbound video over 2 s.
func frameRate(b *browser, pcExpr string) float64 {
	b.t.Helper()
	const window = 2 * time.Second
	before, err := readInboundVideo(b, pcExpr)
	if err != nil || before == nil {
		b.t.Fatalf("reading inbound video: %v", err)
	}
	start := time.Now()
	time.Sleep(window)
	after, err := readInboundVideo(b, pcExpr)
	if err != nil || after == nil {
		b.t.Fatalf("reading inbound video: %v", err)
	}
	return float64(after.FramesDecoded-before.FramesDecoded) / time.Since(start).Seconds()
}
