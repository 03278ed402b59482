package echotest

// payloadInfo is what the forward path needs to know about a video payload: all codec knowledge sits
// in one parse function per codec, the selectors and the rewriter stay codec-agnostic.
type payloadInfo struct {
	// keyframe: this packet starts a picture that decodes without earlier ones.
	keyframe bool
	// start and end of a (layer) frame.
	start, end bool
	// tid and sid are the temporal and spatial layer ids, -1 when the payload carries none.
	tid, sid int8
	// switchUp: a temporal switching-up point (VP8 Y bit, VP9 U bit).
	switchUp bool
	// VP8 picture id and TL0PICIDX positions in the payload (0 when absent), for rewriting.
	picID       int
	picID15     bool
	tl0PicIdx   int
	hasPicture  bool
	hasTL0Index bool
}

func noLayers() payloadInfo { return payloadInfo{tid: -1, sid: -1} }

// parseVP8 reads the VP8 payload descriptor (RFC 7741 section 4.2) and the keyframe bit of the VP8
// payload header.
func parseVP8(p []byte) (payloadInfo, bool) {
	info := noLayers()
	if len(p) < 1 {
		return info, false
	}
	i := 1
	start := p[0]&0x10 != 0
	partition := p[0] & 0x07
	if p[0]&0x80 != 0 { // X: extended control bits
		if i >= len(p) {
			return info, false
		}
		x := p[i]
		i++
		if x&0x80 != 0 { // I: picture id
			if i >= len(p) {
				return info, false
			}
			info.hasPicture, info.picID = true, i
			if p[i]&0x80 != 0 {
				info.picID15 = true
				i++
			}
			i++
		}
		if x&0x40 != 0 { // L: TL0PICIDX
			info.hasTL0Index, info.tl0PicIdx = true, i
			i++
		}
		if x&0x30 != 0 { // T or K: TID/Y/KEYIDX
			if i >= len(p) {
				return info, false
			}
			if x&0x20 != 0 {
				info.tid = int8(p[i] >> 6)
				info.switchUp = p[i]&0x20 != 0
			}
			i++
		}
	}
	if i > len(p) {
		return info, false
	}
	info.start = start && partition == 0
	if info.start && i < len(p) {
		info.keyframe = p[i]&0x01 == 0
	}
	return info, true
}

// parseVP9 reads the VP9 payload descriptor (RFC 9628 section 4.2), including the scalability
// structure, so that spatial and temporal layers can be dropped.
func parseVP9(p []byte) (payloadInfo, bool) {
	info := noLayers()
	if len(p) < 1 {
		return info, false
	}
	b := p[0]
	hasPicID, interPic, hasLayers, flexible := b&0x80 != 0, b&0x40 != 0, b&0x20 != 0, b&0x10 != 0
	info.start, info.end = b&0x08 != 0, b&0x04 != 0
	hasSS := b&0x02 != 0
	i := 1
	if hasPicID {
		if i >= len(p) {
			return info, false
		}
		if p[i]&0x80 != 0 {
			i++
		}
		i++
	}
	if hasLayers {
		if i >= len(p) {
			return info, false
		}
		info.tid, info.switchUp, info.sid = int8(p[i]>>5), p[i]&0x10 != 0, int8((p[i]>>1)&0x07)
		i++
		if !flexible {
			i++ // TL0PICIDX
		}
	}
	if flexible && interPic { // up to three reference indices, N bit chains them
		for n := 0; n < 3; n++ {
			if i >= len(p) {
				return info, false
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
			return info, false
		}
	}
	if i > len(p) {
		return info, false
	}
	info.keyframe = info.start && !interPic && info.sid <= 0
	return info, true
}

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

// parseH264 finds IDR slices and SPS in single NAL units, STAP-A and the first FU-A fragment.
func parseH264(p []byte) (payloadInfo, bool) {
	info := noLayers()
	if len(p) < 1 {
		return info, false
	}
	switch nal := p[0] & 0x1f; nal {
	case 24: // STAP-A
		for i := 1; i+2 < len(p); {
			size := int(p[i])<<8 | int(p[i+1])
			if size == 0 || i+2+size > len(p) {
				return info, i+2 <= len(p)
			}
			if t := p[i+2] & 0x1f; t == 5 || t == 7 {
				info.keyframe = true
			}
			i += 2 + size
		}
		info.start = true
	case 28: // FU-A
		if len(p) < 2 {
			return info, false
		}
		info.start = p[1]&0x80 != 0
		info.end = p[1]&0x40 != 0
		t := p[1] & 0x1f
		info.keyframe = info.start && (t == 5 || t == 7)
	default:
		info.start = true
		info.keyframe = nal == 5 || nal == 7
	}
	return info, true
}

// parseAV1 reads the aggregation header: N marks the first packet of a coded video sequence, which
// starts with a keyframe.
func parseAV1(p []byte) (payloadInfo, bool) {
	info := noLayers()
	if len(p) < 1 {
		return info, false
	}
	info.start = p[0]&0x80 == 0 // Z: continues an OBU from the previous packet
	info.keyframe = p[0]&0x08 != 0
	return info, true
}

// parsePayload dispatches on the codec name (lower case, as Janus names them).
func parsePayload(codec string, p []byte) (payloadInfo, bool) {
	switch codec {
	case "vp8":
		return parseVP8(p)
	case "vp9":
		return parseVP9(p)
	case "h264":
		return parseH264(p)
	case "av1":
		return parseAV1(p)
	default:
		return noLayers(), true
	}
}
