package playable

import (
	"time"

	"github.com/pion/rtp"
)

// opusRate is Opus's RTP clock, and the sample rate of Ogg/Opus granules.
const opusRate = 48000

// silenceFrame is the length of the silence frame a gap is filled with.
const silenceFrame = 20 * time.Millisecond

// opusSilence is a 20 ms mono CELT frame of silence, the frame janus-pp-rec fills gaps with.
var opusSilence = []byte{0xf8, 0xff, 0xfe}

// maxFill bounds the silence one gap becomes: a longer jump in the timestamps (a corrupt packet,
// not a pause anyone recorded) is left as a jump, rather than hours of silence written out.
const maxFill = time.Hour

// audio writes an Opus packet as one frame, after silence for the time missing before it.
func (t *track) audio(p *rtp.Packet, at time.Duration, out func(*track, frame)) {
	n := opusSamples(p.Payload)
	if n == 0 {
		t.st.Dropped++
		return
	}
	pts := t.pts(p.Timestamp, at)
	if t.wrote {
		if gap := pts - t.nextPTS; gap >= silenceFrame && gap <= maxFill {
			for k := t.nextPTS; k+silenceFrame <= pts; k += silenceFrame {
				t.emit(k, opusSilence, true, out)
				t.st.Silence++
			}
		}
	}
	t.emit(pts, p.Payload, true, out)
	t.nextPTS = max(t.nextPTS, t.lastPTS+time.Duration(n)*time.Second/opusRate)
}

// opusSamples is how many 48 kHz samples an Opus packet holds (RFC 6716 §3.1), 0 if it is empty
// or its table of contents is malformed.
func opusSamples(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	toc := p[0]
	var frame int // samples per frame
	switch cfg := toc >> 3; {
	case cfg < 12: // SILK: 10, 20, 40, 60 ms
		frame = []int{480, 960, 1920, 2880}[cfg&3]
	case cfg < 16: // hybrid: 10, 20 ms
		frame = []int{480, 960}[cfg&1]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = []int{120, 240, 480, 960}[cfg&3]
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
