package playable

import (
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
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
	n := media.OpusSamples(p.Payload)
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
