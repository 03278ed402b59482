package peer

import (
	"context"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
)

// testMedia is the default media configuration restricted to loopback, so tests connect on 127.0.0.1.
func testMedia() config.Media {
	m := config.Default().Media
	m.ICE.Loopback = true
	m.ICE.Interfaces = []string{"lo"}
	return m
}

// fastMonitor makes media events quick enough for tests.
var fastMonitor = WithMonitor(MonitorConfig{
	Tick: 50 * time.Millisecond, MediaTimeout: 400 * time.Millisecond, Window: 250 * time.Millisecond,
	SlowLinkThreshold: 4, SlowLinkInterval: time.Second,
})

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newTestFactory(t testing.TB, m config.Media, opts ...Option) *Factory {
	t.Helper()
	f, err := NewFactory(m, testLogger(), append([]Option{fastMonitor}, opts...)...)
	if err != nil {
		t.Fatalf("NewFactory: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

func newTestPeer(t *testing.T, f *Factory, h Hooks) *Peer {
	t.Helper()
	p, err := f.New(h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Close("test over") })
	return p
}

// client is a plain Pion PeerConnection playing the browser.
type client struct {
	pc    *webrtc.PeerConnection
	video *webrtc.TrackLocalStaticRTP
	audio *webrtc.TrackLocalStaticRTP
	dc    *webrtc.DataChannel
}

// newPair is a peer on the test media, recorded, and a client with audio, video and data to offer
// it (not yet connected).
func newPair(t *testing.T) (*Peer, *recorder, *client) {
	t.Helper()
	f := newTestFactory(t, testMedia())
	rec := newRecorder()
	srv := newTestPeer(t, f, rec.hooks())
	c := newClient(t)
	c.addMedia(t)
	return srv, rec, c
}

func newClient(t testing.TB) *client {
	t.Helper()
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return &client{pc: pc}
}

// addMedia adds a VP8 and an Opus send track and a data channel, as the echotest page does.
func (c *client) addMedia(t testing.TB) {
	t.Helper()
	var err error
	c.audio, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "client")
	if err != nil {
		t.Fatal(err)
	}
	c.video, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "video", "client")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []webrtc.TrackLocal{c.audio, c.video} {
		s, err := c.pc.AddTrack(tr)
		if err != nil {
			t.Fatal(err)
		}
		go drainRTCP(s)
	}
	if c.dc, err = c.pc.CreateDataChannel("chat", nil); err != nil {
		t.Fatal(err)
	}
}

func drainRTCP(s *webrtc.RTPSender) {
	for {
		if _, _, err := s.ReadRTCP(); err != nil {
			return
		}
	}
}

// offer returns the client's offer; with gather it waits for all candidates (half trickle).
func (c *client) offer(t *testing.T, gather bool) webrtc.SessionDescription {
	t.Helper()
	o, err := c.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	if !gather {
		return o
	}
	<-done
	return *c.pc.LocalDescription()
}

// sendRTP writes n packets of a synthetic payload on a track, every interval.
func sendRTP(track *webrtc.TrackLocalStaticRTP, pt uint8, n int, interval time.Duration, stop <-chan struct{}) {
	payload := make([]byte, 200)
	for i := range n {
		pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: pt, SequenceNumber: uint16(i), Timestamp: uint32(i * 3000)}, Payload: payload}
		_ = track.WriteRTP(pkt)
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor fails the test unless ch delivers within d.
func waitFor[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
	var zero T
	return zero
}

// recorder collects hook calls.
type recorder struct {
	mu       sync.Mutex
	up       chan struct{}
	hangups  []string
	hangupCh chan string
	media    chan string
	slow     chan string
	cands    chan *webrtc.ICECandidateInit
}

func newRecorder() *recorder {
	return &recorder{
		up: make(chan struct{}, 4), hangupCh: make(chan string, 4), media: make(chan string, 64),
		slow: make(chan string, 64), cands: make(chan *webrtc.ICECandidateInit, 64),
	}
}

func (r *recorder) hooks() Hooks {
	return Hooks{
		OnUp: func() { r.up <- struct{}{} },
		OnHangup: func(reason string) {
			r.mu.Lock()
			r.hangups = append(r.hangups, reason)
			r.mu.Unlock()
			r.hangupCh <- reason
		},
		OnMedia: func(mid, kind string, receiving bool) {
			state := "off"
			if receiving {
				state = "on"
			}
			r.media <- kind + ":" + state
		},
		OnSlowLink: func(mid, kind string, uplink bool, lost int) {
			dir := "down"
			if uplink {
				dir = "up"
			}
			r.slow <- kind + ":" + dir
		},
		OnCandidate: func(c *webrtc.ICECandidateInit) { r.cands <- c },
	}
}

func (r *recorder) hangupCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.hangups)
}

// connect negotiates client → server (half trickle on both sides) and waits for OnUp.
func connect(t *testing.T, srv *Peer, rec *recorder, c *client, opts ...NegotiateOption) webrtc.SessionDescription {
	t.Helper()
	answer, err := srv.Answer(testContext(t), c.offer(t, true), opts...)
	if err != nil {
		t.Fatalf("Answer: %v", err)
	}
	if err := c.pc.SetRemoteDescription(answer); err != nil {
		t.Fatalf("client SetRemoteDescription: %v", err)
	}
	waitFor(t, rec.up, 10*time.Second, "OnUp")
	return answer
}

func countLines(sdp, prefix string) int {
	n := 0
	for line := range strings.Lines(sdp) {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

// sendingClient connects a client that sends one VP8 track to a strata Peer (which reads what it
// receives, as the plugins do), and calls feedback with every RTCP packet strata sends about that
// track. It returns the track and the peer's recorder.
func sendingClient(t *testing.T, feedback func(rtcp.Packet)) (*webrtc.TrackLocalStaticRTP, *webrtc.RTPSender, *recorder) {
	t.Helper()
	f := newTestFactory(t, testMedia())
	rec := newRecorder()
	srv := newTestPeer(t, f, rec.hooks())
	srv.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go drain(tr) })
	c := newClient(t)
	video, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "v", "c")
	if err != nil {
		t.Fatal(err)
	}
	sender, err := c.pc.AddTrack(video)
	if err != nil {
		t.Fatal(err)
	}
	connect(t, srv, rec, c)
	go func() {
		for {
			pkts, _, err := sender.ReadRTCP()
			if err != nil {
				return
			}
			for _, p := range pkts {
				feedback(p)
			}
		}
	}()
	return video, sender, rec
}
