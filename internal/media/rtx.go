package media

// UnwrapRTX turns an RTX packet (RFC 4588) into the packet it repairs, in place: the original
// sequence number comes out of the first two payload bytes, ssrc and pt are the media stream's. It
// returns the shortened packet, or false for a packet that repairs nothing (a padding-only probe,
// or not RTP). It allocates nothing.
func UnwrapRTX(b []byte, ssrc uint32, pt uint8) ([]byte, bool) {
	h, ok := ParseRTP(b)
	if !ok || h.PayloadEnd-h.PayloadStart <= 2 {
		return nil, false
	}
	osn := b[h.PayloadStart : h.PayloadStart+2]
	b[2], b[3] = osn[0], osn[1]
	SetSSRC(b, ssrc)
	SetPayloadType(b, pt)
	copy(b[h.PayloadStart:], b[h.PayloadStart+2:])
	return b[:len(b)-2], true
}
