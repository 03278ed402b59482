package media

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// This file is the plain side of a media bridge (SIP, NoSIP): the SDP of a peer that speaks RTP or
// SDES-SRTP without ICE or DTLS, as SIP phones and Janus's SIP and NoSIP plugins write it. The
// bridge asks these functions which codecs it can carry and never reads SDP itself.

// Limits on what a plain SDP may hold: a SIP phone sends a few m-lines with a dozen formats.
const (
	maxPlainSDP    = 16 << 10
	maxPlainMedia  = 8
	maxPlainFormat = 32
)

// Plain-SDP errors.
var (
	ErrPlainSDP    = errors.New("malformed plain SDP")
	ErrPlainCrypto = errors.New("invalid a=crypto")
)

// TelephoneEvent is the MIME type of RFC 4733 DTMF events.
const TelephoneEvent = "audio/telephone-event"

// SDES suites strata carries (RFC 4568 names).
const (
	SuiteAES80 = "AES_CM_128_HMAC_SHA1_80"
	SuiteAES32 = "AES_CM_128_HMAC_SHA1_32"
)

// sdesKeyLen is an AES-CM-128 master key and salt (16 + 14 bytes).
const sdesKeyLen = 30

// SDESCrypto is one a=crypto line (RFC 4568): tag, suite and the inline master key and salt.
type SDESCrypto struct {
	Tag   int
	Suite string
	Key   []byte // master key followed by salt, 30 bytes
}

// PlainMedia is one m-line of a plain SDP.
type PlainMedia struct {
	Kind  string // "audio", "video", or what else the line says (not carried)
	Port  int    // 0: rejected or disabled
	Proto string // RTP/AVP, RTP/SAVP (RTP/AVPF and RTP/SAVPF are read alike)
	// Addr is the m-line's c= address, or the session's.
	Addr netip.Addr
	// RTCPPort is a=rtcp's port, else Port+1; RTCPMux says a=rtcp-mux.
	RTCPPort int
	RTCPMux  bool
	// Codecs in the line's order (telephone-event included).
	Codecs    []webrtc.RTPCodecParameters
	Direction string // sendrecv (default), sendonly, recvonly, inactive
	Crypto    []SDESCrypto
}

// PlainSDP is a plain peer's session description.
type PlainSDP struct {
	SessionID, Version uint64
	Media              []PlainMedia
}

// Secure reports whether the m-line's profile requires SRTP (RTP/SAVP, RTP/SAVPF).
func (m *PlainMedia) Secure() bool { return strings.Contains(m.Proto, "SAVP") }

// ParsePlainSDP reads a plain peer's SDP. It refuses what a bridge cannot use: no m-line, an
// m-line without an address, malformed rtpmap or crypto lines.
func ParsePlainSDP(s string) (*PlainSDP, error) {
	if len(s) > maxPlainSDP {
		return nil, fmt.Errorf("%w: %d bytes", ErrPlainSDP, len(s))
	}
	var d sdp.SessionDescription
	if err := d.Unmarshal([]byte(s)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlainSDP, err)
	}
	if len(d.MediaDescriptions) == 0 || len(d.MediaDescriptions) > maxPlainMedia {
		return nil, fmt.Errorf("%w: %d m-lines", ErrPlainSDP, len(d.MediaDescriptions))
	}
	out := &PlainSDP{SessionID: d.Origin.SessionID, Version: d.Origin.SessionVersion}
	sessionAddr, _ := connAddr(d.ConnectionInformation)
	sessionDir := direction(d.Attributes, "sendrecv")
	for _, md := range d.MediaDescriptions {
		m, err := parsePlainMedia(md, sessionAddr, sessionDir)
		if err != nil {
			return nil, err
		}
		out.Media = append(out.Media, m)
	}
	return out, nil
}

func parsePlainMedia(md *sdp.MediaDescription, sessionAddr netip.Addr, sessionDir string) (PlainMedia, error) {
	m := PlainMedia{
		Kind: md.MediaName.Media, Port: md.MediaName.Port.Value, Proto: strings.Join(md.MediaName.Protos, "/"),
		Addr: sessionAddr, Direction: direction(md.Attributes, sessionDir),
	}
	if a, ok := connAddr(md.ConnectionInformation); ok {
		m.Addr = a
	}
	if m.Port < 0 || m.Port > 65535 {
		return m, fmt.Errorf("%w: port %d", ErrPlainSDP, m.Port)
	}
	if m.Port == 0 || (m.Kind != "audio" && m.Kind != "video") {
		return m, nil
	}
	if !m.Addr.IsValid() {
		return m, fmt.Errorf("%w: no connection address for the %s m-line", ErrPlainSDP, m.Kind)
	}
	if len(md.MediaName.Formats) == 0 || len(md.MediaName.Formats) > maxPlainFormat {
		return m, fmt.Errorf("%w: %d formats", ErrPlainSDP, len(md.MediaName.Formats))
	}
	m.RTCPPort = m.Port + 1
	for _, a := range md.Attributes {
		var err error
		switch a.Key {
		case "rtcp-mux":
			m.RTCPMux = true
		case "rtcp":
			if p, perr := strconv.Atoi(strings.Fields(a.Value + " x")[0]); perr == nil && p > 0 && p < 65536 {
				m.RTCPPort = p
			}
		case "crypto":
			var c SDESCrypto
			if c, err = parseCrypto(a.Value); err == nil {
				m.Crypto = append(m.Crypto, c)
			} else if errors.Is(err, errUnsupportedSuite) {
				err = nil // another line may have a suite strata has
			}
		}
		if err != nil {
			return m, err
		}
	}
	codecs, err := plainFormats(md, m.Kind)
	m.Codecs = codecs
	return m, err
}

// plainFormats reads the m-line's payload types with their rtpmap and fmtp; static types without
// rtpmap (0 PCMU, 8 PCMA, 9 G722) get their RFC 3551 names.
func plainFormats(md *sdp.MediaDescription, kind string) ([]webrtc.RTPCodecParameters, error) {
	var out []webrtc.RTPCodecParameters
	var seen [128]bool
	for _, f := range md.MediaName.Formats {
		pt, err := strconv.ParseUint(f, 10, 7)
		if err != nil || seen[pt] {
			return nil, fmt.Errorf("%w: payload type %q", ErrPlainSDP, f)
		}
		seen[pt] = true
		c := webrtc.RTPCodecParameters{PayloadType: webrtc.PayloadType(pt)}
		if name, rate, ch, ok := rtpmap(md, f); ok {
			c.MimeType, c.ClockRate, c.Channels = kind+"/"+name, rate, ch
		} else if s, ok := staticFormats[uint8(pt)]; ok && kind == "audio" {
			c.MimeType, c.ClockRate = s, 8000
		}
		c.SDPFmtpLine = fmtpOf(md, f)
		out = append(out, c)
	}
	return out, nil
}

var staticFormats = map[uint8]string{0: webrtc.MimeTypePCMU, 8: webrtc.MimeTypePCMA, 9: webrtc.MimeTypeG722}

func rtpmap(md *sdp.MediaDescription, pt string) (name string, rate uint32, channels uint16, ok bool) {
	for _, a := range md.Attributes {
		if a.Key != "rtpmap" {
			continue
		}
		p, rest, _ := strings.Cut(a.Value, " ")
		if p != pt {
			continue
		}
		parts := strings.Split(strings.TrimSpace(rest), "/")
		if len(parts) < 2 || parts[0] == "" {
			return "", 0, 0, false
		}
		r, err := strconv.ParseUint(parts[1], 10, 32)
		if err != nil || r == 0 {
			return "", 0, 0, false
		}
		if len(parts) > 2 {
			if c, err := strconv.ParseUint(parts[2], 10, 8); err == nil {
				channels = uint16(c)
			}
		}
		return parts[0], uint32(r), channels, true
	}
	return "", 0, 0, false
}

func fmtpOf(md *sdp.MediaDescription, pt string) string {
	for _, a := range md.Attributes {
		if p, rest, _ := strings.Cut(a.Value, " "); a.Key == "fmtp" && p == pt {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func connAddr(c *sdp.ConnectionInformation) (netip.Addr, bool) {
	if c == nil || c.Address == nil {
		return netip.Addr{}, false
	}
	host, _, _ := strings.Cut(c.Address.Address, "/")
	a, err := netip.ParseAddr(host)
	return a, err == nil
}

func direction(attrs []sdp.Attribute, def string) string {
	for _, a := range attrs {
		switch a.Key {
		case "sendrecv", "sendonly", "recvonly", "inactive":
			return a.Key
		}
	}
	return def
}

var errUnsupportedSuite = errors.New("unsupported SDES suite")

// parseCrypto reads "tag suite inline:key[|lifetime][|mki:len] [params]".
func parseCrypto(v string) (SDESCrypto, error) {
	f := strings.Fields(v)
	if len(f) < 3 {
		return SDESCrypto{}, fmt.Errorf("%w: %q", ErrPlainCrypto, v)
	}
	tag, err := strconv.Atoi(f[0])
	if err != nil || tag < 0 || tag > 999999999 {
		return SDESCrypto{}, fmt.Errorf("%w: tag %q", ErrPlainCrypto, f[0])
	}
	if f[1] != SuiteAES80 && f[1] != SuiteAES32 {
		return SDESCrypto{}, errUnsupportedSuite
	}
	inline, ok := strings.CutPrefix(f[2], "inline:")
	if !ok {
		return SDESCrypto{}, fmt.Errorf("%w: key method %q", ErrPlainCrypto, f[2])
	}
	inline, _, _ = strings.Cut(inline, "|")
	key, err := base64.StdEncoding.DecodeString(inline)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(inline)
	}
	if err != nil || len(key) != sdesKeyLen {
		return SDESCrypto{}, fmt.Errorf("%w: key of %d bytes, want %d", ErrPlainCrypto, len(key), sdesKeyLen)
	}
	return SDESCrypto{Tag: tag, Suite: f[1], Key: key}, nil
}

// BridgeCarries reports whether a media bridge relays a format unchanged between a browser and a
// plain peer: Opus, G.711, G.722 and telephone-event for audio, VP8, VP9 and H.264 for video.
func BridgeCarries(c webrtc.RTPCodecCapability) bool {
	if strings.EqualFold(c.MimeType, TelephoneEvent) {
		return true
	}
	switch CodecByName(c.MimeType) {
	case CodecOpus, CodecPCMU, CodecPCMA, CodecG722, CodecVP8, CodecVP9, CodecH264:
		return true
	}
	return false
}

// IsTelephoneEvent reports whether c is RFC 4733's telephone-event.
func IsTelephoneEvent(c webrtc.RTPCodecCapability) bool {
	return strings.EqualFold(c.MimeType, TelephoneEvent)
}

// ChooseBridgeCodec picks from an m-line's formats (in the order of preference of whoever wrote
// it) the first media codec the bridge carries that also fits one of have (nil: any), and a
// telephone-event: the first of, at the codec's clock rate and in have, at 8 kHz and in have
// (most SIP phones only do telephone-event/8000, which Janus relays whatever the codec), at the
// codec's rate (the plain side's own, for the digits strata sends and detects). ok is false
// without a media codec.
func ChooseBridgeCodec(formats, have []webrtc.RTPCodecParameters) (codec webrtc.RTPCodecParameters, dtmf *webrtc.RTPCodecParameters, ok bool) {
	for _, c := range formats {
		if IsTelephoneEvent(c.RTPCodecCapability) || !BridgeCarries(c.RTPCodecCapability) {
			continue
		}
		if have != nil && !hasFormat(have, c.RTPCodecCapability) {
			continue
		}
		codec, ok = c, true
		break
	}
	if !ok {
		return codec, nil, false
	}
	for _, want := range [3]struct {
		rate   uint32
		inHave bool
	}{{codec.ClockRate, true}, {EventClockRate, true}, {codec.ClockRate, false}} {
		for i := range formats {
			f := &formats[i]
			if IsTelephoneEvent(f.RTPCodecCapability) && f.ClockRate == want.rate &&
				(have == nil || !want.inHave || hasFormat(have, f.RTPCodecCapability)) {
				d := *f
				return codec, &d, true
			}
		}
	}
	return codec, nil, true
}

// EventClockRate is the clock rate of telephone-event when it differs from the audio codec's.
const EventClockRate = 8000

func hasFormat(have []webrtc.RTPCodecParameters, c webrtc.RTPCodecCapability) bool {
	for _, h := range have {
		if SameFormat(h.RTPCodecCapability, c) && h.ClockRate == c.ClockRate {
			return true
		}
	}
	return false
}

// FindFormat returns the format of formats that is c (same format and clock rate).
func FindFormat(formats []webrtc.RTPCodecParameters, c webrtc.RTPCodecCapability) (webrtc.RTPCodecParameters, bool) {
	for _, f := range formats {
		if SameFormat(f.RTPCodecCapability, c) && f.ClockRate == c.ClockRate {
			return f, true
		}
	}
	return webrtc.RTPCodecParameters{}, false
}

// BridgeFormats keeps of a browser's formats those the bridge carries, in the browser's order:
// what the plain peer is offered (Janus's SIP plugin offers the browser's codecs).
func BridgeFormats(browser []webrtc.RTPCodecParameters) []webrtc.RTPCodecParameters {
	var out []webrtc.RTPCodecParameters
	for _, c := range browser {
		if BridgeCarries(c.RTPCodecCapability) {
			out = append(out, c)
		}
	}
	return out
}
