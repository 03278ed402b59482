package peer

import (
	"fmt"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/media"
)

// Header extension URIs strata negotiates beyond those the sdp package names.
const (
	PlayoutDelayURI         = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
	VideoOrientationURI     = "urn:3gpp:video-orientation"
	DependencyDescriptorURI = "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension"
)

// Multichannel Opus as Chrome negotiates it, and as Janus's multiopus demo munges Chrome's offer to
// ask for it: 5.1 surround in four Opus streams, two of them coupled (stereo). Pion has no name for
// the codec; without it registered, an offer of multiopus left its m-line without a codec.
const (
	multiopusFmtp = "minptime=10;useinbandfec=1;channel_mapping=0,4,1,2,3,5;num_streams=4;coupled_streams=2"
	// multiopusPT is the payload type in strata's own offers (answers reuse the offerer's, which
	// is usually Opus's 111 renamed); it must not be Opus's.
	multiopusPT = 121
)

// videoCodec is one video codec strata accepts, with the payload types it uses in its own offers
// (answers reuse the offerer's numbers).
type videoCodec struct {
	mime  string
	fmtp  string
	pt    webrtc.PayloadType
	rtxPT webrtc.PayloadType
}

// videoCodecs in strata's order of preference. H.264 comes in the profiles Chrome offers with
// packetization-mode 1: constrained baseline (42e01f), baseline (42001f), main (4d001f), high (640032).
var videoCodecs = []videoCodec{
	{webrtc.MimeTypeVP8, "", 96, 97},
	{webrtc.MimeTypeVP9, "profile-id=0", 98, 99},
	{webrtc.MimeTypeVP9, "profile-id=2", 100, 101},
	{webrtc.MimeTypeH264, "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f", 108, 109},
	{webrtc.MimeTypeH264, "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f", 102, 103},
	{webrtc.MimeTypeH264, "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d001f", 116, 117},
	{webrtc.MimeTypeH264, "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=640032", 112, 113},
	{webrtc.MimeTypeAV1, "", 45, 46},
}

// newMediaEngine registers codecs, RTCP feedback and header extensions according to the media
// configuration.
func newMediaEngine(m config.Media) (*webrtc.MediaEngine, error) {
	me := &webrtc.MediaEngine{}
	opus := webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2,
			SDPFmtpLine: "minptime=10;useinbandfec=1", RTCPFeedback: audioFeedback(m),
		},
		PayloadType: 111,
	}
	if err := me.RegisterCodec(opus, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("register opus: %w", err)
	}
	// After Opus: strata's own offers prefer plain Opus, an offer of multiopus gets multiopus.
	multiopus := webrtc.RTPCodecParameters{RTPCodecCapability: media.Capability(media.CodecMultiopus, multiopusFmtp), PayloadType: multiopusPT}
	multiopus.RTCPFeedback = audioFeedback(m)
	if err := me.RegisterCodec(multiopus, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("register multiopus: %w", err)
	}
	// G.711 last, with its static payload types: never preferred over Opus, but a streaming
	// mountpoint of Janus's A-law and µ-law samples is offered as browsers take it.
	for _, g := range []struct {
		mime string
		pt   webrtc.PayloadType
	}{{webrtc.MimeTypePCMU, 0}, {webrtc.MimeTypePCMA, 8}} {
		c := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: g.mime, ClockRate: 8000}, PayloadType: g.pt}
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeAudio); err != nil {
			return nil, fmt.Errorf("register %s: %w", g.mime, err)
		}
	}
	fb := videoFeedback(m)
	for _, c := range videoCodecs {
		codec := webrtc.RTPCodecParameters{
			RTPCodecCapability: webrtc.RTPCodecCapability{
				MimeType: c.mime, ClockRate: 90000, SDPFmtpLine: c.fmtp, RTCPFeedback: fb,
			},
			PayloadType: c.pt,
		}
		if err := me.RegisterCodec(codec, webrtc.RTPCodecTypeVideo); err != nil {
			return nil, fmt.Errorf("register %s: %w", c.mime, err)
		}
		if !m.RTX {
			continue
		}
		rtx := webrtc.RTPCodecParameters{
			RTPCodecCapability: webrtc.RTPCodecCapability{
				MimeType: webrtc.MimeTypeRTX, ClockRate: 90000, SDPFmtpLine: fmt.Sprintf("apt=%d", c.pt),
			},
			PayloadType: c.rtxPT,
		}
		if err := me.RegisterCodec(rtx, webrtc.RTPCodecTypeVideo); err != nil {
			return nil, fmt.Errorf("register rtx for %s: %w", c.mime, err)
		}
	}
	if err := registerHeaderExtensions(me, m); err != nil {
		return nil, err
	}
	return me, nil
}

// audioFeedback: transport-cc, unless media.twcc_audio leaves audio out of the browser's estimate.
func audioFeedback(m config.Media) []webrtc.RTCPFeedback {
	if m.TWCC && m.TWCCAudio {
		return []webrtc.RTCPFeedback{{Type: webrtc.TypeRTCPFBTransportCC}}
	}
	return nil
}

// videoFeedback: FIR is always on (Janus too); PLI travels as "nack pli", so it is there with NACK.
func videoFeedback(m config.Media) []webrtc.RTCPFeedback {
	fb := []webrtc.RTCPFeedback{{Type: webrtc.TypeRTCPFBCCM, Parameter: "fir"}}
	if m.NACK {
		fb = append(fb,
			webrtc.RTCPFeedback{Type: webrtc.TypeRTCPFBNACK},
			webrtc.RTCPFeedback{Type: webrtc.TypeRTCPFBNACK, Parameter: "pli"})
	}
	if m.REMB {
		fb = append(fb, webrtc.RTCPFeedback{Type: webrtc.TypeRTCPFBGoogREMB})
	}
	if m.TWCC {
		fb = append(fb, webrtc.RTCPFeedback{Type: webrtc.TypeRTCPFBTransportCC})
	}
	return fb
}

func registerHeaderExtensions(me *webrtc.MediaEngine, m config.Media) error {
	audio := []string{sdp.SDESMidURI, sdp.AudioLevelURI}
	video := []string{
		sdp.SDESMidURI, sdp.SDESRTPStreamIDURI, sdp.SDESRepairRTPStreamIDURI,
		PlayoutDelayURI, VideoOrientationURI, DependencyDescriptorURI,
	}
	// abs-send-time serves only the receive-side estimator behind REMB; otherwise it is 4 bytes
	// more in every packet a browser sends (about 1 % of a 250 kbit/s uplink).
	if m.CongestionControl.REMBEstimator == "gcc-draft" {
		audio = append(audio, sdp.ABSSendTimeURI)
		video = append(video, sdp.ABSSendTimeURI)
	}
	if m.TWCC {
		audio = append(audio, sdp.TransportCCURI)
		video = append(video, sdp.TransportCCURI)
	}
	for _, uri := range audio {
		ext := webrtc.RTPHeaderExtensionCapability{URI: uri}
		if err := me.RegisterHeaderExtension(ext, webrtc.RTPCodecTypeAudio); err != nil {
			return fmt.Errorf("register audio extension %s: %w", uri, err)
		}
	}
	for _, uri := range video {
		ext := webrtc.RTPHeaderExtensionCapability{URI: uri}
		if err := me.RegisterHeaderExtension(ext, webrtc.RTPCodecTypeVideo); err != nil {
			return fmt.Errorf("register video extension %s: %w", uri, err)
		}
	}
	return nil
}
