package media

// H.264 NAL unit types strata looks at (RFC 6184).
const (
	nalIDR   = 5
	nalSPS   = 7
	nalPPS   = 8
	nalSTAPA = 24
	nalFUA   = 28
)

// ParseH264 finds keyframes in the packetization modes browsers use (RFC 6184): single NAL units,
// STAP-A aggregates and FU-A fragments. A packet carrying an SPS or an IDR slice (or the first
// fragment of one) is a keyframe. H.264 here has no layers.
func ParseH264(p []byte) (Flags, bool) {
	f := NoLayers()
	if len(p) < 1 || p[0]&0x80 != 0 { // forbidden_zero_bit
		return f, false
	}
	switch nal := p[0] & 0x1f; nal {
	case nalSTAPA:
		f.Start = true
		i := 1
		for i < len(p) {
			if i+2 > len(p) {
				return f, false
			}
			size := int(p[i])<<8 | int(p[i+1])
			i += 2
			if size == 0 || i+size > len(p) {
				return f, false
			}
			if t := p[i] & 0x1f; t == nalIDR || t == nalSPS {
				f.Keyframe = true
			}
			i += size
		}
	case nalFUA:
		if len(p) < 2 {
			return f, false
		}
		f.Start = p[1]&0x80 != 0
		f.End = p[1]&0x40 != 0
		t := p[1] & 0x1f
		f.Keyframe = f.Start && (t == nalIDR || t == nalSPS)
	case 0, 25, 26, 27, 29, 30, 31: // reserved, STAP-B, MTAP, FU-B: not used by browsers
		return f, false
	default:
		f.Start = true
		f.Keyframe = nal == nalIDR || nal == nalSPS
	}
	if f.Keyframe {
		f.SwitchUp, f.SpatialSwitch = true, true
	}
	return f, true
}
