package media

import "strings"

// Codec identifies a codec the forwarding path knows.
type Codec uint8

// Codecs strata forwards: the audio codecs, then the video codecs (IsVideo relies on the order).
// Audio codecs need no payload knowledge.
const (
	CodecUnknown Codec = iota
	CodecOpus
	CodecG722
	CodecPCMU
	CodecPCMA
	// CodecMultiopus is multichannel Opus (RTP name "multiopus", as Chrome and Janus call it): one
	// Opus multistream packet per frame carrying several coupled and uncoupled streams, 5.1 surround
	// in Janus's demo. To forwarding it is Opus: same clock, no layers.
	CodecMultiopus
	CodecVP8
	CodecVP9
	CodecH264
	CodecAV1
	CodecH265
)

var codecNames = [...]string{"", "opus", "g722", "pcmu", "pcma", "multiopus", "vp8", "vp9", "h264", "av1", "h265"}

// String is the codec's name as Janus writes it ("vp8", "opus", ...); "" when unknown.
func (c Codec) String() string {
	if int(c) >= len(codecNames) {
		return ""
	}
	return codecNames[c]
}

// IsVideo reports whether c is a video codec.
func (c Codec) IsVideo() bool { return c >= CodecVP8 }

// ClockRate is the RTP clock rate of the codec.
func (c Codec) ClockRate() uint32 {
	switch c {
	case CodecOpus, CodecMultiopus:
		return 48000
	case CodecG722, CodecPCMU, CodecPCMA:
		return 8000
	default:
		return 90000
	}
}

// Channels is the channel count an SDP rtpmap gives the codec: 2 for Opus (always so in RTP, RFC
// 7587), 6 for multichannel Opus (5.1, the layout Chrome and Janus negotiate), 0 (unstated, one)
// for the others.
func (c Codec) Channels() uint16 {
	switch c {
	case CodecOpus:
		return 2
	case CodecMultiopus:
		return 6
	default:
		return 0
	}
}

// CodecByName accepts Janus names ("vp8") and MIME types ("video/VP8"), in any case.
func CodecByName(name string) Codec {
	if _, sub, ok := strings.Cut(name, "/"); ok {
		name = sub
	}
	name = strings.ToLower(name)
	for i, n := range codecNames {
		if i > 0 && n == name {
			return Codec(i)
		}
	}
	return CodecUnknown
}

// Flags is everything the forwarding path needs to know about one packet's payload. One parse
// function per codec fills it; the selectors and the rewriter only read it.
type Flags struct {
	// Keyframe: this packet belongs to a picture that decodes without earlier pictures, and starts
	// it (or, for H.264, carries its SPS or IDR).
	Keyframe bool
	// Start and End mark the first and last packet of a frame (of a layer frame for SVC). End is
	// only set by codecs whose descriptor says so (VP9 E bit, AV1 Dependency Descriptor); the RTP
	// marker says it for the others.
	Start, End bool
	// SID and TID are the spatial and temporal layer ids, -1 when the payload carries none.
	SID, TID int8
	// SwitchUp: a receiver may switch up to this packet's temporal layer here (VP8 Y bit, VP9 U bit,
	// a Dependency Descriptor "switch" indication).
	SwitchUp bool
	// SpatialSwitch: this layer frame does not depend on earlier pictures of its own layer, so a
	// receiver may switch up to this spatial layer here (VP9 P=0; a Dependency Descriptor "switch").
	SpatialSwitch bool
	// Discardable: nothing depends on this frame (VP8 N bit, VP9 D=0 at the top spatial layer is not
	// used: only what the codec states).
	Discardable bool
	// PicIDPos is the offset in the payload of the picture id (VP8, VP9), 0 when there is none;
	// PicID15 says it is the 15-bit form. TL0Pos is the offset of TL0PICIDX, 0 when absent.
	PicIDPos int16
	PicID15  bool
	TL0Pos   int16
}

// NoLayers returns Flags for a payload with no layer information.
func NoLayers() Flags { return Flags{SID: -1, TID: -1} }

// PictureID reads the picture id that f locates in payload.
func (f *Flags) PictureID(payload []byte) (uint16, bool) {
	i := int(f.PicIDPos)
	if i == 0 || i >= len(payload) || (f.PicID15 && i+1 >= len(payload)) {
		return 0, false
	}
	if f.PicID15 {
		return uint16(payload[i]&0x7f)<<8 | uint16(payload[i+1]), true
	}
	return uint16(payload[i] & 0x7f), true
}

// SetPictureID writes a picture id (masked to the width the packet uses) where f locates it.
func (f *Flags) SetPictureID(payload []byte, id uint16) {
	i := int(f.PicIDPos)
	if i == 0 || i >= len(payload) || (f.PicID15 && i+1 >= len(payload)) {
		return
	}
	if f.PicID15 {
		payload[i] = 0x80 | byte(id>>8)&0x7f
		payload[i+1] = byte(id)
		return
	}
	payload[i] = byte(id) & 0x7f
}

// TL0PicIdx reads TL0PICIDX where f locates it.
func (f *Flags) TL0PicIdx(payload []byte) (uint8, bool) {
	i := int(f.TL0Pos)
	if i == 0 || i >= len(payload) {
		return 0, false
	}
	return payload[i], true
}

// SetTL0PicIdx writes TL0PICIDX where f locates it.
func (f *Flags) SetTL0PicIdx(payload []byte, v uint8) {
	if i := int(f.TL0Pos); i > 0 && i < len(payload) {
		payload[i] = v
	}
}

// ParsePayload fills f from a payload of codec c; ok is false when the payload is malformed (the
// packet should be dropped and counted). ParseAV1 needs the Dependency Descriptor and state, so
// AV1 goes through DDParser instead; here it only reads the aggregation header.
func ParsePayload(c Codec, payload []byte) (f Flags, ok bool) {
	switch c {
	case CodecVP8:
		return ParseVP8(payload)
	case CodecVP9:
		return ParseVP9(payload)
	case CodecH264:
		return ParseH264(payload)
	case CodecAV1:
		return ParseAV1(payload)
	default:
		return NoLayers(), true
	}
}
