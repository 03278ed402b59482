package encadapt

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/internal/ring"
)

// The bitrate adjuster corrects for an encoder that produces more than its target: libwebrtc's
// EncoderBitrateAdjuster gives the encoder the controller's target divided by the utilisation
// factor its EncoderOvershootDetector measured. What it follows:
//
//   - The detector pushes every encoded frame into a virtual pacer buffer that drains at the
//     target; a frame that finds the buffer above one ideal frame (target/fps) overshoots by the
//     excess, capped at the buffer's level before the frame, so that one large frame followed by
//     smaller ones is not penalised. The frame's utilisation factor is 1 + overshoot / ideal
//     frame (the first frame in the window: its size over the ideal, at least 1); the network
//     factor is the mean over the frames of the last 3 s (kWindowSize). A second, "media",
//     buffer may drain up to 5 frames below empty and measures how much of the target the
//     encoder uses over time.
//   - The adjuster reads the network factor once the stream has had 30 frames since its layers
//     changed (kMinFramesSinceLayoutChange; before that, and when the window is empty, the
//     default 1.2), raises it to at least 1 (it never boosts an encoder that undershoots) and
//     caps it at 2 (below half the target the frame dropper is the right tool). If the
//     allocation has headroom above the target (the target capped by the stream's maximum), the
//     overshoot beyond the media factor is granted from it. The encoder gets target / factor,
//     never more than the target nor less than the codec's minimum, and the detector then
//     measures against that adjusted rate.
//   - A new resolution reconfigures the encoder and libwebrtc creates a new adjuster: so does
//     Adapter.
//
// Simplified: libwebrtc's current media factor comes from a RateUtilizationTracker; this uses
// the detector's media buffer (libwebrtc's earlier source of it). It only matters with headroom.
const (
	overshootWindow    = 3 * time.Second
	minFramesForFactor = 30
	defaultFactor      = 1.2
	maxFactor          = 2.0
	maxUnderrunFrames  = 5.0
)

// adjuster is EncoderBitrateAdjuster for one single-layer stream.
type adjuster struct {
	det     overshootDetector
	started bool // the detector has a target
	frames  int  // frames since the detector started
	minRate float64
	factor  float64 // the last factor applied
}

func newAdjuster(minRate float64) adjuster {
	return adjuster{minRate: minRate, factor: 1, det: overshootDetector{samples: ring.New[utilSample](128)}}
}

// rate is the encoder's rate for the controller's target and allocation link at now.
func (a *adjuster) rate(now time.Duration, target, link, fps float64) float64 {
	if !(target > 0) || !(fps > 0) {
		return target
	}
	if !a.started {
		a.started, a.frames = true, 0
	}
	network, media := defaultFactor, defaultFactor
	if a.frames >= minFramesForFactor {
		if n, m, ok := a.det.factors(now); ok {
			network, media = n, m
		}
	}
	f := 1.0
	var wanted float64
	if network >= 1 {
		f = min(network, maxFactor)
		if f > max(1, media) {
			wanted = (f - max(1, media)) * target
		}
	}
	if headroom := link - target; wanted > 0 && headroom > 0 {
		allowed := min(1, headroom/wanted) * wanted
		f *= target / (allowed + target)
	}
	if a.minRate > 0 && a.minRate < target {
		f = min(f, target/a.minRate)
	}
	a.factor = f
	out := min(math.Floor(target/f+0.5), target)
	if out < a.minRate {
		out = a.minRate
	}
	a.det.setTarget(now, out, fps)
	return out
}

// encoded records a frame of bytes encoded at now.
func (a *adjuster) encoded(now time.Duration, bytes int) {
	a.frames++
	if a.started {
		a.det.encoded(now, bytes)
	}
}

// utilSample is one frame's utilisation factors.
type utilSample struct {
	network, media float64
	at             time.Duration
}

// overshootDetector is EncoderOvershootDetector: two virtual buffers draining at the target.
type overshootDetector struct {
	target, fps        float64
	last               time.Duration
	hasLast            bool
	netBits, mediaBits float64
	samples            ring.Ring[utilSample]
	sumNet, sumMedia   float64
}

func (d *overshootDetector) setTarget(now time.Duration, bps, fps float64) {
	if d.target > 0 {
		d.leak(now)
	} else if bps > 0 {
		// The stream starts: a fresh state.
		d.last, d.hasLast = now, true
		d.samples.Discard(d.samples.Len())
		d.sumNet, d.sumMedia, d.netBits, d.mediaBits = 0, 0, 0, 0
	}
	d.target, d.fps = bps, fps
}

func (d *overshootDetector) encoded(now time.Duration, bytes int) {
	d.leak(now)
	ideal := d.idealFrameBits()
	if ideal == 0 {
		return
	}
	bits := float64(bytes * 8)
	first := d.samples.Len() == 0
	n := d.frameFactor(bits, ideal, first, &d.netBits)
	m := d.frameFactor(bits, ideal, first, &d.mediaBits)
	d.sumNet += n
	d.sumMedia += m
	d.samples.Push(utilSample{network: n, media: m, at: now})
}

// frameFactor adds a frame to a buffer and returns its utilisation factor.
func (d *overshootDetector) frameFactor(bits, ideal float64, first bool, level *float64) float64 {
	over := 0.0
	if sum := bits + *level; sum > ideal {
		over = min(*level, sum-ideal)
	}
	f := 1 + over/ideal
	if first {
		f = max(1, bits/ideal)
	}
	*level += bits - over
	return f
}

func (d *overshootDetector) idealFrameBits() float64 {
	if d.fps <= 0 || d.target <= 0 {
		return 0
	}
	return math.Floor((d.target + d.fps/2) / d.fps)
}

// leak drains both buffers at the target since the last update, whole milliseconds as
// libwebrtc counts them.
func (d *overshootDetector) leak(now time.Duration) {
	if d.hasLast && d.target > 0 {
		bits := math.Floor(d.target * float64(now.Milliseconds()-d.last.Milliseconds()) / 1000)
		d.netBits = max(0, d.netBits-bits)
		under := min(maxUnderrunFrames, d.fps) / d.fps
		d.mediaBits = max(-under*d.target, d.mediaBits-bits)
	}
	d.last, d.hasLast = now, true
}

// factors are the mean network and media factors over the window ending at now.
func (d *overshootDetector) factors(now time.Duration) (network, media float64, ok bool) {
	for d.samples.Len() > 0 && d.samples.Front().at < now-overshootWindow {
		s := d.samples.Pop()
		d.sumNet = max(0, d.sumNet-s.network)
		d.sumMedia = max(0, d.sumMedia-s.media)
	}
	n := d.samples.Len()
	if n == 0 {
		return 0, 0, false
	}
	return d.sumNet / float64(n), d.sumMedia / float64(n), true
}
