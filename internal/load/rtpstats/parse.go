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
	h, _, _, err := ParseSRTPHeader(b)
	if err != nil {
		return h, err
	}
	if b[0]&0x20 != 0 {
		if len(b) == h.PayloadOffset {
			return h, ErrShort
		}
		h.Padding = int(b[len(b)-1])
		if h.PayloadOffset+h.Padding > len(b) {
			return h, ErrShort
		}
	}
	return h, nil
}

// ParseSRTPHeader reads the clear header of an SRTP packet (RFC 3711: the header and its
// extension are not encrypted) without allocating. Unlike ParseHeader it ignores the padding bit
// (the padding count is encrypted, and the packet ends with the authentication tag), so Padding is
// 0. ext is the header extension's data (after its 4-byte header), nil without one; profile is the
// extension's profile (0xBEDE for one-byte elements, 0x100X for two-byte ones).
func ParseSRTPHeader(b []byte) (h Header, profile uint16, ext []byte, err error) {
	if len(b) < 12 || b[0]>>6 != 2 {
		return h, 0, nil, ErrShort
	}
	h.Marker = b[1]&0x80 != 0
	h.PayloadType = b[1] & 0x7f
	h.Seq = binary.BigEndian.Uint16(b[2:])
	h.Timestamp = binary.BigEndian.Uint32(b[4:])
	h.SSRC = binary.BigEndian.Uint32(b[8:])
	off := 12 + 4*int(b[0]&0x0f)
	if b[0]&0x10 != 0 {
		if len(b) < off+4 {
			return h, 0, nil, ErrShort
		}
		profile = binary.BigEndian.Uint16(b[off:])
		end := off + 4 + 4*int(binary.BigEndian.Uint16(b[off+2:]))
		if end > len(b) {
			return h, 0, nil, ErrShort
		}
		ext = b[off+4 : end]
		off = end
	}
	if off > len(b) {
		return h, 0, nil, ErrShort
	}
	h.PayloadOffset = off
	return h, profile, ext, nil
}

// HeaderExtension finds element id in a header extension's data (RFC 8285: one-byte elements
// under profile 0xBEDE, two-byte ones under 0x100X) and returns its value, or nil.
func HeaderExtension(profile uint16, ext []byte, id uint8) []byte {
	switch {
	case profile == 0xBEDE:
		for i := 0; i < len(ext); {
			b := ext[i]
			if b == 0 { // padding
				i++
				continue
			}
			eid, n := b>>4, int(b&0x0f)+1
			if eid == 15 || i+1+n > len(ext) {
				return nil
			}
			if eid == id {
				return ext[i+1 : i+1+n]
			}
			i += 1 + n
		}
	case profile&0xfff0 == 0x1000:
		for i := 0; i+1 < len(ext); {
			if ext[i] == 0 {
				i++
				continue
			}
			eid, n := ext[i], int(ext[i+1])
			if i+2+n > len(ext) {
				return nil
			}
			if eid == id {
				return ext[i+2 : i+2+n]
			}
			i += 2 + n
		}
	}
	return nil
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
