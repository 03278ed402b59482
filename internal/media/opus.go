package media

// OpusSamples is how many 48 kHz samples (per channel) an Opus packet holds, read from its table
// of contents (RFC 6716 §3.1); 0 if the packet is empty or its table of contents is malformed.
func OpusSamples(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	toc := p[0]
	var frame int // samples per frame
	switch cfg := toc >> 3; {
	case cfg < 12: // SILK: 10, 20, 40, 60 ms
		frame = [4]int{480, 960, 1920, 2880}[cfg&3]
	case cfg < 16: // hybrid: 10, 20 ms
		frame = [2]int{480, 960}[cfg&1]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = [4]int{120, 240, 480, 960}[cfg&3]
	}
	frames := 1
	switch toc & 3 {
	case 1, 2:
		frames = 2
	case 3:
		if len(p) < 2 {
			return 0
		}
		frames = int(p[1] & 0x3f)
	}
	if n := frame * frames; n > 0 && n <= 5760 { // at most 120 ms
		return n
	}
	return 0
}
