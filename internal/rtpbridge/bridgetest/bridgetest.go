// Package bridgetest has the test clients of the media bridge's tests (internal/rtpbridge, the
// NoSIP and SIP plugins): a Pion PeerConnection that behaves as a browser sending a PCMU tone and
// VP8 frames and measuring what it receives.
package bridgetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/zaf/g711"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/peer/peertest"
)

// Browser is a Pion client standing for a browser: it sends a PCMU tone and VP8 frames and
// measures what it receives.
type Browser struct {
	t     testing.TB
	pc    *webrtc.PeerConnection
	audio *rawTrack
	video *webrtc.TrackLocalStaticRTP
	Freq  float64

	mu          sync.Mutex
	pcm         []int16 // received audio, decoded
	VideoFrames atomic.Int64
	// PLIs counts the keyframe requests (PLI, FIR) strata sent about the browser's video.
	PLIs     atomic.Int64
	audioPTs map[uint8]int
	events   []byte // the RFC 4733 event codes received, one per event
	eventTS  uint32 // the timestamp of the last event (its packets share it)
}

// eventPT is the browser's telephone-event/8000 (Chrome's number).
const eventPT = 126

// registerPCMU is a browser with PCMU, telephone-event and VP8 (the audio decodable in a test
// without a codec library).
func registerPCMU(me *webrtc.MediaEngine) error {
	for _, c := range []webrtc.RTPCodecParameters{
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, PayloadType: 0},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-16"}, PayloadType: eventPT},
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

// registerOpus is a browser with Opus and telephone-event at 48 and 8 kHz, with Chrome's payload
// types (its audio is the PCMU tone's bytes, which only the bridge carries, undecoded).
func registerOpus(me *webrtc.MediaEngine) error {
	for _, c := range []webrtc.RTPCodecParameters{
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}, PayloadType: 111},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 48000, SDPFmtpLine: "0-16"}, PayloadType: 110},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-16"}, PayloadType: eventPT},
	} {
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeAudio); err != nil {
			return err
		}
	}
	return nil
}

func NewBrowser(t testing.TB, freq float64, withVideo bool) *Browser {
	t.Helper()
	return newBrowser(t, freq, withVideo, registerPCMU, webrtc.MimeTypePCMU)
}

// NewOpusBrowser is an audio-only browser offering Opus and telephone-event at 48 and 8 kHz.
func NewOpusBrowser(t testing.TB) *Browser {
	t.Helper()
	return newBrowser(t, 440, false, registerOpus, webrtc.MimeTypeOpus)
}

func newBrowser(t testing.TB, freq float64, withVideo bool, register func(*webrtc.MediaEngine) error, mime string) *Browser {
	t.Helper()
	pc, err := peertest.BrowserAPIWith(t, register).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	b := &Browser{t: t, pc: pc, Freq: freq, audioPTs: map[uint8]int{}}
	b.audio = &rawTrack{mime: mime}
	if _, err := pc.AddTrack(b.audio); err != nil {
		t.Fatal(err)
	}
	if withVideo {
		b.video, _ = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "v", "browser")
		sender, err := pc.AddTrack(b.video)
		if err != nil {
			t.Fatal(err)
		}
		go b.countKeyframeRequests(sender)
	}
	pc.OnTrack(b.receive)
	return b
}

func (b *Browser) receive(track *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
	var p rtp.Packet
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil || p.Unmarshal(buf[:n]) != nil {
			return
		}
		if track.Kind() == webrtc.RTPCodecTypeVideo {
			if p.Marker {
				b.VideoFrames.Add(1)
			}
			continue
		}
		b.mu.Lock()
		b.audioPTs[p.PayloadType]++
		switch {
		case p.PayloadType == 0:
			b.pcm = append(b.pcm, decodeUlaw(p.Payload)...)
		case p.PayloadType == eventPT && len(p.Payload) >= 4 && (len(b.events) == 0 || p.Timestamp != b.eventTS):
			b.events, b.eventTS = append(b.events, p.Payload[0]), p.Timestamp
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

// Offer makes the browser's offer (all candidates in it).
func (b *Browser) Offer() webrtc.SessionDescription {
	b.t.Helper()
	o, err := b.pc.CreateOffer(nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.setLocal(o)
}

func (b *Browser) Answer(offer *webrtc.SessionDescription) webrtc.SessionDescription {
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

func (b *Browser) setLocal(d webrtc.SessionDescription) webrtc.SessionDescription {
	b.t.Helper()
	done := webrtc.GatheringCompletePromise(b.pc)
	if err := b.pc.SetLocalDescription(d); err != nil {
		b.t.Fatal(err)
	}
	<-done
	return *b.pc.LocalDescription()
}

func (b *Browser) SetAnswer(a *webrtc.SessionDescription) {
	b.t.Helper()
	if a == nil {
		b.t.Fatal("no answer for the browser")
	}
	if err := b.pc.SetRemoteDescription(*a); err != nil {
		b.t.Fatal(err)
	}
}

// Send plays the tone and, with video, 30 VP8 frames a second until ctx ends.
func (b *Browser) Send(ctx context.Context) {
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		pcm := make([]int16, 160)
		var n int
		vseq := uint16(1)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			n = audio.Tone(pcm, 1, 8000, b.Freq, 12000, n)
			b.audio.frame(encodeUlaw(pcm))
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

// ToneLevel is the level of freq in the audio received over the last window.
func (b *Browser) ToneLevel(freq float64, window int) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pcm) < window {
		return 0
	}
	return audio.ToneLevel(b.pcm[len(b.pcm)-window:], 1, 0, 8000, freq)
}

// WaitFor polls cond until it holds or the deadline passes.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// AudioPayloadTypes returns how many audio packets of each payload type arrived.
func (b *Browser) AudioPayloadTypes() map[uint8]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[uint8]int{}
	for k, v := range b.audioPTs {
		out[k] = v
	}
	return out
}

// Events returns the RFC 4733 event codes received in the audio stream, one per event.
func (b *Browser) Events() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.events...)
}

func (b *Browser) countKeyframeRequests(sender *webrtc.RTPSender) {
	for {
		pkts, _, err := sender.ReadRTCP()
		if err != nil {
			return
		}
		for _, p := range pkts {
			switch p.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				b.PLIs.Add(1)
			}
		}
	}
}

// Samples is how many audio samples arrived so far.
func (b *Browser) Samples() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pcm)
}
