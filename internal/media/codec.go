package media

import "strings"

// Codec identifies a codec the forwarding path knows.
type Codec uint8

// Codecs strata forwards. Audio codecs need no payload knowledge.
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

// codecInfo is everything strata knows about a codec outside its payload format: the one table
// the methods of Codec read, so that no other package switches on codec constants.
type codecInfo struct {
	name      string // as Janus writes it
	mime      string
	clockRate uint32
	channels  uint16
	video     bool
	// svc: one stream can carry several spatial layers (VP9 SVC, AV1 with the Dependency
	// Descriptor); the others carry spatial layers only as separate simulcast streams.
	svc bool
	// pictureIDRefs: frames name their references by picture-id difference (VP9's P_DIFF, RFC 9628
	// §4.2), so renumbering picture ids around a dropped picture would break decoding.
	pictureIDRefs bool
	// endBit: the payload descriptor marks the end of a layer frame itself (VP9's E bit), which
	// the RTP marker does not (with SVC it marks only the end of the whole picture).
	endBit bool
	// ddLayers: the stream's layers are described by the Dependency Descriptor header extension
	// (AV1), not by the payload.
	ddLayers bool
}

var codecTable = [...]codecInfo{
	CodecUnknown: {},
	CodecOpus:    {name: "opus", mime: "audio/opus", clockRate: 48000, channels: 2},
	CodecG722:    {name: "g722", mime: "audio/G722", clockRate: 8000},
	CodecPCMU:    {name: "pcmu", mime: "audio/PCMU", clockRate: 8000},
	CodecPCMA:    {name: "pcma", mime: "audio/PCMA", clockRate: 8000},
	// 5.1, the layout Chrome and Janus negotiate.
	CodecMultiopus: {name: "multiopus", mime: "audio/multiopus", clockRate: 48000, channels: 6},
	CodecVP8:       {name: "vp8", mime: "video/VP8", clockRate: 90000, video: true},
	CodecVP9:       {name: "vp9", mime: "video/VP9", clockRate: 90000, video: true, svc: true, pictureIDRefs: true, endBit: true},
	CodecH264:      {name: "h264", mime: "video/H264", clockRate: 90000, video: true},
	CodecAV1:       {name: "av1", mime: "video/AV1", clockRate: 90000, video: true, svc: true, ddLayers: true},
	CodecH265:      {name: "h265", mime: "video/H265", clockRate: 90000, video: true},
}

func (c Codec) info() *codecInfo {
	if int(c) >= len(codecTable) {
		return &codecTable[CodecUnknown]
	}
	return &codecTable[c]
}

// String is the codec's name as Janus writes it ("vp8", "opus", ...); "" when unknown.
func (c Codec) String() string { return c.info().name }

// MimeType is the codec's MIME type as SDP and Pion write it ("video/VP8"); "" when unknown.
func (c Codec) MimeType() string { return c.info().mime }

// IsVideo reports whether c is a video codec.
func (c Codec) IsVideo() bool { return c.info().video }

// ClockRate is the RTP clock rate of the codec (90 kHz for an unknown one).
func (c Codec) ClockRate() uint32 {
	if r := c.info().clockRate; r != 0 {
		return r
	}
	return 90000
}

// Channels is the channel count SDP names for the codec (0 when it names none).
func (c Codec) Channels() uint16 { return c.info().channels }

// SVC reports whether one stream of the codec can carry several spatial layers (VP9, AV1). Streams
// of the other codecs have at most temporal layers; their spatial layers are simulcast streams.
func (c Codec) SVC() bool { return c.info().svc }

// KeepsDroppedPictureIDs reports whether a picture strata drops must keep its picture id in the
// output (the codec's frames reference earlier pictures by picture-id difference), rather than give
// it up so that the subscriber sees no gap.
func (c Codec) KeepsDroppedPictureIDs() bool { return c.info().pictureIDRefs }

// CodecByName accepts Janus names ("vp8") and MIME types ("video/VP8"), in any case.
func CodecByName(name string) Codec {
	if _, sub, ok := strings.Cut(name, "/"); ok {
		name = sub
	}
	name = strings.ToLower(name)
	for i := range codecTable {
		if i > 0 && codecTable[i].name == name {
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
	// Start and End mark the first and last packet of a frame (of a layer frame for SVC).
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
// packet should be dropped and counted). AV1's layers come from the Dependency Descriptor, which
// needs state (ParsePacket); here AV1 only reads the aggregation header.
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

// ParsePacket is all a forwarder needs to know about one packet of codec c, located by h: the
// payload's flags, with the layers of the Dependency Descriptor (extension id ddID, parsed with the
// stream's dd state; 0 when not negotiated) for a codec described by one, and the end of a frame
// from the RTP marker where the payload does not say it. ok is false when the payload is malformed.
func ParsePacket(c Codec, pkt []byte, h *Header, ddID uint8, dd *DDParser) (Flags, bool) {
	if !c.IsVideo() {
		return NoLayers(), true
	}
	f, ok := ParsePayload(c, h.Payload(pkt))
	if !ok {
		return f, false
	}
	if ddID != 0 && dd != nil && c.info().ddLayers {
		if ext := h.Extension(pkt, ddID); ext != nil {
			if fr, ok := dd.Parse(ext); ok {
				fr.Flags(&f)
				return f, true
			}
		}
	}
	if !c.info().endBit {
		f.End = h.Marker
	}
	return f, true
}
