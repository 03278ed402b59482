package rtpbridge

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/zaf/g711"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/peer/peertest"
)

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func testFactory(t *testing.T) *peer.Factory {
	t.Helper()
	m := config.Default().Media
	m.ICE.Loopback = true
	m.ICE.Interfaces = []string{"lo"}
	f, err := peer.NewFactory(m, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

var loopback = Config{LocalIP: "127.0.0.1"}

// newBridge is a strata handle's PeerConnection with a bridge on it.
func newBridge(t *testing.T, f *peer.Factory, cfg Config, opts Options) *Session {
	t.Helper()
	p, err := f.New(peer.Hooks{}, peer.WithBridgeCodecs())
	if err != nil {
		t.Fatal(err)
	}
	opts.Log = testLogger()
	s, err := New(cfg, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		p.Close("test over")
	})
	return s
}

// browser is a Pion client standing for a browser: it sends a PCMU tone and VP8 frames and
// measures what it receives.
type browser struct {
	t     *testing.T
	pc    *webrtc.PeerConnection
	audio *webrtc.TrackLocalStaticRTP
	video *webrtc.TrackLocalStaticRTP
	freq  float64

	mu          sync.Mutex
	pcm         []int16 // received audio, decoded
	videoFrames atomic.Int64
	audioPTs    map[uint8]int
}

// registerPCMU is a browser with PCMU, telephone-event and VP8 (the audio decodable in a test
// without a codec library).
func registerPCMU(me *webrtc.MediaEngine) error {
	for _, c := range []webrtc.RTPCodecParameters{
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, PayloadType: 0},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-16"}, PayloadType: 126},
	} {
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeAudio); err != nil {
			return err
		}
	}
	fb := []webrtc.RTCPFeedback{{Type: "nack"}, {Type: "nack", Parameter: "pli"}, {Type: "ccm", Parameter: "fir"}}
	return me.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000, RTCPFeedback: fb}, PayloadType: 96,
	}, webrtc.RTPCodecTypeVideo)
}

func newBrowser(t *testing.T, freq float64, withVideo bool) *browser {
	t.Helper()
	pc, err := peertest.BrowserAPIWith(t, registerPCMU).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	b := &browser{t: t, pc: pc, freq: freq, audioPTs: map[uint8]int{}}
	b.audio, _ = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, "a", "browser")
	if _, err := pc.AddTrack(b.audio); err != nil {
		t.Fatal(err)
	}
	if withVideo {
		b.video, _ = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "v", "browser")
		if _, err := pc.AddTrack(b.video); err != nil {
			t.Fatal(err)
		}
	}
	pc.OnTrack(b.receive)
	return b
}

func (b *browser) receive(track *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
	var p rtp.Packet
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil || p.Unmarshal(buf[:n]) != nil {
			return
		}
		if track.Kind() == webrtc.RTPCodecTypeVideo {
			if p.Marker {
				b.videoFrames.Add(1)
			}
			continue
		}
		b.mu.Lock()
		b.audioPTs[p.PayloadType]++
		if p.PayloadType == 0 {
			b.pcm = append(b.pcm, decodeUlaw(p.Payload)...)
		}
		b.mu.Unlock()
	}
}

func decodeUlaw(payload []byte) []int16 {
	out := make([]int16, len(payload))
	for i, v := range payload {
		out[i] = g711.DecodeUlawFrame(v)
	}
	return out
}

func encodeUlaw(pcm []int16) []byte {
	out := make([]byte, len(pcm))
	for i, v := range pcm {
		out[i] = g711.EncodeUlawFrame(v)
	}
	return out
}

// offer makes the browser's offer (all candidates in it).
func (b *browser) offer() webrtc.SessionDescription {
	b.t.Helper()
	o, err := b.pc.CreateOffer(nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.setLocal(o)
}

func (b *browser) answer(offer *webrtc.SessionDescription) webrtc.SessionDescription {
	b.t.Helper()
	if err := b.pc.SetRemoteDescription(*offer); err != nil {
		b.t.Fatal(err)
	}
	a, err := b.pc.CreateAnswer(nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.setLocal(a)
}

func (b *browser) setLocal(d webrtc.SessionDescription) webrtc.SessionDescription {
	b.t.Helper()
	done := webrtc.GatheringCompletePromise(b.pc)
	if err := b.pc.SetLocalDescription(d); err != nil {
		b.t.Fatal(err)
	}
	<-done
	return *b.pc.LocalDescription()
}

func (b *browser) setAnswer(a *webrtc.SessionDescription) {
	b.t.Helper()
	if a == nil {
		b.t.Fatal("no answer for the browser")
	}
	if err := b.pc.SetRemoteDescription(*a); err != nil {
		b.t.Fatal(err)
	}
}

// send plays the tone and, with video, 30 VP8 frames a second until ctx ends.
func (b *browser) send(ctx context.Context) {
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		pcm := make([]int16, 160)
		var n int
		seq, vseq := uint16(1), uint16(1)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			n = audio.Tone(pcm, 1, 8000, b.freq, 12000, n)
			_ = b.audio.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 0, SequenceNumber: seq, Timestamp: uint32(i * 160)}, Payload: encodeUlaw(pcm)})
			seq++
			if b.video != nil && i%2 == 0 {
				_ = b.video.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: vseq, Timestamp: uint32(i * 1800), Marker: true}, Payload: vp8Frame(i == 0 || i%60 == 0)})
				vseq++
			}
		}
	}()
}

// vp8Frame is a one-packet VP8 frame: payload descriptor (S=1, partition 0) and a frame header
// whose keyframe bit is as asked (the bridge forwards it; nothing decodes it).
func vp8Frame(key bool) []byte {
	p := []byte{0x10, 0x01, 0x00, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00}
	if key {
		p[1] = 0x00
	}
	return append(p, make([]byte, 100)...)
}

// toneLevel is the level of freq in the audio received over the last window.
func (b *browser) toneLevel(freq float64, window int) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pcm) < window {
		return 0
	}
	return audio.ToneLevel(b.pcm[len(b.pcm)-window:], 1, 0, 8000, freq)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
