package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/server"
)

// createRoom creates a room through the admin API's message_plugin (the videoroom's `create`);
// options are further members of the request, e.g. `"videocodec":"vp9"`.
func createRoom(t *testing.T, srv *server.Server, room uint64, options string) {
	t.Helper()
	var reply struct {
		Janus    string `json:"janus"`
		Response struct {
			Videoroom string      `json:"videoroom"`
			Room      json.Number `json:"room"`
			ErrorCode int         `json:"error_code"`
			Error     string      `json:"error"`
		} `json:"response"`
	}
	adminCall(t, srv, fmt.Sprintf(`{"janus":"message_plugin","plugin":"janus.plugin.videoroom","request":`+
		`{"request":"create","room":%d,"publishers":4,"audiocodec":"opus",%s}}`, room, options), &reply)
	if reply.Janus != "success" || reply.Response.Videoroom != "created" || reply.Response.Room.String() != fmt.Sprint(room) {
		t.Fatalf("creating room %d: %+v", room, reply)
	}
}

// roomRequest sends a synchronous videoroom request through the admin API and returns the
// plugin's response.
func roomRequest(t *testing.T, srv *server.Server, request string) map[string]any {
	t.Helper()
	var reply struct {
		Janus    string         `json:"janus"`
		Response map[string]any `json:"response"`
	}
	adminCall(t, srv, `{"janus":"message_plugin","plugin":"janus.plugin.videoroom","request":`+request+`}`, &reply)
	if reply.Janus != "success" {
		t.Fatalf("admin message_plugin %s: %+v", request, reply)
	}
	return reply.Response
}

// featurePage is testdata/janusjs-features.html in one browser: any number of janus.js
// publishers and subscribers, each with its own session, driven through window.feat.
type featurePage struct{ *browser }

// participant is one publisher or subscriber on the page: its key in feat.parts, its feed id
// (publishers) and its mids by kind.
type participant struct {
	Key  string            `json:"key"`
	Feed uint64            `json:"feed"`
	Mids map[string]string `json:"mids"`
}

// pc is the JavaScript expression of the participant's PeerConnection.
func (p participant) pc() string { return fmt.Sprintf("feat.parts[%q].pc", p.Key) }

// part is the JavaScript expression of the participant's state on the page.
func (p participant) part() string { return fmt.Sprintf("feat.parts[%q]", p.Key) }

// use makes the page report failures to t (a subtest sharing the browser) until t ends, and
// returns the page.
func (p featurePage) use(t *testing.T) featurePage {
	prev := p.t
	p.t = t
	t.Cleanup(func() { p.t = prev })
	return p
}

// openFeatures loads the features page for the Janus API at api and waits for Janus.init.
func openFeatures(b *browser, pages, api string) featurePage {
	b.t.Helper()
	b.do(10*time.Second, chromedp.Navigate(pages+"/features.html?server="+url.QueryEscape(api)))
	b.waitFor("Janus.init", `window.feat && window.feat.state === 'ready' && Janus.initDone`, 10*time.Second)
	return featurePage{b}
}

// publish runs feat.publish with opts (a JavaScript object literal) and returns the publisher.
func (p featurePage) publish(opts string) participant {
	p.t.Helper()
	start := time.Now()
	pub, err := evalWithin[participant](p.browser, 20*time.Second, "feat.publish("+opts+")")
	if err != nil || pub.Feed == 0 || pub.Mids["video"] == "" {
		p.t.Fatalf("feat.publish(%s): %+v, %v", opts, pub, err)
	}
	p.t.Logf("published feed %d (%s), webrtcState(true) %v after the request", pub.Feed, opts, time.Since(start).Round(time.Millisecond))
	p.destroyAtEnd(pub)
	return pub
}

// subscribe subscribes to streams (a JavaScript array literal) in room.
func (p featurePage) subscribe(room uint64, streams string) participant {
	p.t.Helper()
	start := time.Now()
	sub, err := evalWithin[participant](p.browser, 20*time.Second, fmt.Sprintf("feat.subscribe({room: %d, streams: %s})", room, streams))
	if err != nil || sub.Mids["video"] == "" {
		p.t.Fatalf("feat.subscribe(%d, %s): %+v, %v", room, streams, sub, err)
	}
	p.t.Logf("subscribed to %s, webrtcState(true) %v after the request", streams, time.Since(start).Round(time.Millisecond))
	p.destroyAtEnd(sub)
	return sub
}

// request sends message (a JavaScript object literal) on a participant's handle and returns the
// first event for which until (a JavaScript function of the message) holds.
func (p featurePage) request(who participant, message, until string) map[string]any {
	p.t.Helper()
	reply, err := evalWithin[map[string]any](p.browser, 15*time.Second, fmt.Sprintf("feat.request(%q, %s, %s)", who.Key, message, until))
	if err != nil {
		p.t.Fatalf("%s: request %s: %v", who.Key, message, err)
	}
	return reply
}

// destroy ends a participant's janus.js session (janus.destroy), unless it ended already.
func (p featurePage) destroy(who participant) {
	p.t.Helper()
	if _, err := eval[chromedp.Void](p.browser, fmt.Sprintf("feat.destroy(%q)", who.Key)); err != nil {
		p.t.Errorf("%s: janus.destroy: %v", who.Key, err)
	}
}

// destroyAtEnd destroys the participant when the current test ends. Cleanups run last first, so a
// subscriber created after its publisher goes first; otherwise destroy the subscriber explicitly:
// a publisher leaving first makes strata send its subscribers a new offer, whose answer janus.js
// could be sending on a socket its destroy just closed.
func (p featurePage) destroyAtEnd(who participant) {
	t := p.t
	t.Cleanup(func() {
		if _, err := eval[chromedp.Void](p.browser, fmt.Sprintf("feat.destroy(%q)", who.Key)); err != nil {
			t.Errorf("%s: janus.destroy: %v", who.Key, err)
		}
	})
}

// requireCleanTeardown makes the test, once it ended and every participant's janus.destroy ran,
// check that strata has no session left and that janus.js logged no error while destroying them.
// Call it before the first participant is created: cleanups run last first.
func (p featurePage) requireCleanTeardown(srv *server.Server) {
	t := p.t
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		waitNoSessions(t, srv, 5*time.Second)
		p.requireCleanDestroy("while janus.js destroyed its sessions")
	})
}

// evalWithin is eval with a longer deadline, for promises that span a negotiation.
func evalWithin[T any](b *browser, timeout time.Duration, js string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// framesFlowing checks that the PeerConnection pcExpr decodes new video frames over 1.5 s and
// returns the later stats.
func framesFlowing(b *browser, pcExpr, what string) videoStats {
	b.t.Helper()
	before, err := readInboundVideo(b, pcExpr)
	if err != nil || before == nil {
		b.t.Fatalf("%s: reading inbound video: %+v, %v", what, before, err)
	}
	time.Sleep(1500 * time.Millisecond)
	after, err := readInboundVideo(b, pcExpr)
	if err != nil || after == nil || after.FramesDecoded < before.FramesDecoded+5 {
		b.t.Fatalf("%s: video stalled: framesDecoded %d, then %+v 1.5 s later (err %v)", what, before.FramesDecoded, after, err)
	}
	return *after
}

// waitInbound polls the inbound video of pcExpr until ok holds for it, and returns it.
func waitInbound(b *browser, pcExpr, what string, timeout time.Duration, ok func(v videoStats) bool) videoStats {
	b.t.Helper()
	start := time.Now()
	var last *videoStats
	for {
		v, err := readInboundVideo(b, pcExpr)
		if err == nil && v != nil {
			last = v
			if ok(*v) {
				b.t.Logf("%s: %dx%d, %d frames decoded, after %v", what, v.FrameWidth, v.FrameHeight, v.FramesDecoded, time.Since(start).Round(100*time.Millisecond))
				return *v
			}
		}
		if time.Since(start) > timeout {
			b.t.Fatalf("timed out after %v waiting for %s: last inbound video %+v (err %v)", timeout, what, last, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sentVideo is the outbound-rtp video entry of a publishing PeerConnection (one encoding).
type sentVideo struct {
	Codec           string `json:"codec"`
	ScalabilityMode string `json:"scalabilityMode"`
	FrameWidth      int    `json:"frameWidth"`
	FrameHeight     int    `json:"frameHeight"`
	FramesEncoded   int    `json:"framesEncoded"`
}

const sentVideoJS = `(async () => {
  const pc = %s;
  if (!pc) return null;
  const report = await pc.getStats();
  let v = null;
  report.forEach((s) => { if (s.type === 'outbound-rtp' && s.kind === 'video') v = s; });
  if (!v) return null;
  const codec = v.codecId && report.get(v.codecId);
  return { codec: codec ? codec.mimeType : '', scalabilityMode: v.scalabilityMode || '', frameWidth: v.frameWidth || 0,
           frameHeight: v.frameHeight || 0, framesEncoded: v.framesEncoded || 0 };
})()`

// requireSending waits until the publisher's PeerConnection encodes video with codec (a MIME
// type), and returns what it sends.
func requireSending(b *browser, pcExpr, codec string, timeout time.Duration) sentVideo {
	b.t.Helper()
	start := time.Now()
	var last *sentVideo
	for {
		v, err := eval[*sentVideo](b, fmt.Sprintf(sentVideoJS, pcExpr))
		if err == nil && v != nil {
			last = v
			if strings.EqualFold(v.Codec, codec) && v.FramesEncoded > 5 && v.FrameWidth > 0 {
				return *v
			}
		}
		if time.Since(start) > timeout {
			b.t.Fatalf("the publisher did not send %s video within %v: outbound video %+v (err %v)", codec, timeout, last, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// requirePublisherStream waits until strata's view (handle_info) of a publisher's video stream
// shows codec and packets received, and returns it.
func requirePublisherStream(t *testing.T, srv *server.Server, feed uint64, codec string) videoroomStream {
	t.Helper()
	var last videoroomStream
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, h := range videoroomHandles(t, srv) {
			if h.Type != "publisher" || h.ID != feed {
				continue
			}
			for _, s := range h.Streams {
				if s.Type == "video" {
					last = s
				}
			}
		}
		if last.Codec == codec && last.Packets > 0 {
			return last
		}
	}
	t.Fatalf("handle_info shows publisher %d's video as %+v, want %s with packets received", feed, last, codec)
	return last
}
