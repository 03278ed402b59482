package echotest

import "encoding/binary"

// rtpView locates the parts of an RTP packet in its buffer, so the forward path can read and rewrite
// fields in place without unmarshalling (and allocating) a packet.
type rtpView struct {
	seq        uint16
	ts         uint32
	ssrc       uint32
	marker     bool
	extProfile uint16
	extStart   int // first byte of the extension elements
	extEnd     int
	payload    int // first payload byte
	payloadEnd int // end of payload (padding excluded)
}

const rtpFixedHeader = 12

// parseRTP validates the fixed header, CSRCs, extension block and padding of an RTP packet.
func parseRTP(b []byte) (rtpView, bool) {
	var v rtpView
	if len(b) < rtpFixedHeader || b[0]>>6 != 2 {
		return v, false
	}
	v.marker = b[1]&0x80 != 0
	v.seq = binary.BigEndian.Uint16(b[2:4])
	v.ts = binary.BigEndian.Uint32(b[4:8])
	v.ssrc = binary.BigEndian.Uint32(b[8:12])
	off := rtpFixedHeader + 4*int(b[0]&0x0f)
	if off > len(b) {
		return v, false
	}
	if b[0]&0x10 != 0 {
		if off+4 > len(b) {
			return v, false
		}
		v.extProfile = binary.BigEndian.Uint16(b[off : off+2])
		words := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
		v.extStart = off + 4
		v.extEnd = v.extStart + 4*words
		if v.extEnd > len(b) {
			return v, false
		}
		off = v.extEnd
	}
	v.payload = off
	v.payloadEnd = len(b)
	if b[0]&0x20 != 0 {
		pad := int(b[len(b)-1])
		if pad == 0 || v.payloadEnd-pad < v.payload {
			return v, false
		}
		v.payloadEnd -= pad
	}
	return v, true
}

func setSeq(b []byte, seq uint16) { binary.BigEndian.PutUint16(b[2:4], seq) }
func setTS(b []byte, ts uint32)   { binary.BigEndian.PutUint32(b[4:8], ts) }
func setMarker(b []byte)          { b[1] |= 0x80 }

// blankExtensions overwrites the header extension elements with the given ids (one-byte or two-byte
// form, RFC 8285) with padding bytes, in place: the echo must not carry the browser's rid to the
// browser, which would take it for a simulcast stream. Zero ids are ignored.
func blankExtensions(b []byte, v rtpView, ids ...uint8) {
	if v.extStart == 0 || len(ids) == 0 {
		return
	}
	switch {
	case v.extProfile == 0xBEDE:
		blankOneByte(b[v.extStart:v.extEnd], ids)
	case v.extProfile&0xFFF0 == 0x1000:
		blankTwoByte(b[v.extStart:v.extEnd], ids)
	}
}

func blankOneByte(ext []byte, ids []uint8) {
	for i := 0; i < len(ext); {
		if ext[i] == 0 { // padding
			i++
			continue
		}
		id, n := ext[i]>>4, int(ext[i]&0x0f)+1
		if id == 15 || i+1+n > len(ext) { // 15 ends the block
			return
		}
		if hasID(ids, id) {
			clear(ext[i : i+1+n])
		}
		i += 1 + n
	}
}

func blankTwoByte(ext []byte, ids []uint8) {
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
		if hasID(ids, id) {
			clear(ext[i : i+2+n])
		}
		i += 2 + n
	}
}

func hasID(ids []uint8, id uint8) bool {
	for _, x := range ids {
		if x != 0 && x == id {
			return true
		}
	}
	return false
}

// seqNewer reports whether a comes after b in 16-bit sequence space.
func seqNewer(a, b uint16) bool { return a != b && a-b < 0x8000 }
