package gcc

import (
	"math"
	"time"
)

// ackedBitrate estimates the rate at which the receiver acknowledges data, following the published
// behaviour of libwebrtc's AcknowledgedBitrateEstimator/BitrateEstimator: bytes are summed over
// windows of 150 ms (500 ms for the first sample), and each window's rate is fused with the
// estimate by a one-dimensional Bayesian update whose sample variance grows with the distance
// between sample and estimate, so outliers move it little. All arithmetic is in kbit/s and ms, as
// there.
type ackedBitrate struct {
	sum      int
	windowMs float64 // time accumulated in the current window
	prev     time.Duration
	hasPrev  bool
	estimate float64 // kbit/s, < 0 when unknown
	variance float64
}

const (
	ackedInitialWindowMs = 500
	ackedWindowMs        = 150
	ackedUncertainty     = 10.0
	ackedInitialVar      = 50.0
	ackedProcessNoise    = 5.0
	ackedFastChangeVar   = 200.0
)

func newAckedBitrate() ackedBitrate { return ackedBitrate{estimate: -1, variance: ackedInitialVar} }

// add folds in one acknowledged packet, given in arrival order.
func (a *ackedBitrate) add(arrival time.Duration, bytes int) {
	window := float64(ackedWindowMs)
	if a.estimate < 0 {
		window = ackedInitialWindowMs
	}
	sample, ok := a.window(arrival, bytes, window)
	if !ok {
		return
	}
	if a.estimate < 0 {
		a.estimate = sample
		return
	}
	uncertainty := ackedUncertainty * math.Abs(a.estimate-sample) / a.estimate
	sampleVar := uncertainty * uncertainty
	predVar := a.variance + ackedProcessNoise
	a.estimate = (sampleVar*a.estimate + predVar*sample) / (sampleVar + predVar)
	a.estimate = math.Max(a.estimate, 0)
	a.variance = sampleVar * predVar / (sampleVar + predVar)
	if !finite(a.estimate) || !finite(a.variance) {
		*a = newAckedBitrate()
	}
}

// window accumulates bytes and returns the rate of a window when one completes.
func (a *ackedBitrate) window(now time.Duration, bytes int, windowMs float64) (float64, bool) {
	if a.hasPrev && now < a.prev {
		a.hasPrev, a.sum, a.windowMs = false, 0, 0 // time went backwards: start over
	}
	if a.hasPrev {
		gap := msOf(now - a.prev)
		a.windowMs += gap
		if gap > windowMs {
			a.sum = 0
			a.windowMs = math.Mod(a.windowMs, windowMs)
		}
	}
	a.prev, a.hasPrev = now, true
	sample, ok := 0.0, false
	if a.windowMs >= windowMs {
		sample, ok = 8*float64(a.sum)/windowMs, true
		a.windowMs -= windowMs
		a.sum = 0
	}
	a.sum += bytes
	return sample, ok
}

// bps is the estimate in bit/s, 0 when unknown.
func (a *ackedBitrate) bps() float64 {
	if a.estimate < 0 {
		return 0
	}
	return a.estimate * 1000
}

// expectFastChange widens the estimate's variance, as when the sender leaves an
// application-limited period and its rate may jump.
func (a *ackedBitrate) expectFastChange() { a.variance += ackedFastChangeVar }
