package gcc

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// overuseDetector compares a delay estimate with an adaptive threshold γ (draft §5.4, and the same
// structure in libwebrtc). Both variants scale the estimate by min(deltas, 60) before comparing:
// libwebrtc does (and so does every deployed version of the draft algorithm); the draft text
// compares m(i) itself, but with γ clamped to at least 6 ms that would only flag over-use once
// each group adds 6 ms of queue. The trendline variant also multiplies by its gain (4).
//
//	over-use:  estimate > γ for more than OveruseTime, over at least two deltas, and the raw
//	           value is not decreasing;
//	under-use: estimate < −γ;
//	γ += Δt·k·(|estimate| − γ), k = kUp when |estimate| ≥ γ else kDown, Δt ≤ 100 ms,
//	           skipped when |estimate| − γ > 15 ms, γ clamped to [6, 600] ms.
type overuseDetector struct {
	kUp, kDown  float64
	overuseMs   float64
	threshold   float64
	lastUpdate  time.Duration
	updated     bool
	overuseTime float64 // ms spent above the threshold; < 0 when not over
	overuses    int
	prevValue   float64
	usage       cc.Usage
	estimate    float64 // last scaled estimate, for State
}

const (
	minThreshold       = 6.0
	maxThreshold       = 600.0
	maxAdaptOffsetMs   = 15.0
	maxThresholdStepMs = 100.0
	maxScaleDeltas     = 60
)

func newOveruseDetector(kUp, kDown float64, overuseTime time.Duration, initial float64) overuseDetector {
	return overuseDetector{
		kUp: kUp, kDown: kDown, overuseMs: msOf(overuseTime),
		threshold: initial, overuseTime: -1,
	}
}

// detect classifies one new estimate. value is the raw filter output (m(i) or the trend), scaled
// its thresholded form, sendDeltaMs the group's send delta and deltas the number seen so far.
func (o *overuseDetector) detect(value, scaled, sendDeltaMs float64, deltas int, now time.Duration) cc.Usage {
	if !finite(scaled) {
		return o.usage
	}
	o.estimate = scaled
	if deltas < 2 {
		o.usage = cc.Normal
		return o.usage
	}
	switch {
	case scaled > o.threshold:
		if o.overuseTime < 0 {
			o.overuseTime = sendDeltaMs / 2 // assume over for half the time since the last sample
		} else {
			o.overuseTime += sendDeltaMs
		}
		o.overuses++
		if o.overuseTime > o.overuseMs && o.overuses > 1 && value >= o.prevValue {
			o.overuseTime, o.overuses = 0, 0
			o.usage = cc.Overuse
		}
	case scaled < -o.threshold:
		o.overuseTime, o.overuses = -1, 0
		o.usage = cc.Underuse
	default:
		o.overuseTime, o.overuses = -1, 0
		o.usage = cc.Normal
	}
	o.prevValue = value
	o.adapt(scaled, now)
	return o.usage
}

func (o *overuseDetector) adapt(scaled float64, now time.Duration) {
	if !o.updated {
		o.lastUpdate, o.updated = now, true
	}
	abs := math.Abs(scaled)
	if abs > o.threshold+maxAdaptOffsetMs {
		o.lastUpdate = now // a latency spike, e.g. a sudden capacity drop: do not adapt to it
		return
	}
	k := o.kUp
	if abs < o.threshold {
		k = o.kDown
	}
	dt := math.Max(0, math.Min(msOf(now-o.lastUpdate), maxThresholdStepMs))
	o.threshold += k * (abs - o.threshold) * dt
	o.threshold = math.Max(minThreshold, math.Min(o.threshold, maxThreshold))
	o.lastUpdate = now
}

func scaleByDeltas(v float64, deltas int) float64 { return float64(min(deltas, maxScaleDeltas)) * v }

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
