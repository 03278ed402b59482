package bridgetest

import (
	"strings"
	"sync"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// rawTrack is the browser's microphone: PCMU (or Opus: the same bytes, which the bridge carries
// without decoding), and RFC 4733 telephone-events in the same stream
// (as RTCDTMFSender sends them), which Pion's static tracks cannot send (they stamp one payload
// type on every packet).
type rawTrack struct {
	mime    string // the codec it binds
	mu      sync.Mutex
	writer  webrtc.TrackLocalWriter
	ssrc    uint32
	pt      uint8
	step    uint32 // timestamp units per 20 ms frame
	eventPT uint8  // telephone-event/8000 as negotiated; 0 without
	seq     uint16
	ts      uint32
}

func (r *rawTrack) ID() string                            { return "a" }
func (r *rawTrack) RID() string                           { return "" }
func (r *rawTrack) StreamID() string                      { return "browser" }
func (r *rawTrack) Kind() webrtc.RTPCodecType             { return webrtc.RTPCodecTypeAudio }
func (r *rawTrack) Unbind(webrtc.TrackLocalContext) error { return nil }

// Bind takes its codec and notes telephone-event's payload type.
func (r *rawTrack) Bind(ctx webrtc.TrackLocalContext) (webrtc.RTPCodecParameters, error) {
	var pcmu webrtc.RTPCodecParameters
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range ctx.CodecParameters() {
		switch {
		case strings.EqualFold(c.MimeType, r.mime):
			pcmu = c
		case strings.EqualFold(c.MimeType, "audio/telephone-event") && c.ClockRate == 8000:
			r.eventPT = uint8(c.PayloadType)
		}
	}
	if pcmu.MimeType == "" {
		return pcmu, webrtc.ErrUnsupportedCodec
	}
	r.writer, r.ssrc, r.pt, r.step = ctx.WriteStream(), uint32(ctx.SSRC()), uint8(pcmu.PayloadType), pcmu.ClockRate/50
	return pcmu, nil
}

// frame sends 20 ms of audio.
func (r *rawTrack) frame(payload []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeLocked(r.pt, false, r.ts, payload)
	r.ts += r.step
}

func (r *rawTrack) writeLocked(pt uint8, marker bool, ts uint32, payload []byte) {
	if r.writer == nil {
		return
	}
	r.seq++
	_, _ = r.writer.WriteRTP(&rtp.Header{Version: 2, PayloadType: pt, Marker: marker, SequenceNumber: r.seq, Timestamp: ts, SSRC: r.ssrc}, payload)
}

// SendDTMF sends one digit event of 100 ms (event code, as RFC 4733 numbers them) in the audio
// stream, as a browser's RTCDTMFSender does (telephone-event/8000 with Opus as Chrome does: the
// timestamp is the audio's, the duration counts 8 kHz units); false when telephone-event was not negotiated.
func (b *Browser) SendDTMF(event uint8) bool {
	r := b.audio
	r.mu.Lock()
	pt, ts := r.eventPT, r.ts
	r.mu.Unlock()
	if pt == 0 {
		return false
	}
	for dur := uint16(160); dur <= 800; dur += 160 {
		end := dur == 800
		payload := []byte{event, 10, byte(dur >> 8), byte(dur)}
		if end {
			payload[1] |= 0x80
		}
		r.mu.Lock()
		for range map[bool]int{false: 1, true: 3}[end] {
			r.writeLocked(pt, dur == 160, ts, payload)
		}
		r.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
