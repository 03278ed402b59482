package media

import "encoding/binary"

// HeaderSize is the size of the fixed RTP header.
const HeaderSize = 12

// Header locates the parts of an RTP packet inside its buffer, so the forwarding path can read and
// rewrite fields in place without unmarshalling (and allocating) a packet.
type Header struct {
	Marker      bool
	PayloadType uint8
	Seq         uint16
	Timestamp   uint32
	SSRC        uint32
	// ExtProfile is 0xBEDE (one-byte elements) or 0x100x (two-byte elements); 0 without extensions.
	ExtProfile uint16
	// ExtStart and ExtEnd bound the extension elements (0, 0 without extensions).
	ExtStart, ExtEnd int
	// PayloadStart and PayloadEnd bound the payload; padding is excluded.
	PayloadStart, PayloadEnd int
}

// ParseRTP validates the fixed header, CSRCs, extension block and padding of an RTP packet. It
// rejects anything that is not RTP version 2 or does not fit the buffer; it never panics.
func ParseRTP(b []byte) (Header, bool) {
	var h Header
	if len(b) < HeaderSize || b[0]>>6 != 2 {
		return h, false
	}
	h.Marker = b[1]&0x80 != 0
	h.PayloadType = b[1] & 0x7f
	h.Seq = binary.BigEndian.Uint16(b[2:4])
	h.Timestamp = binary.BigEndian.Uint32(b[4:8])
	h.SSRC = binary.BigEndian.Uint32(b[8:12])
	off := HeaderSize + 4*int(b[0]&0x0f)
	if off > len(b) {
		return h, false
	}
	if b[0]&0x10 != 0 {
		if off+4 > len(b) {
			return h, false
		}
		h.ExtProfile = binary.BigEndian.Uint16(b[off : off+2])
		words := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
		h.ExtStart = off + 4
		h.ExtEnd = h.ExtStart + 4*words
		if h.ExtEnd > len(b) {
			return h, false
		}
		off = h.ExtEnd
	}
	h.PayloadStart, h.PayloadEnd = off, len(b)
	if b[0]&0x20 != 0 {
		pad := int(b[len(b)-1])
		if pad == 0 || h.PayloadEnd-pad < h.PayloadStart {
			return h, false
		}
		h.PayloadEnd -= pad
	}
	return h, true
}

// Payload returns the payload of b as located by h.
func (h *Header) Payload(b []byte) []byte { return b[h.PayloadStart:h.PayloadEnd] }

// SetSeq, SetTimestamp, SetSSRC, SetPayloadType and SetMarker rewrite header fields in place.
func SetSeq(b []byte, seq uint16)      { binary.BigEndian.PutUint16(b[2:4], seq) }
func SetTimestamp(b []byte, ts uint32) { binary.BigEndian.PutUint32(b[4:8], ts) }
func SetSSRC(b []byte, ssrc uint32)    { binary.BigEndian.PutUint32(b[8:12], ssrc) }
func SetPayloadType(b []byte, pt uint8) {
	b[1] = b[1]&0x80 | pt&0x7f
}
func SetMarker(b []byte, on bool) {
	if on {
		b[1] |= 0x80
	} else {
		b[1] &^= 0x80
	}
}

// Extension returns the value of the header extension element with the given id (RFC 8285,
// one-byte or two-byte form), or nil. The slice aliases b.
func (h *Header) Extension(b []byte, id uint8) []byte {
	if id == 0 || h.ExtStart == 0 || h.ExtEnd > len(b) {
		return nil
	}
	ext := b[h.ExtStart:h.ExtEnd]
	twoByte := h.ExtProfile&0xFFF0 == 0x1000
	if !twoByte && h.ExtProfile != 0xBEDE {
		return nil
	}
	for i := 0; i < len(ext); {
		if ext[i] == 0 {
			i++
			continue
		}
		var eid uint8
		var start, n int
		if twoByte {
			if i+2 > len(ext) {
				return nil
			}
			eid, start, n = ext[i], i+2, int(ext[i+1])
		} else {
			eid, start, n = ext[i]>>4, i+1, int(ext[i]&0x0f)+1
			if eid == 15 {
				return nil
			}
		}
		if start+n > len(ext) {
			return nil
		}
		if eid == id {
			return ext[start : start+n]
		}
		i = start + n
	}
	return nil
}

// Extensions calls f for each header extension element until f returns false. Malformed trailing
// elements end the walk.
func (h *Header) Extensions(b []byte, f func(id uint8, value []byte) bool) {
	if h.ExtStart == 0 || h.ExtEnd > len(b) {
		return
	}
	ext := b[h.ExtStart:h.ExtEnd]
	switch {
	case h.ExtProfile == 0xBEDE:
		walkOneByte(ext, f)
	case h.ExtProfile&0xFFF0 == 0x1000:
		walkTwoByte(ext, f)
	}
}

func walkOneByte(ext []byte, f func(uint8, []byte) bool) {
	for i := 0; i < len(ext); {
		if ext[i] == 0 { // padding
			i++
			continue
		}
		id, n := ext[i]>>4, int(ext[i]&0x0f)+1
		if id == 15 || i+1+n > len(ext) { // 15 ends the block
			return
		}
		if !f(id, ext[i+1:i+1+n]) {
			return
		}
		i += 1 + n
	}
}

func walkTwoByte(ext []byte, f func(uint8, []byte) bool) {
	for i := 0; i < len(ext); {
		if ext[i] == 0 {
			i++
			continue
		}
		if i+2 > len(ext) {
			return
		}
		id, n := ext[i], int(ext[i+1])
		if i+2+n > len(ext) {
			return
		}
		if !f(id, ext[i+2:i+2+n]) {
			return
		}
		i += 2 + n
	}
}

// SeqNewer reports whether a comes after b in 16-bit sequence space.
func SeqNewer(a, b uint16) bool { return a != b && a-b < 0x8000 }
