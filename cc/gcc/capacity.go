package gcc

import "math"

// linkCapacity is the estimate of the link's capacity that tells AIMD it is near convergence.
// The draft keeps an exponential average (smoothing 0.95) of the received rate at each decrease
// with its variance, and treats R̂ within three standard deviations of it as "near max";
// libwebrtc's LinkCapacityEstimator does the same in kbit/s. Both reset the average when the
// throughput leaves the ±3σ band. Probe results do not enter it: libwebrtc's AimdRateControl
// takes a probe with SetEstimate, which leaves the capacity estimate alone (its OnProbeRate is
// used only by an experimental controller). Seeding it from the start-up probe made the sender
// treat a link it had not yet measured under load as "near max" and ramp additively (about
// 20 kbit/s per second) from wherever the first over-use left it.
type linkCapacity struct {
	kbps, deviation float64 // estimate and normalised variance, as libwebrtc keeps them
	has             bool
}

const (
	capacityAlphaOveruse = 0.05
	minDeviation         = 0.4
	maxDeviation         = 2.5
)

func (l *linkCapacity) reset() { l.has = false }

func (l *linkCapacity) update(bps, alpha float64) {
	if !finite(bps) || bps < 0 {
		return
	}
	sample := bps / 1000
	if !l.has {
		l.kbps, l.deviation, l.has = sample, minDeviation, true
	} else {
		l.kbps = (1-alpha)*l.kbps + alpha*sample
	}
	norm := math.Max(l.kbps, 1)
	err := l.kbps - sample
	l.deviation = (1-alpha)*l.deviation + alpha*err*err/norm
	l.deviation = math.Max(minDeviation, math.Min(l.deviation, maxDeviation))
}

// onOveruse records the throughput measured when over-use was detected.
func (l *linkCapacity) onOveruse(bps float64) { l.update(bps, capacityAlphaOveruse) }

func (l *linkCapacity) stddevKbps() float64 { return math.Sqrt(l.deviation * l.kbps) }

// upper and lower are the ±3σ band in bit/s (infinite / zero without an estimate).
func (l *linkCapacity) upper() float64 {
	if !l.has {
		return math.Inf(1)
	}
	return (l.kbps + 3*l.stddevKbps()) * 1000
}

func (l *linkCapacity) lower() float64 {
	if !l.has {
		return 0
	}
	return math.Max(0, l.kbps-3*l.stddevKbps()) * 1000
}

func (l *linkCapacity) bps() float64 { return l.kbps * 1000 }
