package nosip_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
)

const pkg = "janus.plugin.nosip"

func start(t *testing.T, dir string) *janusclient.Client {
	return janustest.StartServer(t, func(c *config.Config) {
		c.Plugins.NoSIP.LocalIP = "127.0.0.1"
		c.Plugins.NoSIP.RecordingsDir = dir
	}, janustest.Logger())
}

func jsepOf(d webrtc.SessionDescription) *janusclient.JSEP {
	return &janusclient.JSEP{Type: d.Type.String(), SDP: d.SDP}
}

func descOf(t *testing.T, j *janusclient.JSEP) *webrtc.SessionDescription {
	t.Helper()
	if j == nil {
		t.Fatal("no jsep")
	}
	return &webrtc.SessionDescription{Type: webrtc.NewSDPType(j.Type), SDP: j.SDP}
}

// demoCall is Janus's nosiptest page: the caller's generate, the callee's process, the callee's
// generate (answer), the caller's process.
func demoCall(t *testing.T, callerH, calleeH *janusclient.Handle, caller, callee *bridgetest.Browser, srtp string) {
	t.Helper()
	gen := map[string]any{"request": "generate"}
	if srtp != "" {
		gen["srtp"] = srtp
	}
	res, _ := janustest.MustRequest(t, callerH, gen, jsepOf(caller.Offer()))
	r := res["result"].(map[string]any)
	if r["event"] != "generated" || r["type"] != "offer" {
		t.Fatalf("generate: %v", res)
	}
	offer := r["sdp"].(string)
	if srtp != "" && !strings.Contains(offer, "a=crypto:") {
		t.Fatalf("srtp %s offer:\n%s", srtp, offer)
	}
	res, j := janustest.MustRequest(t, calleeH, map[string]any{"request": "process", "type": "offer", "sdp": offer}, nil)
	r = res["result"].(map[string]any)
	if r["event"] != "processed" || (srtp != "") != (r["srtp"] != nil) {
		t.Fatalf("process: %v", res)
	}
	res, _ = janustest.MustRequest(t, calleeH, map[string]any{"request": "generate"}, jsepOf(callee.Answer(descOf(t, j))))
	r = res["result"].(map[string]any)
	if r["event"] != "generated" || r["type"] != "answer" {
		t.Fatalf("generate (answer): %v", res)
	}
	_, j = janustest.MustRequest(t, callerH, map[string]any{"request": "process", "type": "answer", "sdp": r["sdp"]}, nil)
	caller.SetAnswer(descOf(t, j))
}

func TestNoSIPDemoCallWithRecording(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir)
	callerH, calleeH := janustest.Attach(t, c, pkg), janustest.Attach(t, c, pkg)
	caller, callee := bridgetest.NewBrowser(t, 440, true), bridgetest.NewBrowser(t, 1000, true)
	demoCall(t, callerH, calleeH, caller, callee, "sdes_mandatory")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.Send(ctx)
	callee.Send(ctx)
	bridgetest.WaitFor(t, 8*time.Second, "the tones both ways", func() bool {
		return callee.ToneLevel(440, 1600) > 0.1 && caller.ToneLevel(1000, 1600) > 0.1
	})
	bridgetest.WaitFor(t, 5*time.Second, "video both ways", func() bool {
		return caller.VideoFrames.Load() > 10 && callee.VideoFrames.Load() > 10
	})
	res, _ := janustest.MustRequest(t, callerH, map[string]any{"request": "recording", "action": "start",
		"audio": true, "video": true, "peer_audio": true, "filename": "call"}, nil)
	if res["result"].(map[string]any)["event"] != "recordingupdated" {
		t.Fatalf("recording: %v", res)
	}
	time.Sleep(time.Second)
	janustest.MustRequest(t, callerH, map[string]any{"request": "recording", "action": "stop",
		"audio": true, "video": true, "peer_audio": true}, nil)
	for f, codec := range map[string]string{"call-user-audio.mjr": "pcmu", "call-user-video.mjr": "vp8", "call-peer-audio.mjr": "pcmu"} {
		if n, got := mjrFrames(t, filepath.Join(dir, f)); n < 10 || got != codec {
			t.Errorf("%s: %d packets of %q, want %s", f, n, got, codec)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "call-peer-video.mjr")); err == nil {
		t.Error("the peer's video was recorded without peer_video")
	}
	janustest.MustRequest(t, callerH, map[string]any{"request": "keyframe"}, nil)
	res, _ = janustest.MustRequest(t, callerH, map[string]any{"request": "hangup"}, nil)
	if res["result"].(map[string]any)["event"] != "hangingup" {
		t.Fatalf("hangup: %v", res)
	}
}

func TestNoSIPBadInputGetsJanusCodes(t *testing.T) {
	c := start(t, t.TempDir())
	h := janustest.Attach(t, c, pkg)
	cases := []struct {
		name string
		body map[string]any
		code int
	}{
		{"unknown request", map[string]any{"request": "dial"}, 442},
		{"no request", map[string]any{"type": "offer"}, 443},
		{"missing sdp", map[string]any{"request": "process", "type": "offer"}, 443},
		{"sdp not a string", map[string]any{"request": "process", "type": "offer", "sdp": 5}, 444},
		{"bad type", map[string]any{"request": "process", "type": "pranswer", "sdp": "v=0"}, 446},
		{"garbage sdp", map[string]any{"request": "process", "type": "offer", "sdp": "hello"}, 446},
		{"no address", map[string]any{"request": "process", "type": "offer", "sdp": "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"}, 446},
		{"no common codec", map[string]any{"request": "process", "type": "offer", "sdp": plainSDP("m=audio 4000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n")}, 447},
		{"bad crypto", map[string]any{"request": "process", "type": "offer", "sdp": plainSDP("m=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:c2hvcnQ=\r\n")}, 446},
		{"srtp required", map[string]any{"request": "process", "type": "offer", "srtp": "sdes_mandatory", "sdp": plainSDP("m=audio 4000 RTP/AVP 0\r\n")}, 450},
		{"bad srtp", map[string]any{"request": "process", "type": "offer", "srtp": "yes", "sdp": plainSDP("m=audio 4000 RTP/AVP 0\r\n")}, 444},
		{"answer without offer", map[string]any{"request": "process", "type": "answer", "sdp": plainSDP("m=audio 4000 RTP/AVP 0\r\n")}, 445},
		{"generate without jsep", map[string]any{"request": "generate"}, 446},
		{"bad recording action", map[string]any{"request": "recording", "action": "pause", "audio": true}, 444},
		{"recording nothing", map[string]any{"request": "recording", "action": "start"}, 449},
	}
	for _, tc := range cases {
		_, _, err := janustest.Request(t, h, tc.body, nil)
		if got := janusclient.Code(err); got != tc.code {
			t.Errorf("%s: error %v (code %d), want %d", tc.name, err, got, tc.code)
		}
	}
	// The handle still works: a plain offer becomes an offer for the browser.
	_, j := janustest.MustRequest(t, h, map[string]any{"request": "process", "type": "offer",
		"sdp": plainSDP("m=audio 4000 RTP/AVP 8 0 101\r\na=rtpmap:101 telephone-event/8000\r\n")}, nil)
	if j == nil || j.Type != "offer" || !strings.Contains(j.SDP, "PCMA/8000") || strings.Contains(j.SDP, "PCMU") {
		t.Fatalf("jsep %+v", j)
	}
}

func plainSDP(media string) string {
	return "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" + media
}

// mjrFrames reads a recording back: its packets and codec.
func mjrFrames(t *testing.T, path string) (int, string) {
	t.Helper()
	r, err := record.OpenMJR(path)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			return n, r.Info().Codec
		}
		n++
	}
}

// TestTrickleBeforeGenerate: janus.js over HTTP may trickle before its generate arrives, and the
// trickle then creates the handle's PeerConnection. It must still have the bridge's formats, or
// telephone-event (and G.722) drop out of the plain offer.
func TestTrickleBeforeGenerate(t *testing.T) {
	c := start(t, t.TempDir())
	h := janustest.Attach(t, c, pkg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.TrickleDone(ctx); err != nil {
		t.Fatalf("trickle: %v", err)
	}
	res, _ := janustest.MustRequest(t, h, map[string]any{"request": "generate"}, jsepOf(bridgetest.NewBrowser(t, 440, false).Offer()))
	offer, _ := res["result"].(map[string]any)["sdp"].(string)
	if !strings.Contains(offer, "telephone-event/8000") {
		t.Fatalf("the plain offer lacks telephone-event:\n%s", offer)
	}
}
