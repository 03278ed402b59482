package audio

import "math"

// Gate decides, frame by frame, whether a participant is saying anything: a frame whose level is
// below the threshold, once the hangover after the last louder frame has run out, is silence and
// is left out of the mix. Browsers keep sending a packet every 20 ms when nobody talks (their
// quiet room after noise suppression, around -70 dBov), and a participant who contributes such a
// frame would need its own mix-minus-self encoding; gated, it hears the shared full mix instead,
// and the room encodes once per talker rather than once per participant. The hangover keeps the
// soft ends of words and the pauses inside a phrase in the mix.
//
// A Gate is used by the mixer's goroutine only and allocates nothing.
type Gate struct {
	floor    float64 // mean square of a frame at the threshold; 0 never closes
	hangover int     // frames kept after the last frame above the threshold
	left     int
}

// DefaultGateHangover is how long (15 frames, 300 ms) a gate stays open after the last frame
// above its threshold.
const DefaultGateHangover = 15

// NewGate returns a gate closing below thresholdDBov (the RMS level of a frame in dB relative to
// full scale, e.g. -50; 0 or above disables the gate) after hangover frames.
func NewGate(thresholdDBov float64, hangover int) Gate {
	if thresholdDBov >= 0 {
		return Gate{}
	}
	a := 32767 * math.Pow(10, thresholdDBov/20)
	return Gate{floor: a * a, hangover: max(hangover, 0)}
}

// Open reports whether frame pcm belongs in the mix.
func (g *Gate) Open(pcm []int16) bool {
	if g.floor == 0 || len(pcm) == 0 {
		return true
	}
	var sum int64
	for _, v := range pcm {
		sum += int64(v) * int64(v)
	}
	if float64(sum)/float64(len(pcm)) >= g.floor {
		g.left = g.hangover
		return true
	}
	if g.left > 0 {
		g.left--
		return true
	}
	return false
}

// Reset closes the gate (a restarted stream).
func (g *Gate) Reset() { g.left = 0 }
