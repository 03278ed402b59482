package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/stats"
)

// draftDelay is the draft's delay-based pipeline, shared by Receiver and DraftSender: grouping →
// Kalman filter → over-use detector → AIMD, with R̂ measured over ReceivedRateWindow of arrivals.
type draftDelay struct {
	cfg      *Config
	groups   interArrival
	filter   kalman
	detector overuseDetector
	rate     aimd
	received stats.RateMeter
	deltas   int
	offset   float64 // m(i), ms
	usage    cc.Usage
	last     time.Duration
	seen     bool
}

// streamTimeout resets the pipeline after a silence (libwebrtc: 2 s), so that the first deltas
// after a pause do not read as a huge delay change.
const streamTimeout = 2 * time.Second

func newDraftDelay(cfg *Config) draftDelay {
	return draftDelay{
		cfg:      cfg,
		groups:   interArrival{burst: cfg.BurstTime},
		filter:   newKalman(cfg.KalmanQ, cfg.KalmanE0, cfg.KalmanChi),
		detector: newOveruseDetector(cfg.DraftKUp, cfg.DraftKDown, cfg.OveruseTime, cfg.InitialThreshold),
		rate:     newAIMD(cfg, true),
		received: stats.NewRateMeter(cfg.ReceivedRateWindow, 50),
	}
}

func (e *draftDelay) resetFilters() {
	e.groups.reset()
	e.filter = newKalman(e.cfg.KalmanQ, e.cfg.KalmanE0, e.cfg.KalmanChi)
	e.detector = newOveruseDetector(e.cfg.DraftKUp, e.cfg.DraftKDown, e.cfg.OveruseTime, e.cfg.InitialThreshold)
	e.deltas = 0
}

// onPacket feeds one received packet (in arrival order) and reports whether the detector produced
// a new verdict.
func (e *draftDelay) onPacket(send, arrival time.Duration, size int) bool {
	if e.seen && arrival-e.last > streamTimeout {
		e.resetFilters()
	}
	if !e.seen || arrival > e.last {
		e.last, e.seen = arrival, true
	}
	e.received.Add(arrival, size)
	d, ok := e.groups.add(send, arrival, size)
	if !ok {
		return false
	}
	e.deltas = min(e.deltas+1, maxDeltaCount)
	variation := msOf(d.arrivalDelta - d.sendDelta)
	sendDelta := msOf(d.sendDelta)
	e.offset = e.filter.update(variation, sendDelta)
	e.usage = e.detector.detect(e.offset, scaleByDeltas(e.offset, e.deltas), sendDelta, e.deltas, d.arrival)
	return true
}

// receivedRate is R̂ in bit/s over the window ending at the latest arrival, 0 while unknown. It
// is measured in the receiver's clock, which may have any offset from the sender's.
func (e *draftDelay) receivedRate() float64 {
	if !e.seen {
		return 0
	}
	r, ok := e.received.Rate(e.last)
	if !ok {
		return 0
	}
	return r
}

// update runs the rate controller at now (the caller's clock) and returns Â.
func (e *draftDelay) update(now time.Duration) float64 {
	return e.rate.update(now, e.usage, e.receivedRate())
}

func (e *draftDelay) fillState(s *cc.State) {
	s.Usage = e.usage
	s.DelayGradientMs = e.detector.estimate
	s.ThresholdMs = e.detector.threshold
	s.DelayBased = cc.BitrateFromFloat(e.rate.rate)
	s.Received = cc.BitrateFromFloat(e.receivedRate())
	s.Phase = e.rate.state.String()
	s.RTTMs = msOf(e.rate.rtt)
}
