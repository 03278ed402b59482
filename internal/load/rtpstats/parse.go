package rtpstats

import "encoding/binary"

// Header is the part of an RTP header the statistics need.
type Header struct {
	Marker        bool
	PayloadType   uint8
	Seq           uint16
	Timestamp     uint32
	SSRC          uint32
	PayloadOffset int // where the payload starts (after CSRCs and the extension)
	Padding       int // padding bytes at the end
}

// ParseHeader reads an RTP header without allocating. It rejects anything that is not version 2
// or whose CSRC list, extension or padding overrun the packet.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < 12 || b[0]>>6 != 2 {
		return h, ErrShort
	}
	h.Marker = b[1]&0x80 != 0
	h.PayloadType = b[1] & 0x7f
	h.Seq = binary.BigEndian.Uint16(b[2:])
	h.Timestamp = binary.BigEndian.Uint32(b[4:])
	h.SSRC = binary.BigEndian.Uint32(b[8:])
	off := 12 + 4*int(b[0]&0x0f)
	if b[0]&0x10 != 0 { // extension: 4-byte header then length words
		if len(b) < off+4 {
			return h, ErrShort
		}
		off += 4 + 4*int(binary.BigEndian.Uint16(b[off+2:]))
	}
	if off > len(b) {
		return h, ErrShort
	}
	if b[0]&0x20 != 0 {
		if len(b) == off {
			return h, ErrShort
		}
		h.Padding = int(b[len(b)-1])
		if off+h.Padding > len(b) {
			return h, ErrShort
		}
	}
	h.PayloadOffset = off
	return h, nil
}

// VP8FrameStart reads a VP8 RTP payload descriptor (RFC 7741 §4.2). start is true on the first
// packet of a frame (S bit set, partition 0); key is then true when the frame is a keyframe (the
// P bit of the VP8 payload header is 0). ok is false when the descriptor is truncated.
func VP8FrameStart(p []byte) (start, key, ok bool) {
	if len(p) < 1 {
		return false, false, false
	}
	i := 1
	if p[0]&0x80 != 0 { // X: extended control bits follow
		if len(p) < 2 {
			return false, false, false
		}
		x := p[1]
		i = 2
		if x&0x80 != 0 { // I: picture id, 7 or 15 bits
			if len(p) <= i {
				return false, false, false
			}
			if p[i]&0x80 != 0 {
				i += 2
			} else {
				i++
			}
		}
		if x&0x40 != 0 { // L: TL0PICIDX
			i++
		}
		if x&0x30 != 0 { // T or K: one byte for TID/Y/KEYIDX
			i++
		}
	}
	if len(p) <= i {
		return false, false, false
	}
	start = p[0]&0x10 != 0 && p[0]&0x07 == 0
	if !start {
		return false, false, true
	}
	return true, p[i]&0x01 == 0, true
}
