package peer

import (
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
)

// Payload types of the audio formats only a media bridge (SIP, NoSIP) negotiates with the browser,
// in strata's own offers. G.722 has its static type; telephone-event takes the numbers browsers use.
const (
	g722PT              = 9
	telephoneEvent8kPT  = 126
	telephoneEvent48kPT = 110
)

// WithBridgeCodecs gives this PeerConnection the audio formats of plain-RTP peers beside strata's
// usual ones: G.722 and RFC 4733 telephone-event (at 8 and 48 kHz, for DTMF). Only a bridge wants
// them: the other plugins forward between browsers, which never need G.722, and relay no DTMF.
func WithBridgeCodecs() PeerOption {
	return func(o *peerOptions) { o.bridgeCodecs = true }
}

// newBridgeMediaEngine is strata's media engine with the bridge's audio formats added last, so
// that strata's own offers still prefer Opus.
func newBridgeMediaEngine(m config.Media) (*webrtc.MediaEngine, error) {
	me, err := newMediaEngine(m)
	if err != nil {
		return nil, err
	}
	for _, c := range []webrtc.RTPCodecParameters{
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeG722, ClockRate: 8000}, PayloadType: g722PT},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 48000, SDPFmtpLine: "0-16"}, PayloadType: telephoneEvent48kPT},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-16"}, PayloadType: telephoneEvent8kPT},
	} {
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeAudio); err != nil {
			return nil, fmt.Errorf("register %s: %w", c.MimeType, err)
		}
	}
	return me, nil
}
