// Package rtpbridge joins one WebRTC PeerConnection (a handle's peer.Peer) to one plain-RTP peer
// (a SIP phone, or the peer a nosip application signals itself), as Janus's SIP and NoSIP plugins
// do. Media goes through the media core both ways: what the browser sends feeds an sfu.Receiver per
// track whose sink sends RTP (or SDES-SRTP) from strata's own UDP port to the plain peer; what the
// plain peer sends feeds an sfu.Receiver per track whose sink is a DownTrack towards the browser.
// strata does not transcode: the plain side is offered the codecs the browser has, and the browser
// the codec the plain side picked. All SDP knowledge is in internal/media (plainsdp.go).
package rtpbridge

import (
	"errors"
	"log/slog"

	"github.com/strata-rtc/strata/internal/sfu"
)

// Errors of the bridge. What FromPlain and FromWebRTC return wraps one of them (errors.Is), so
// that the plugins map them onto their Janus error codes.
var (
	// ErrMalformedSDP: the plain peer's SDP (or the browser's) could not be parsed.
	ErrMalformedSDP = errors.New("rtpbridge: malformed SDP")
	// ErrNoCodec: no audio or video codec both sides have.
	ErrNoCodec = errors.New("rtpbridge: no codec in common")
	// ErrBadCrypto: an a=crypto line that is malformed or of an unsupported suite, or SDES-SRTP
	// required (sdes_mandatory, RTP/SAVP) and not offered.
	ErrBadCrypto = errors.New("rtpbridge: SDES-SRTP negotiation failed")
	// ErrState: a description of a type that does not fit the negotiation's state (an answer
	// without an offer, an offer while one is pending).
	ErrState = errors.New("rtpbridge: unexpected session description")
	// ErrNoPorts: no free RTP/RTCP port pair in the configured range.
	ErrNoPorts = errors.New("rtpbridge: no free RTP port in the range")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("rtpbridge: session closed")
)

// Config is where the bridge's plain-RTP sockets live, from plugins.<sip|nosip> in the YAML.
type Config struct {
	// LocalIP is the address the RTP/RTCP sockets bind to; "" binds all addresses.
	LocalIP string
	// SDPIP is the address written into the plain SDP (c= line), e.g. the public address behind a
	// NAT; "" writes LocalIP, or the host's first non-loopback address when LocalIP is "".
	SDPIP string
	// PortMin and PortMax bound the RTP ports (RTP even, RTCP the next odd port); 0 and 0 let
	// the system choose (tests).
	PortMin, PortMax uint16
	// DSCPAudio and DSCPVideo, when not 0, mark what the bridge sends to the plain peer.
	DSCPAudio, DSCPVideo int
}

// SRTPMode is the SDES-SRTP policy of the plain side, Janus's "srtp" request parameter.
type SRTPMode int

// SRTP modes.
const (
	// SRTPOff: plain RTP (RTP/AVP without a=crypto). An incoming offer with crypto still gets
	// SRTP (Janus accepts what the peer offers).
	SRTPOff SRTPMode = iota
	// SRTPOptional ("sdes_optional"): offer RTP/AVP with a=crypto; the peer may answer without.
	SRTPOptional
	// SRTPMandatory ("sdes_mandatory"): offer RTP/SAVP with a=crypto; an answer without crypto is
	// refused (ErrBadCrypto).
	SRTPMandatory
)

// ParseSRTPMode reads Janus's "srtp" values: "" (off), "sdes_optional", "sdes_mandatory".
func ParseSRTPMode(s string) (SRTPMode, error) {
	switch s {
	case "":
		return SRTPOff, nil
	case "sdes_optional":
		return SRTPOptional, nil
	case "sdes_mandatory":
		return SRTPMandatory, nil
	}
	return SRTPOff, errors.New("invalid srtp value " + s + " (sdes_optional or sdes_mandatory)")
}

// SRTP profiles for SDES, the names of Janus's "srtp_profile" and of RFC 4568's a=crypto suites.
const (
	ProfileAES80 = "AES_CM_128_HMAC_SHA1_80"
	ProfileAES32 = "AES_CM_128_HMAC_SHA1_32"
)

// Options are the per-call choices.
type Options struct {
	// SRTP is the SDES policy of the offers strata makes to the plain peer.
	SRTP SRTPMode
	// SRTPProfile is the suite strata offers: ProfileAES80 (default) or ProfileAES32.
	SRTPProfile string
	// StreamID is the msid stream of the tracks sent to the browser ("" gives "strata-bridge").
	StreamID string
	// Log receives debug messages ("" discards them).
	Log *slog.Logger
}

// Direction is an m-line's direction as the plain SDP writes it (RFC 3264), from strata's side.
type Direction string

// Directions.
const (
	SendRecv Direction = "sendrecv"
	SendOnly Direction = "sendonly" // hold: strata sends (music on hold), the peer does not
	RecvOnly Direction = "recvonly"
	Inactive Direction = "inactive"
)

// Track is one of the bridge's tracks as the recordings need it.
type Track struct {
	Receiver *sfu.Receiver
	// Video says it is the video track; otherwise audio.
	Video bool
	// Fmtp is the negotiated fmtp line of its codec ("" for none).
	Fmtp string
}

// FlowStats counts one direction of one medium.
type FlowStats struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	// Lost is what the receiving side counted lost: for what strata receives, its own count;
	// for what it sends, the peer's reports (cumulative loss).
	Lost int64 `json:"lost"`
	// Jitter in milliseconds: what strata measures for what it receives, what the peer reports
	// for what strata sends.
	Jitter float64 `json:"jitter_ms"`
}

// MediumStats is one medium (audio or video) of the bridge.
type MediumStats struct {
	// Codec is the negotiated codec ("opus", "pcmu", "vp8"...), "" when the medium is not used.
	Codec string `json:"codec,omitempty"`
	// ToPlain is browser → plain peer, as sent by strata; FromPlain is plain peer → browser, as
	// received by strata.
	ToPlain   FlowStats `json:"to_peer"`
	FromPlain FlowStats `json:"from_peer"`
}

// Stats is what the plugins report about the media (Janus-like).
type Stats struct {
	Audio MediumStats `json:"audio"`
	Video MediumStats `json:"video"`
	// Peer is the plain peer's RTP address for audio (video's if there is no audio) as strata
	// sends to it: the latched address once its media arrived. Empty before negotiation.
	Peer string `json:"peer,omitempty"`
	// SRTP says the plain side is encrypted (SDES).
	SRTP bool `json:"srtp"`
}
