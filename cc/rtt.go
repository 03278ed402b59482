package cc

import "time"

// RFC 6298 constants.
const (
	// DefaultInitialRTO is the RTO before any RTT sample (RFC 6298 §2.1: 1 s).
	DefaultInitialRTO = time.Second
	// DefaultMinRTO is the lower bound on the RTO (RFC 6298 §2.4: 1 s; Linux uses 200 ms).
	DefaultMinRTO = time.Second
	// DefaultMaxRTO is the upper bound on the RTO (RFC 6298 §2.5 allows a maximum of at least 60 s).
	DefaultMaxRTO = 60 * time.Second
	// DefaultClockGranularity is G in RFC 6298 §2.
	DefaultClockGranularity = time.Millisecond
)

// RTTEstimator keeps the smoothed RTT, its variation and the retransmission timeout as RFC 6298
// specifies (α = 1/8, β = 1/4, K = 4), with exponential backoff. The zero value is not ready: use
// NewRTTEstimator. Integer arithmetic keeps it deterministic.
type RTTEstimator struct {
	InitialRTO, MinRTO, MaxRTO, Granularity time.Duration

	srtt, rttvar, latest, min time.Duration
	sampled                   bool
	backoff                   uint
}

// NewRTTEstimator returns an estimator with RFC 6298's defaults.
func NewRTTEstimator() RTTEstimator {
	return RTTEstimator{
		InitialRTO:  DefaultInitialRTO,
		MinRTO:      DefaultMinRTO,
		MaxRTO:      DefaultMaxRTO,
		Granularity: DefaultClockGranularity,
	}
}

// Update folds in one RTT sample (RFC 6298 §2.2–2.3) and clears any backoff. Non-positive samples
// are ignored.
func (e *RTTEstimator) Update(rtt time.Duration) {
	if rtt <= 0 {
		return
	}
	e.latest = rtt
	if !e.sampled || rtt < e.min {
		e.min = rtt
	}
	if !e.sampled {
		e.srtt, e.rttvar, e.sampled = rtt, rtt/2, true
	} else {
		diff := e.srtt - rtt
		if diff < 0 {
			diff = -diff
		}
		e.rttvar = e.rttvar - e.rttvar/4 + diff/4
		e.srtt = e.srtt - e.srtt/8 + rtt/8
	}
	e.backoff = 0
}

// Backoff doubles the RTO after the retransmission timer expired (RFC 6298 §5.5).
func (e *RTTEstimator) Backoff() {
	if e.backoff < 16 {
		e.backoff++
	}
}

// Sampled reports whether any RTT sample was seen.
func (e *RTTEstimator) Sampled() bool { return e.sampled }

// SRTT is the smoothed RTT, 0 before the first sample.
func (e *RTTEstimator) SRTT() time.Duration { return e.srtt }

// RTTVar is the RTT variation, 0 before the first sample.
func (e *RTTEstimator) RTTVar() time.Duration { return e.rttvar }

// Latest is the most recent sample.
func (e *RTTEstimator) Latest() time.Duration { return e.latest }

// Min is the smallest sample seen.
func (e *RTTEstimator) Min() time.Duration { return e.min }

// RTO is the current retransmission timeout, backoff included, clamped to [MinRTO, MaxRTO].
func (e *RTTEstimator) RTO() time.Duration {
	rto := e.InitialRTO
	if e.sampled {
		v := 4 * e.rttvar
		if v < e.Granularity {
			v = e.Granularity
		}
		rto = e.srtt + v
	}
	if rto < e.MinRTO {
		rto = e.MinRTO
	}
	for i := uint(0); i < e.backoff && rto < e.MaxRTO; i++ {
		rto *= 2
	}
	if e.MaxRTO > 0 && rto > e.MaxRTO {
		rto = e.MaxRTO
	}
	return rto
}
