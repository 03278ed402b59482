package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

const createReq = `{"janus":"create","transaction":"c"}`

// wantLimit checks a refusal: the code, and a reason that names the option.
func wantLimit(t *testing.T, m janus.Message, code janus.Code, option string) {
	t.Helper()
	wantCode(t, m, code)
	if !strings.Contains(m.Error.Reason, option) {
		t.Errorf("reason %q does not name %s", m.Error.Reason, option)
	}
}

func (e *testEnv) destroy(sid uint64) {
	e.t.Helper()
	if m := e.do(`{"janus":"destroy","transaction":"d","session_id":{S}}`, sid, 0); m.Janus != "success" {
		e.t.Fatalf("destroy: %s", janus.Encode(m))
	}
}

func TestSessionLimit(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.Limits.Sessions = 2 })
	first, _ := e.create(), e.create()
	wantLimit(t, e.do(createReq, 0, 0), janus.ErrNotAcceptingSessions, "general.limits.sessions")
	if m := e.do(`{"janus":"ping","transaction":"p"}`, 0, 0); m.Janus != "pong" {
		t.Fatalf("the server stopped serving: %s", janus.Encode(m))
	}
	e.destroy(first)
	e.create() // the slot is free again
}

func TestSessionsPerAddressLimit(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.Limits.SessionsPerAddress = 2 })
	from := func(addr string) Origin { return Origin{Sink: e.sink, RemoteAddr: addr} }
	create := func(addr string) janus.Message { return e.doFrom(from(addr), createReq, 0, 0) }
	first := dataID(t, create("192.0.2.1:40000"))
	dataID(t, create("[::ffff:192.0.2.1]:40001")) // the same IPv4 address, seen through a dual-stack socket
	wantLimit(t, create("192.0.2.1:40002"), janus.ErrNotAcceptingSessions, "general.limits.sessions_per_address")
	dataID(t, create("192.0.2.2:40000")) // another address has its own count
	for i := range 5 {                   // loopback is in unlimited_addresses by default
		dataID(t, create(fmt.Sprintf("127.0.0.1:%d", 50000+i)))
		dataID(t, create(fmt.Sprintf("[::1]:%d", 50000+i)))
	}
	dataID(t, create("")) // an in-process caller without an address is not counted per address
	e.destroy(first)
	dataID(t, create("192.0.2.1:40003"))
	wantLimit(t, create("192.0.2.1:40004"), janus.ErrNotAcceptingSessions, "sessions_per_address")
}

// A session that times out gives its address's slot back, as one destroyed does.
func TestSessionTimeoutFreesAddressSlot(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.General.Limits.SessionsPerAddress = 1
		c.General.SessionTimeout = 200 * time.Millisecond
	}, WithWatchdogInterval(50*time.Millisecond))
	from := Origin{Sink: e.sink, RemoteAddr: "198.51.100.7:1234"}
	dataID(t, e.doFrom(from, createReq, 0, 0))
	wantCode(t, e.doFrom(from, createReq, 0, 0), janus.ErrNotAcceptingSessions)
	eventually(t, "session timed out", func() bool { return e.g.SessionCount() == 0 })
	dataID(t, e.doFrom(from, createReq, 0, 0))
}

func TestHandlesPerSessionLimit(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.Limits.HandlesPerSession = 2 })
	sid := e.create()
	// Failed attaches hold no slot.
	for range 3 {
		m := e.do(`{"janus":"attach","transaction":"a","session_id":{S},"plugin":"`+gatewaytest.FailingPackage+`"}`, sid, 0)
		wantCode(t, m, janus.ErrPluginAttach)
	}
	first, _ := e.attach(sid), e.attach(sid)
	m := e.do(`{"janus":"attach","transaction":"a","session_id":{S},"plugin":"`+gatewaytest.EchoPackage+`"}`, sid, 0)
	wantLimit(t, m, janus.ErrPluginAttach, "general.limits.handles_per_session")
	e.attach(e.create()) // another session has its own handles
	if m := e.do(`{"janus":"detach","transaction":"d","session_id":{S},"handle_id":{H}}`, sid, first); m.Janus != "success" {
		t.Fatalf("detach: %s", janus.Encode(m))
	}
	e.attach(sid)
}

// offerWithMedia is a minimal SDP offer with n m-lines.
func offerWithMedia(n int) string {
	var b strings.Builder
	b.WriteString("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n")
	for i := range n {
		fmt.Fprintf(&b, "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:%d\r\na=rtpmap:111 opus/48000/2\r\n", i)
	}
	return b.String()
}

func TestOfferMediaLimit(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.Limits.OfferMedia = 3 })
	sid := e.create()
	hid := e.attach(sid)
	message := func(typ string, n int) janus.Message {
		sdpJSON, _ := json.Marshal(offerWithMedia(n))
		return e.do(`{"janus":"message","transaction":"m","session_id":{S},"handle_id":{H},"body":{"request":"sync"},"jsep":{"type":"`+typ+`","sdp":`+string(sdpJSON)+`}}`, sid, hid)
	}
	wantLimit(t, message("offer", 10000), janus.ErrJSEPInvalidSDP, "general.limits.offer_media")
	wantLimit(t, message("offer", 4), janus.ErrJSEPInvalidSDP, "offer_media")
	if n := len(e.echo.Session(hid).Transactions()); n != 0 {
		t.Fatalf("the plugin saw %d refused offers", n)
	}
	if m := message("offer", 3); m.Janus != "success" {
		t.Fatalf("offer with 3 m-lines: %s", janus.Encode(m))
	}
}

// mediaEnv is a gateway with a real PeerConnection factory on loopback.
func mediaEnv(t *testing.T, mutate func(*config.Config)) *testEnv {
	t.Helper()
	cfg := config.Default()
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	if mutate != nil {
		mutate(cfg)
	}
	factory, err := peer.NewFactory(cfg.Media, quietLogger(), peer.WithLimits(peer.Limits{RemoteCandidates: cfg.General.Limits.RemoteCandidates}))
	if err != nil {
		t.Fatal(err)
	}
	echo := gatewaytest.NewEcho()
	g := New(cfg, factory, []plugin.Plugin{echo}, quietLogger(), nil)
	t.Cleanup(func() { g.Close(); factory.Close() })
	return &testEnv{t: t, g: g, echo: echo, sink: gatewaytest.NewSink()}
}

// trickleMany sends one trickle with n host candidates at distinct addresses on port 9.
func (e *testEnv) trickleMany(sid, hid uint64, n int) janus.Message {
	e.t.Helper()
	cands := make([]string, n)
	for i := range cands {
		cands[i] = fmt.Sprintf(`{"candidate":"candidate:%d 1 udp 2130706431 127.0.%d.%d 9 typ host","sdpMid":"0","sdpMLineIndex":0}`, i, i/250, 1+i%250)
	}
	return e.do(`{"janus":"trickle","transaction":"t","session_id":{S},"handle_id":{H},"candidates":[`+strings.Join(cands, ",")+`]}`, sid, hid)
}

func TestTrickleCandidateLimits(t *testing.T) {
	e := mediaEnv(t, func(c *config.Config) {
		c.General.Limits.TrickleCandidates = 50
		c.General.Limits.RemoteCandidates = 10
	})
	sid := e.create()
	hid := e.attach(sid)
	wantLimit(t, e.trickleMany(sid, hid, 9000), janus.ErrWebRTCState, "general.limits.trickle_candidates")
	m := e.trickleMany(sid, hid, 12) // queued before the offer: 10 fit
	wantLimit(t, m, janus.ErrWebRTCState, "general.limits.remote_candidates")
	if !strings.Contains(m.Error.Reason, "2 of 12") {
		t.Errorf("reason %q does not say how many were not used", m.Error.Reason)
	}
	if m := e.trickleMany(sid, hid, 10); m.Janus != "ack" { // the same 10 again: duplicates
		t.Fatalf("re-trickling accepted candidates: %s", janus.Encode(m))
	}
	// Another handle has its own PeerConnection and its own limit.
	if m := e.trickleMany(sid, e.attach(sid), 10); m.Janus != "ack" {
		t.Fatalf("another handle: %s", janus.Encode(m))
	}
}

// Candidates trickled once ICE is connected are acknowledged and ignored, and the ack says why.
func TestTrickleAfterICEConnectedIsIgnored(t *testing.T) {
	e := mediaEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	pc := newLoopbackClient(t)
	offer, cands := gatheredOffer(t, pc)
	sdpJSON, _ := json.Marshal(offer + "\r\n" + "a=" + strings.Join(cands, "\r\na=") + "\r\n")
	if m := e.do(`{"janus":"message","transaction":"o","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"offer","sdp":`+string(sdpJSON)+`}}`, sid, hid); m.Janus != "ack" {
		t.Fatalf("offer: %s", janus.Encode(m))
	}
	answer, _ := awaitAnswer(t, e.sink, false)
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.sink.WaitFor("webrtcup", 10*time.Second); !ok {
		t.Fatal("no webrtcup")
	}
	m := e.trickleMany(sid, hid, 3)
	if m.Janus != "ack" || !strings.Contains(m.Hint, "3 candidates ignored: ICE is already connected") {
		t.Fatalf("trickle after ICE connected: %s", janus.Encode(m))
	}
}

func TestPeerConnectionLimit(t *testing.T) {
	e := mediaEnv(t, func(c *config.Config) { c.General.Limits.PeerConnections = 1 })
	sid := e.create()
	first, second := e.attach(sid), e.attach(sid)
	if m := e.trickleMany(sid, first, 1); m.Janus != "ack" { // a trickle creates the PeerConnection
		t.Fatalf("first PeerConnection: %s", janus.Encode(m))
	}
	wantLimit(t, e.trickleMany(sid, second, 1), janus.ErrWebRTCState, "general.limits.peer_connections")
	if m := e.do(`{"janus":"hangup","transaction":"h","session_id":{S},"handle_id":{H}}`, sid, first); m.Janus != "success" {
		t.Fatalf("hangup: %s", janus.Encode(m))
	}
	eventually(t, "the hung-up PeerConnection's slot is free", func() bool {
		return e.trickleMany(sid, second, 1).Janus == "ack"
	})
}
