package media

// ParseVP8 reads the VP8 payload descriptor (RFC 7741 section 4.2) and the keyframe bit of the VP8
// payload header:
//
//	X|R|N|S|R|PID      X: extensions, N: non-reference frame, S: start of partition
//	I|L|T|K|RSV        I: picture id, L: TL0PICIDX, T: TID/Y, K: KEYIDX
//	M|PictureID        7 or 15 bits
//	TL0PICIDX
//	TID|Y|KEYIDX       TID: temporal layer, Y: layer sync (switch-up point)
func ParseVP8(p []byte) (Flags, bool) {
	f := NoLayers()
	if len(p) < 1 {
		return f, false
	}
	i := 1
	f.Discardable = p[0]&0x20 != 0
	start := p[0]&0x10 != 0 && p[0]&0x07 == 0
	if p[0]&0x80 != 0 {
		if i >= len(p) {
			return f, false
		}
		x := p[i]
		i++
		if x&0x80 != 0 {
			if i >= len(p) {
				return f, false
			}
			f.PicIDPos = int16(i)
			if p[i]&0x80 != 0 {
				f.PicID15 = true
				i++
			}
			i++
		}
		if x&0x40 != 0 {
			if i >= len(p) {
				return f, false
			}
			f.TL0Pos = int16(i)
			i++
		}
		if x&0x30 != 0 {
			if i >= len(p) {
				return f, false
			}
			if x&0x20 != 0 {
				f.TID = int8(p[i] >> 6)
				f.SwitchUp = p[i]&0x20 != 0
			}
			i++
		}
	}
	if i > len(p) {
		return f, false
	}
	f.Start = start
	if start {
		if i >= len(p) {
			return f, false // a frame start needs the VP8 payload header
		}
		f.Keyframe = p[i]&0x01 == 0
	}
	if f.Keyframe {
		f.SwitchUp = true
		f.SpatialSwitch = true
	}
	return f, true
}
