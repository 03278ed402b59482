package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/audio"
)

// phoneTrack is the WebRTC phone's audio track: unlike Pion's static tracks it keeps each
// packet's payload type, so audio and telephone-event packets share one RTP stream as in a
// browser, and it sends whichever of Opus, PCMU and PCMA the server chose.
type phoneTrack struct {
	mu     sync.Mutex
	ssrc   webrtc.SSRC
	stream webrtc.TrackLocalWriter
	audio  webrtc.RTPCodecParameters
	event  webrtc.RTPCodecParameters // PayloadType 0: no telephone-event negotiated
}

func isVoiceCodec(mime string) bool {
	for _, m := range []string{webrtc.MimeTypeOpus, webrtc.MimeTypePCMU, webrtc.MimeTypePCMA} {
		if strings.EqualFold(mime, m) {
			return true
		}
	}
	return false
}

// Bind takes the first voice codec of the negotiated ones (the server's preference) and a
// telephone-event, preferably at the voice codec's clock rate.
func (tr *phoneTrack) Bind(ctx webrtc.TrackLocalContext) (webrtc.RTPCodecParameters, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var voice, event webrtc.RTPCodecParameters
	codecs := ctx.CodecParameters()
	for _, c := range codecs {
		if isVoiceCodec(c.MimeType) {
			voice = c
			break
		}
	}
	if voice.MimeType == "" {
		return voice, webrtc.ErrUnsupportedCodec
	}
	for _, c := range codecs {
		if strings.EqualFold(c.MimeType, "audio/telephone-event") && (event.MimeType == "" || c.ClockRate == voice.ClockRate) {
			event = c
		}
	}
	tr.ssrc, tr.stream, tr.audio, tr.event = ctx.SSRC(), ctx.WriteStream(), voice, event
	return voice, nil
}

func (tr *phoneTrack) Unbind(webrtc.TrackLocalContext) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.stream = nil
	return nil
}

func (tr *phoneTrack) ID() string                { return "audio" }
func (tr *phoneTrack) RID() string               { return "" }
func (tr *phoneTrack) StreamID() string          { return "phone" }
func (tr *phoneTrack) Kind() webrtc.RTPCodecType { return webrtc.RTPCodecTypeAudio }

// codecs returns the negotiated voice and telephone-event codecs; false until bound.
func (tr *phoneTrack) codecs() (voice, event webrtc.RTPCodecParameters, bound bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.audio, tr.event, tr.stream != nil
}

// write sends pkt as voice, or as a telephone-event when event is set; false if the event
// payload type was not negotiated (or the track is not bound yet).
func (tr *phoneTrack) write(pkt *rtp.Packet, event bool) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.stream == nil || (event && tr.event.MimeType == "") {
		return false
	}
	pkt.SSRC, pkt.PayloadType = uint32(tr.ssrc), uint8(tr.audio.PayloadType)
	if event {
		pkt.PayloadType = uint8(tr.event.PayloadType)
	}
	_, _ = tr.stream.WriteRTP(&pkt.Header, pkt.Payload)
	return true
}

// frameEncoder encodes a 20 ms frame of 48 kHz mono.
type frameEncoder interface {
	Encode(pcm []int16, out []byte) (int, error)
}

var phoneFormat = audio.Format{Rate: phoneRate, Channels: 1}

// newFrameEncoder returns the encoder of codec and its RTP timestamp step per frame.
func newFrameEncoder(codec webrtc.RTPCodecParameters) (frameEncoder, uint32, error) {
	step := codec.ClockRate / 50
	switch {
	case strings.EqualFold(codec.MimeType, webrtc.MimeTypeOpus):
		e, err := audio.NewEncoder(phoneFormat, audio.EncoderConfig{})
		return e, step, err
	case strings.EqualFold(codec.MimeType, webrtc.MimeTypePCMU):
		e, err := audio.NewG711Encoder(phoneFormat, audio.ULaw)
		return e, step, err
	case strings.EqualFold(codec.MimeType, webrtc.MimeTypePCMA):
		e, err := audio.NewG711Encoder(phoneFormat, audio.ALaw)
		return e, step, err
	}
	return nil, 0, fmt.Errorf("no encoder for %s", codec.MimeType)
}

var rtpmapLine = regexp.MustCompile(`a=rtpmap:(\d+) ([^/\s]+)/(\d+)`)

// decodersFor makes a decoder (into 48 kHz mono) for each voice payload type of sdp, and lists
// its telephone-event payload types.
func decodersFor(sdp string) (map[uint8]audio.FrameDecoder, map[uint8]bool, error) {
	dec, event := map[uint8]audio.FrameDecoder{}, map[uint8]bool{}
	for _, m := range rtpmapLine.FindAllStringSubmatch(sdp, -1) {
		n, _ := strconv.Atoi(m[1])
		pt := uint8(n)
		var d audio.FrameDecoder
		var err error
		switch strings.ToLower(m[2]) {
		case "opus":
			d, err = audio.NewDecoder(phoneFormat)
		case "pcmu":
			d, err = audio.NewG711Decoder(phoneFormat, audio.ULaw)
		case "pcma":
			d, err = audio.NewG711Decoder(phoneFormat, audio.ALaw)
		case "telephone-event":
			event[pt] = true
		}
		if err != nil {
			return nil, nil, err
		}
		if d != nil {
			dec[pt] = d
		}
	}
	return dec, event, nil
}
