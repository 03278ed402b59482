package server

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/peer/peertest"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
)

// startEchoServer runs a complete strata on free loopback ports, with loopback ICE candidates.
func startEchoServer(t *testing.T) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.AdminSecret = testAdminSecret
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Plugins.Streaming.FreePorts()
	return startServer(t, cfg)
}

// TestEchotestOverHTTPAndWebSocket does a whole echotest call with the Go client, once over HTTP
// long-poll and once over WebSocket: attach, offer with trickled candidates, answer, webrtcup, media
// events, echoed audio and video, data channel echo, a plugin error, hangup, detach, destroy.
func TestEchotestOverHTTPAndWebSocket(t *testing.T) {
	srv := startEchoServer(t)
	for name, url := range map[string]string{
		"http": "http://" + srv.HTTPAddr() + "/janus",
		"ws":   "ws://" + srv.WSAddr(),
	} {
		t.Run(name, func(t *testing.T) { echotestCall(t, url, "http://"+srv.AdminAddr()+"/admin") })
	}
}

func echotestCall(t *testing.T, url, admin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if info, err := c.Info(ctx); err != nil || info.Janus != "server_info" {
		t.Fatalf("info: %v %v", info, err)
	}
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Attach(ctx, "janus.plugin.nope"); janusclient.Code(err) != 460 {
		t.Errorf("attach to an unknown plugin: %v, want core error 460", err)
	}
	h, err := sess.Attach(ctx, "janus.plugin.echotest")
	if err != nil {
		t.Fatal(err)
	}

	b := newEchoBrowser(t)
	offer := b.offerTrickling(t, func(cand janusclient.Candidate) {
		if err := h.Trickle(ctx, cand); err != nil {
			t.Errorf("trickle: %v", err)
		}
	})
	ev, err := h.Message(ctx, map[string]any{"audio": true, "video": true}, &janusclient.JSEP{Type: "offer", SDP: offer})
	if err != nil {
		t.Fatalf("offer: %v", err)
	}
	var result struct{ Echotest, Result string }
	if err := ev.DecodeData(&result); err != nil || ev.Janus != "event" || result.Echotest != "event" || result.Result != "ok" {
		t.Fatalf("offer answered with %s", ev.Raw)
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" || !strings.Contains(ev.JSEP.SDP, "a=end-of-candidates") {
		t.Fatalf("no half-trickle answer in %s", ev.Raw)
	}
	if err := h.TrickleDone(ctx); err != nil {
		t.Errorf("trickle completed: %v", err)
	}
	if err := b.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		t.Fatal(err)
	}

	waitEvent(t, h, "webrtcup", func(e *janusclient.Event) bool { return e.Janus == "webrtcup" })
	stop := make(chan struct{})
	defer close(stop)
	go b.sendMedia(stop)
	waitEvent(t, h, "media receiving video", func(e *janusclient.Event) bool {
		return e.Janus == "media" && e.Type == "video" && e.Receiving != nil && *e.Receiving
	})
	for kind, ch := range b.echoed {
		if n := countWithin(ch, 20, 10*time.Second); n < 20 {
			t.Errorf("%d echoed %s packets, want 20", n, kind)
		}
	}
	checkEstimateInHandleInfo(t, admin, sess.ID, h.ID)
	<-b.dcOpen
	if err := b.dc.SendText("ping"); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-b.dcGot:
		if !strings.HasSuffix(m, "ping") {
			t.Errorf("data channel echo %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Error("no data channel echo")
	}

	if _, err := h.Message(ctx, map[string]any{"audio": "loud"}, nil); janusclient.Code(err) != 413 {
		t.Errorf("invalid element: %v, want plugin error 413", err)
	}
	if err := h.Hangup(ctx); err != nil {
		t.Fatalf("hangup: %v", err)
	}
	waitEvent(t, h, "hangup", func(e *janusclient.Event) bool { return e.Janus == "hangup" })
	if err := h.Detach(ctx); err != nil {
		t.Fatalf("detach: %v", err)
	}
	waitEvent(t, h, "detached", func(e *janusclient.Event) bool { return e.Janus == "detached" })
	if err := sess.Destroy(ctx); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if err := sess.Keepalive(ctx); janusclient.Code(err) != 458 {
		t.Errorf("keepalive after destroy: %v, want 458", err)
	}
}

// checkEstimateInHandleInfo polls the admin API until handle_info shows the send-side GCC estimate
// of the path towards the client, built from the client's TWCC feedback.
func checkEstimateInHandleInfo(t *testing.T, admin string, sid, hid uint64) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		body := fmt.Sprintf(`{"janus":"handle_info","transaction":"hi","admin_secret":%q,"session_id":%d,"handle_id":%d}`, testAdminSecret, sid, hid)
		resp, err := http.Post(admin, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var reply struct {
			Info struct {
				WebRTC struct {
					BWE struct {
						TWCC      bool `json:"twcc"`
						Feedback  int  `json:"feedback_packets"`
						Estimator struct {
							Algorithm string  `json:"algorithm"`
							Target    float64 `json:"target_bps"`
						} `json:"estimator"`
					} `json:"bwe"`
				} `json:"webrtc"`
			} `json:"info"`
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = string(raw)
		if err := json.Unmarshal(raw, &reply); err != nil {
			t.Fatalf("handle_info: %v in %s", err, raw)
		}
		bwe := reply.Info.WebRTC.BWE
		if bwe.TWCC && bwe.Feedback > 0 && bwe.Estimator.Algorithm == "gcc" && bwe.Estimator.Target > 0 {
			return
		}
	}
	t.Fatalf("handle_info never showed a GCC estimate fed by TWCC feedback; last reply: %s", last)
}

// waitEvent reads the handle's events until one matches.
func waitEvent(t *testing.T, h *janusclient.Handle, what string, match func(*janusclient.Event) bool) *janusclient.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-h.Events():
			if !ok {
				t.Fatalf("handle events closed while waiting for %s", what)
			}
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s event within 10 s", what)
		}
	}
}

func countWithin(ch <-chan struct{}, n int, d time.Duration) int {
	deadline := time.After(d)
	for got := 0; ; got++ {
		if got == n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			return got
		}
	}
}

// echoBrowser is a Pion PeerConnection playing the browser: VP8 and an audio track (Opus, or
// what its API registered) and a data channel. echoed counts what comes back per kind;
// echoedAudio holds the echoed audio packets and echoedCodec the echoed audio track's codec.
type echoBrowser struct {
	pc           *webrtc.PeerConnection
	video, audio *webrtc.TrackLocalStaticRTP
	dc           *webrtc.DataChannel
	dcOpen       chan struct{}
	dcGot        chan string
	echoed       map[string]chan struct{}
	echoedAudio  chan *rtp.Packet
	echoedCodec  chan webrtc.RTPCodecParameters
}

func newEchoBrowser(t *testing.T) *echoBrowser {
	return newEchoBrowserWith(t, peertest.BrowserAPI(t), webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2})
}

// newEchoBrowserWith builds the browser on api, sending audio as the codec audio.
func newEchoBrowserWith(t *testing.T, api *webrtc.API, audio webrtc.RTPCodecCapability) *echoBrowser {
	t.Helper()
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	b := &echoBrowser{pc: pc, dcOpen: make(chan struct{}), dcGot: make(chan string, 4),
		echoed:      map[string]chan struct{}{"audio": make(chan struct{}, 1024), "video": make(chan struct{}, 1024)},
		echoedAudio: make(chan *rtp.Packet, 1024), echoedCodec: make(chan webrtc.RTPCodecParameters, 1)}
	if b.audio, err = webrtc.NewTrackLocalStaticRTP(audio, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if b.video, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "v", "b"); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*webrtc.TrackLocalStaticRTP{b.audio, b.video} {
		s, err := pc.AddTrack(tr)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if _, _, err := s.ReadRTCP(); err != nil {
					return
				}
			}
		}()
	}
	if b.dc, err = pc.CreateDataChannel("echo", nil); err != nil {
		t.Fatal(err)
	}
	b.dc.OnOpen(func() { close(b.dcOpen) })
	b.dc.OnMessage(func(m webrtc.DataChannelMessage) { b.dcGot <- string(m.Data) })
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		audio := tr.Kind() == webrtc.RTPCodecTypeAudio
		if audio {
			b.echoedCodec <- tr.Codec()
		}
		ch := b.echoed[tr.Kind().String()]
		for {
			p, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
			if audio {
				select {
				case b.echoedAudio <- p:
				default:
				}
			}
		}
	})
	return b
}

// offer gathers every candidate into the offer (no trickle).
func (b *echoBrowser) offer(t *testing.T) string {
	t.Helper()
	return peertest.GatheredOffer(t, b.pc)
}

// offerTrickling creates the offer and hands every local candidate to trickle as it is gathered,
// as janus.js does; the returned SDP carries none.
func (b *echoBrowser) offerTrickling(t *testing.T, trickle func(janusclient.Candidate)) string {
	t.Helper()
	gathered := make(chan struct{})
	b.pc.OnICECandidate(func(c *webrtc.ICECandidate) {
		if c == nil {
			close(gathered)
			return
		}
		init := c.ToJSON()
		trickle(janusclient.Candidate{Candidate: init.Candidate, SDPMid: init.SDPMid, SDPMLineIndex: init.SDPMLineIndex})
	})
	offer, err := b.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	return offer.SDP
}

// sendMedia sends VP8 (a keyframe every 10 frames) and audio every 20 ms until stop closes; each
// audio payload starts with its index. To forwarding an audio payload (Opus, multistream Opus) is
// opaque bytes, and the echo must bring them back unchanged.
func (b *echoBrowser) sendMedia(stop <-chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		vp8 := make([]byte, 200)
		vp8[0], vp8[1] = 0x10, 0x01 // S bit, partition 0; payload header: inter frame
		if i%10 == 0 {
			vp8[1] = 0x00 // keyframe
		}
		_ = b.video.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: uint16(i), Timestamp: uint32(3000 * i), Marker: true}, Payload: vp8})
		audio := make([]byte, 120)
		binary.BigEndian.PutUint32(audio, uint32(i))
		_ = b.audio.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: uint16(i), Timestamp: uint32(960 * i)}, Payload: audio})
	}
}
