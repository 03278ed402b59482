// Package mediatest builds codec payloads for tests of the media path.
package mediatest

// VP9Picture returns the packets of one VP9 k-SVC picture with three spatial layers, one packet
// per layer frame (payload type 98, SSRC 9): non-flexible mode, 15-bit picture id, TL0PICIDX, the
// U bit on temporal layers above 0; on keyframes every layer frame is P=0. seq is advanced by the
// packets built.
func VP9Picture(seq *uint16, ts uint32, pic uint16, tl0, tid uint8, key bool) [][]byte {
	var out [][]byte
	for sid := uint8(0); sid < 3; sid++ {
		b0 := byte(0xA0 | 0x08 | 0x04) // I, L, B, E
		if !key {
			b0 |= 0x40 // P
		}
		marker := byte(0)
		if sid == 2 {
			marker = 0x80
		}
		u := byte(0)
		if tid > 0 {
			u = 0x10
		}
		out = append(out, []byte{0x80, marker | 98, byte(*seq >> 8), byte(*seq), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts), 0, 0, 0, 9,
			b0, 0x80 | byte(pic>>8), byte(pic), tid<<5 | u | sid<<1, tl0, 0xAA, sid})
		*seq++
	}
	return out
}
