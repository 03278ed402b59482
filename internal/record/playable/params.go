package playable

import (
	"bytes"
	"encoding/binary"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/av1"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/pion/rtp/codecs/vp9"

	"github.com/strata-rtc/strata/internal/media"
)

// videoParams is what a video track's keyframes say that a container's header needs.
type videoParams struct {
	width, height int
	// H.264: the parameter sets (without start codes); AV1: the sequence header OBU (without
	// its size field) and what it says; VP9: the first keyframe's header.
	sps, pps []byte
	seq      []byte
	av1      av1.SequenceHeader
	vp9      vp9.Header
}

// keyframe says whether frame decodes on its own, and takes the parameters it carries.
func (v *videoParams) keyframe(c media.Codec, frame []byte) bool {
	switch c {
	case media.CodecVP8:
		return v.vp8(frame)
	case media.CodecVP9:
		return v.vp9Key(frame)
	case media.CodecH264:
		return v.h264(frame)
	case media.CodecAV1:
		return v.av1Key(frame)
	}
	return true
}

// vp8 reads a VP8 key frame's start code and size (RFC 6386 §9.1).
func (v *videoParams) vp8(f []byte) bool {
	if len(f) < 10 || f[0]&1 != 0 || !bytes.Equal(f[3:6], []byte{0x9d, 0x01, 0x2a}) {
		return false
	}
	v.width = int(binary.LittleEndian.Uint16(f[6:8]) & 0x3fff)
	v.height = int(binary.LittleEndian.Uint16(f[8:10]) & 0x3fff)
	return v.width > 0 && v.height > 0
}

func (v *videoParams) vp9Key(f []byte) bool {
	var h vp9.Header
	if err := h.Unmarshal(f); err != nil || h.ShowExistingFrame || h.NonKeyFrame || h.FrameSize == nil || h.ColorConfig == nil {
		return false
	}
	v.vp9, v.width, v.height = h, int(h.Width()), int(h.Height())
	return true
}

// h264 keeps the SPS and PPS; an IDR picture is a keyframe once both are known.
func (v *videoParams) h264(f []byte) bool {
	var au h264.AnnexB
	if err := au.Unmarshal(f); err != nil {
		return false
	}
	idr := false
	for _, nalu := range au {
		if len(nalu) == 0 {
			continue
		}
		switch h264.NALUType(nalu[0] & 0x1f) {
		case h264.NALUTypeSPS:
			var sps h264.SPS
			if sps.Unmarshal(nalu) == nil {
				v.sps, v.width, v.height = append(v.sps[:0], nalu...), sps.Width(), sps.Height()
			}
		case h264.NALUTypePPS:
			v.pps = append(v.pps[:0], nalu...)
		case h264.NALUTypeIDR:
			idr = true
		}
	}
	return idr && v.sps != nil && v.pps != nil
}

// av1Key: a temporal unit carrying a sequence header starts a coded video sequence, the way WebRTC
// senders send keyframes.
func (v *videoParams) av1Key(f []byte) bool {
	for b := f; len(b) > 0; {
		o, rest, err := nextOBU(b)
		if err != nil {
			return false
		}
		b = rest
		if o.typ != obuSequenceHeader {
			continue
		}
		seq := append(append([]byte{o.header[0] &^ 0x02}, o.header[1:]...), o.payload...)
		var sh av1.SequenceHeader
		if sh.Unmarshal(seq) != nil || len(sh.SeqLevelIdx) == 0 || len(sh.SeqTier) == 0 {
			return false
		}
		v.seq, v.av1, v.width, v.height = seq, sh, sh.Width(), sh.Height()
		return true
	}
	return false
}
