package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/server"
)

// TestJanusJSVideoCall runs a video call with the unmodified janus.js from Debian's
// libjs-janus-gateway (testdata/janusjs-videocall.html): two users, each with its own janus.js
// session over the WebSocket, register, alice calls bob, bob answers as Janus's videocalltest demo
// does (createAnswer, accept), and each decodes the other's camera. Data sent with janus.js's
// data() reaches the other user, a hangup reaches the peer with Janus's reason, and janus.js tears
// both sessions down without an error.
func TestJanusJSVideoCall(t *testing.T) {
	srv := startStrata(t)
	b := openVideoCallPage(t, srv, "")

	start := time.Now()
	if _, err := evalWithin[bool](b, 20*time.Second, `vc.users.alice.call('bob')`); err != nil {
		t.Fatalf("alice calling bob: %v", err)
	}
	t.Logf("alice's webrtcState(true) %v after calling", time.Since(start).Round(time.Millisecond))
	b.waitFor("bob's PeerConnection up", `vc.users.bob.up || vc.state === 'error'`, 15*time.Second)
	if msg, _ := eval[string](b, `vc.error || ''`); msg != "" {
		t.Fatalf("janus.js reported an error: %s", msg)
	}
	requireDecodedVideo(b, "vc.users.alice.pc", "bob's video at alice", 20*time.Second)
	requireDecodedVideo(b, "vc.users.bob.pc", "alice's video at bob", 20*time.Second)

	b.waitFor("both data channels open", `vc.users.alice.dataOpen && vc.users.bob.dataOpen`, 10*time.Second)
	for _, m := range []struct{ from, to, text string }{{"alice", "bob", "hello bob"}, {"bob", "alice", "hello alice"}} {
		if _, err := eval[chromedp.Void](b, `vc.users.`+m.from+`.send('`+m.text+`')`); err != nil {
			t.Fatalf("%s sending data: %v", m.from, err)
		}
		b.waitFor(m.to+" receiving "+m.from+"'s data", `vc.users.`+m.to+`.data.includes('`+m.text+`')`, 10*time.Second)
	}
	b.screenshot("janusjs-videocall")
	b.requireCleanConsole("during the call")

	// A hangup closes both PeerConnections from the server's side, as Janus's close_pc does; strata
	// closes their data channels first, so janus.js sees plain closes and logs no error.
	if _, err := eval[chromedp.Void](b, `vc.users.bob.hangup()`); err != nil {
		t.Fatalf("hangup: %v", err)
	}
	b.waitFor("alice hearing bob's hangup", `vc.users.alice.hangups.includes('We did the hangup')`, 10*time.Second)
	for _, name := range []string{"alice", "bob"} {
		if _, err := eval[chromedp.Void](b, `vc.users.`+name+`.destroy()`); err != nil {
			t.Fatalf("janus.destroy %s: %v", name, err)
		}
	}
	waitNoSessions(t, srv, 5*time.Second)
	time.Sleep(500 * time.Millisecond)
	b.requireCleanConsole("while janus.js destroyed its sessions")
}

// TestJanusJSVideoCallSimulcastBothWays: with plugins.videocall.callee_simulcast, a janus.js caller
// sending simulcast (janus.js's `simulcast: true`) gets a callee that sends simulcast too: strata's
// offer asks the callee's Chromium for three layers, which it sends (at 1/4, 1/2 and the full
// 1280×720), alice gets more than bob's lowest layer, and each side decodes the other's video.
func TestJanusJSVideoCallSimulcastBothWays(t *testing.T) {
	srv := startStrata(t, func(cfg *config.Config) { cfg.Plugins.VideoCall.CalleeSimulcast = true })
	b := openVideoCallPage(t, srv, "&simulcast=1")
	if _, err := evalWithin[bool](b, 20*time.Second, `vc.users.alice.call('bob')`); err != nil {
		t.Fatalf("alice calling bob: %v", err)
	}
	b.waitFor("bob's PeerConnection up", `vc.users.bob.up || vc.state === 'error'`, 15*time.Second)
	requireThreeLayersSent(b, "vc.users.alice.pc", 20*time.Second)
	requireThreeLayersSent(b, "vc.users.bob.pc", 20*time.Second)
	// strata starts alice on bob's lowest layer and moves up as her estimate grows; a move waits
	// for bob's next keyframe of that layer, so decoding is checked once she is above the lowest.
	waitInbound(b, "vc.users.alice.pc", "bob's video at alice above his lowest layer", 20*time.Second,
		func(v videoStats) bool { return v.FrameWidth > 320 })
	requireDecodedVideo(b, "vc.users.alice.pc", "bob's simulcast video at alice", 20*time.Second)
	requireDecodedVideo(b, "vc.users.bob.pc", "alice's simulcast video at bob", 20*time.Second)
	b.requireCleanConsole("during the call")
}

// TestJanusJSVideoCallVP9SVC: a janus.js caller sending VP9 L3T3_KEY (janus.js's codec and svc) is
// relayed by layer: the callee first gets the top spatial layer, then `set` spatial_layer 0 brings
// it a quarter of the width, with strata's svc event {spatial_layer: 0}.
func TestJanusJSVideoCallVP9SVC(t *testing.T) {
	srv := startStrata(t)
	b := openVideoCallPage(t, srv, "&svc=L3T3_KEY")
	if _, err := evalWithin[bool](b, 20*time.Second, `vc.users.alice.call('bob')`); err != nil {
		t.Fatalf("alice calling bob: %v", err)
	}
	sent := requireSending(b, "vc.users.alice.pc", "video/VP9", 15*time.Second)
	if sent.ScalabilityMode != "L3T3_KEY" {
		t.Fatalf("alice's VP9 encoding has scalabilityMode %q, want L3T3_KEY", sent.ScalabilityMode)
	}
	// Chromium starts its encoder small and grows it with the estimate (and shrinks it when the
	// machine is busy): the top layer is taken once bob gets at least 640 pixels of width, so that
	// a quarter of it is a different layer.
	full := waitInbound(b, "vc.users.bob.pc", "alice's top spatial layer at bob", 20*time.Second,
		func(v videoStats) bool { return v.FrameWidth >= 640 })
	before, err := eval[int](b, `vc.users.bob.results.length`)
	if err != nil {
		t.Fatalf("bob's results: %v", err)
	}
	if _, err := eval[chromedp.Void](b, `vc.users.bob.set({ spatial_layer: 0 })`); err != nil {
		t.Fatalf("set spatial_layer: %v", err)
	}
	waitInbound(b, "vc.users.bob.pc", "alice's lowest spatial layer at bob after spatial_layer 0", 10*time.Second,
		func(v videoStats) bool { return v.FrameWidth > 0 && v.FrameWidth <= full.FrameWidth/4 })
	b.waitFor("strata's svc event at bob after the set", fmt.Sprintf(
		`vc.users.bob.results.slice(%d).some((r) => r.event === 'svc' && r.spatial_layer === 0)`, before), 5*time.Second)
	framesFlowing(b, "vc.users.bob.pc", "alice's lowest VP9 layer at bob")
	b.requireCleanConsole("during the call")
}

// openVideoCallPage opens the janus.js videocall page against srv's WebSocket (query: more
// parameters) and registers alice and bob.
func openVideoCallPage(t *testing.T, srv *server.Server, query string) *browser {
	t.Helper()
	pages := servePage(t)
	b := newBrowser(t)
	b.do(10*time.Second, chromedp.Navigate(pages.URL+"/videocall.html?server="+url.QueryEscape("ws://"+srv.WSAddr())+query))
	b.waitFor("Janus.init", `window.vc && window.vc.state === 'ready' && Janus.initDone`, 10*time.Second)
	for _, name := range []string{"alice", "bob"} {
		if got, err := eval[string](b, `vc.user('`+name+`')`); err != nil || got != name {
			t.Fatalf("register %s: %q, %v", name, got, err)
		}
	}
	return b
}
