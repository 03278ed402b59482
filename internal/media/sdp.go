package media

import (
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// This file is strata's one place for matching codecs between an offer, an answer and Pion's media
// engine: which payload type carries a codec, which RTX codec repairs it, whether two descriptions
// are the same format. Plugins and the forwarding code ask these functions and never compare fmtp
// lines themselves.

// FmtpParam returns the value of key in an fmtp line, lower-cased; "" when absent.
func FmtpParam(fmtp, key string) string {
	for p := range strings.SplitSeq(fmtp, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.ToLower(strings.TrimSpace(v))
		}
	}
	return ""
}

// Capability describes codec c with an fmtp line the way Pion takes it (MIME type, clock rate,
// channels).
func Capability(c Codec, fmtp string) webrtc.RTPCodecCapability {
	return webrtc.RTPCodecCapability{MimeType: c.MimeType(), ClockRate: c.ClockRate(), Channels: c.Channels(), SDPFmtpLine: fmtp}
}

// SameFormat reports whether two descriptions name the same format, one a decoder set up for a
// takes: the same MIME type and, for codecs with profiles, the same profile. For H.264 that is the
// profile of profile-level-id (profile_idc and profile-iop; the level may differ, RFC 6184 §8.2.2)
// and the packetization mode; for VP9 and H.265 profile-id, for AV1 profile.
func SameFormat(a, b webrtc.RTPCodecCapability) bool {
	if !strings.EqualFold(a.MimeType, b.MimeType) {
		return false
	}
	switch CodecByName(a.MimeType) {
	case CodecH264:
		return h264Profile(a.SDPFmtpLine) == h264Profile(b.SDPFmtpLine) &&
			paramOr(a.SDPFmtpLine, "packetization-mode", "0") == paramOr(b.SDPFmtpLine, "packetization-mode", "0")
	case CodecVP9:
		return paramOr(a.SDPFmtpLine, "profile-id", "0") == paramOr(b.SDPFmtpLine, "profile-id", "0")
	case CodecH265:
		return paramOr(a.SDPFmtpLine, "profile-id", "1") == paramOr(b.SDPFmtpLine, "profile-id", "1")
	case CodecAV1:
		return paramOr(a.SDPFmtpLine, "profile", "0") == paramOr(b.SDPFmtpLine, "profile", "0")
	}
	return true
}

// h264Profile is the profile part of profile-level-id (its first two bytes); RFC 6184's default
// is 42 00 (baseline).
func h264Profile(fmtp string) string {
	if id := FmtpParam(fmtp, "profile-level-id"); len(id) == 6 {
		return id[:4]
	}
	return "4200"
}

func paramOr(fmtp, key, def string) string {
	if v := FmtpParam(fmtp, key); v != "" {
		return v
	}
	return def
}

// MatchCodec finds want among a peer's codecs: the same format when there is one, else the first
// with the same MIME type (browsers decode every profile they offer). ok is false when the peer
// does not have the codec at all.
func MatchCodec(want webrtc.RTPCodecCapability, have []webrtc.RTPCodecParameters) (webrtc.RTPCodecParameters, bool) {
	fallback := -1
	for i := range have {
		switch {
		case SameFormat(want, have[i].RTPCodecCapability):
			return have[i], true
		case fallback < 0 && strings.EqualFold(want.MimeType, have[i].MimeType):
			fallback = i
		}
	}
	if fallback >= 0 {
		return have[fallback], true
	}
	return webrtc.RTPCodecParameters{}, false
}

// RTXFor finds the RTX codec that repairs payload type pt (its apt parameter names pt exactly).
func RTXFor(pt webrtc.PayloadType, codecs []webrtc.RTPCodecParameters) (webrtc.RTPCodecParameters, bool) {
	for _, c := range codecs {
		if !strings.EqualFold(c.MimeType, webrtc.MimeTypeRTX) {
			continue
		}
		if apt, err := strconv.Atoi(FmtpParam(c.SDPFmtpLine, "apt")); err == nil && apt == int(pt) {
			return c, true
		}
	}
	return webrtc.RTPCodecParameters{}, false
}

// WithRTX returns c followed by the RTX codec that repairs it, when codecs has one: the list to
// put on an m-line that carries c alone.
func WithRTX(c webrtc.RTPCodecParameters, codecs []webrtc.RTPCodecParameters) []webrtc.RTPCodecParameters {
	if rtx, ok := RTXFor(c.PayloadType, codecs); ok {
		return []webrtc.RTPCodecParameters{c, rtx}
	}
	return []webrtc.RTPCodecParameters{c}
}

// PickCodec chooses among the codecs of an m-line (in the offerer's order of preference) the one
// to use: the first whose name (Janus's: "vp8", "opus") comes earliest in names, or the first
// codec at all when names is empty; profile, when not empty, must match the H.264 profile-level-id
// or the VP9 profile-id. RTX codecs are never picked. ok is false when nothing fits.
func PickCodec(offered []webrtc.RTPCodecParameters, names []string, profile string) (webrtc.RTPCodecParameters, bool) {
	fits := func(c *webrtc.RTPCodecParameters, name string) bool {
		return !strings.EqualFold(c.MimeType, webrtc.MimeTypeRTX) &&
			(name == "" || CodecByName(c.MimeType).String() == strings.ToLower(name)) &&
			hasProfile(c.SDPFmtpLine, profile)
	}
	if len(names) == 0 {
		names = []string{""}
	}
	for _, name := range names {
		for i := range offered {
			if fits(&offered[i], name) {
				return offered[i], true
			}
		}
	}
	return webrtc.RTPCodecParameters{}, false
}

// hasProfile checks Janus's videoprofile: a VP9 profile-id or an H.264 profile-level-id.
func hasProfile(fmtp, profile string) bool {
	if profile == "" {
		return true
	}
	profile = strings.ToLower(profile)
	return FmtpParam(fmtp, "profile-id") == profile || FmtpParam(fmtp, "profile-level-id") == profile
}

// SendRIDs lists the simulcast rids an m-line's offerer sends (a=rid:<id> send), in the order
// the offer lists them.
func SendRIDs(md *sdp.MediaDescription) []string {
	var rids []string
	for _, a := range md.Attributes {
		if f := strings.Fields(a.Value); a.Key == "rid" && len(f) >= 2 && f[1] == "send" {
			rids = append(rids, f[0])
		}
	}
	return rids
}

// OfferRIDs reads the simulcast rids each m-line of an offer sends, by mid (none for an offer that
// does not parse: Pion refuses it later with its own error).
func OfferRIDs(offer string) map[string][]string {
	out := map[string][]string{}
	var parsed sdp.SessionDescription
	if parsed.Unmarshal([]byte(offer)) != nil {
		return out
	}
	for _, md := range parsed.MediaDescriptions {
		mid, _ := md.Attribute(sdp.AttrKeyMID)
		out[mid] = SendRIDs(md)
	}
	return out
}

// SimulcastLayers maps simulcast rids to Janus's substream numbers (0 lowest … 2 highest). Offers
// list rids highest first unless the client says rid_order "lmh" (janus.js sends the order it
// used).
func SimulcastLayers(rids []string, order string) map[string]int {
	m := map[string]int{}
	n := min(len(rids), 3)
	for i := range n {
		if order == "lmh" {
			m[rids[i]] = i
		} else {
			m[rids[i]] = n - 1 - i
		}
	}
	return m
}
