package media

// ParseVP9 reads the VP9 payload descriptor (RFC 9628 section 4.2), flexible or not, including the
// scalability structure, so that spatial and temporal layers can be selected:
//
//	I|P|L|F|B|E|V|Z     I: picture id, P: inter-picture predicted, L: layer indices,
//	                    F: flexible mode, B/E: start/end of a layer frame, V: scalability structure
//	M|PictureID         7 or 15 bits
//	TID|U|SID|D         U: switching-up point, D: inter-layer dependency
//	TL0PICIDX           non-flexible mode only
//	P_DIFF|N            flexible mode with P: up to three reference indices
func ParseVP9(p []byte) (Flags, bool) {
	f := NoLayers()
	if len(p) < 1 {
		return f, false
	}
	b := p[0]
	hasPicID, interPic, hasLayers, flexible := b&0x80 != 0, b&0x40 != 0, b&0x20 != 0, b&0x10 != 0
	f.Start, f.End = b&0x08 != 0, b&0x04 != 0
	hasSS := b&0x02 != 0
	i := 1
	if hasPicID {
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
	if hasLayers {
		if i >= len(p) {
			return f, false
		}
		f.TID, f.SwitchUp, f.SID = int8(p[i]>>5), p[i]&0x10 != 0, int8((p[i]>>1)&0x07)
		i++
		if !flexible {
			if i >= len(p) {
				return f, false
			}
			f.TL0Pos = int16(i)
			i++
		}
	}
	if flexible && interPic {
		for n := 0; ; n++ {
			if i >= len(p) || n == 3 {
				return f, false
			}
			more := p[i]&0x01 != 0
			i++
			if !more {
				break
			}
		}
	}
	if hasSS {
		var ok bool
		if i, ok = skipVP9ScalabilityStructure(p, i); !ok {
			return f, false
		}
	}
	if i > len(p) {
		return f, false
	}
	f.SpatialSwitch = f.Start && !interPic
	f.Keyframe = f.SpatialSwitch && f.SID <= 0
	if f.Keyframe {
		f.SwitchUp = true
	}
	return f, true
}

// skipVP9ScalabilityStructure steps over the SS data (RFC 9628 section 4.2.1).
func skipVP9ScalabilityStructure(p []byte, i int) (int, bool) {
	if i >= len(p) {
		return i, false
	}
	spatial := int(p[i]>>5) + 1
	hasSizes, hasGroups := p[i]&0x10 != 0, p[i]&0x08 != 0
	i++
	if hasSizes {
		i += 4 * spatial
	}
	if hasGroups {
		if i >= len(p) {
			return i, false
		}
		groups := int(p[i])
		i++
		for range groups {
			if i >= len(p) {
				return i, false
			}
			refs := int(p[i]>>2) & 0x03
			i += 1 + refs
		}
	}
	return i, i <= len(p)
}
