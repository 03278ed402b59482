package gcc

import (
	"math"
	"time"
)

// draftLoss is the draft's sender-side loss controller (draft-ietf-rmcat-gcc-02 §6, seed 003):
// every report interval, with p the fraction of packets lost since the last update,
//
//	p > 10 %:  A_s ← A_s·(1 − 0.5·p)
//	p < 2 %:   A_s ← A_s·1.05
//	otherwise  A_s unchanged,
//
// and A_s never exceeds the delay-based (REMB) estimate A_r.
type draftLoss struct {
	low, high, inc float64
	interval       time.Duration
	rate           float64
	lost, total    int
	last           time.Duration
	started        bool
	fraction       float64
}

func newDraftLoss(cfg *Config) draftLoss {
	return draftLoss{
		low: cfg.LossLow, high: cfg.LossHigh, inc: cfg.DraftLossIncrease,
		interval: cfg.DraftLossInterval, rate: cfg.InitialRate.Bps(),
	}
}

func (l *draftLoss) add(lost, total int) {
	l.lost += lost
	l.total += total
}

// maybeUpdate applies the rule once per interval when packets were reported; it returns whether it
// did.
func (l *draftLoss) maybeUpdate(now time.Duration) bool {
	if !l.started {
		l.last, l.started = now, true
	}
	if l.total == 0 || now-l.last < l.interval {
		return false
	}
	l.apply(float64(l.lost) / float64(l.total))
	l.lost, l.total, l.last = 0, 0, now
	return true
}

func (l *draftLoss) apply(p float64) {
	l.fraction = p
	switch {
	case p > l.high:
		l.rate *= 1 - 0.5*p
	case p < l.low:
		l.rate *= l.inc
	}
}

// lossV1 is libwebrtc's first loss-based controller (SendSideBandwidthEstimation), the one the
// draft's rule grew into:
//
//   - a loss fraction is formed at most once per second (goog_cc's kLossUpdateInterval, the RTCP
//     report interval it stands in for when loss comes from transport feedback), and only once at
//     least 20 packets were reported since the last one: a fraction per feedback message would
//     be noisy (a few packets) and, with a cut allowed every 300 ms + RTT, would let a one-second
//     loss burst cut the estimate three or four times instead of once;
//   - loss ≤ 2 %: the estimate becomes 1.08 × the smallest estimate of the last second + 1 kbit/s,
//     i.e. at most 8 % growth per second;
//   - loss > 10 %: estimate·(1 − p/2), at most once per 300 ms + RTT and once per loss fraction;
//   - in between: hold;
//   - the result never exceeds the delay-based estimate, and during the first 2 s without loss it
//     follows the delay-based estimate up, so initial probes take effect at once.
//
// Besides, it keeps a short-window loss (every 20 reported packets) for display and for callers
// that react to loss faster than the estimate does (State.LossRate).
type lossV1 struct {
	low, high, inc float64
	minBps, maxBps float64

	rate                 float64
	delayLimit           float64
	lost, expected       int
	fraction             float64
	hasFraction          bool
	nextFraction         time.Duration // when the next loss fraction may be formed
	recentLost, recentN  int
	recent               float64 // loss over the last ≥ 20 reported packets
	decreasedSinceReport bool
	lastDecrease         time.Duration
	hasDecrease          bool
	firstReport          time.Duration
	hasFirstReport       bool
	lastReport           time.Duration
	history              [lossHistoryLen]lossPoint
	histLen, histHead    int
}

type lossPoint struct {
	at  time.Duration
	bps float64
}

const (
	lossMinPackets      = 20
	lossUpdateInterval  = time.Second
	lossIncreaseWindow  = time.Second
	lossDecreaseSpacing = 300 * time.Millisecond
	lossStartPhase      = 2 * time.Second
	lossHistoryLen      = 128
	// lossReportStale stops loss-driven changes when reports stopped (libwebrtc: 1.2 × 5 s).
	lossReportStale = 6 * time.Second
)

func newLossV1(cfg *Config) lossV1 {
	return lossV1{
		low: cfg.LossLow, high: cfg.LossHigh, inc: cfg.LossIncrease,
		minBps: cfg.MinRate.Bps(), maxBps: cfg.MaxRate.Bps(),
		rate: cfg.InitialRate.Bps(), delayLimit: math.Inf(1),
	}
}

// report accumulates a feedback's loss counts and, once enough packets were seen, forms a new loss
// fraction and updates the estimate.
func (l *lossV1) report(now time.Duration, lost, expected int, rtt time.Duration) {
	if expected <= 0 {
		return
	}
	lost = max(lost, 0)
	l.recentLost += lost
	l.recentN += expected
	if l.recentN >= lossMinPackets {
		l.recent = math.Min(float64(l.recentLost)/float64(l.recentN), 1)
		l.recentLost, l.recentN = 0, 0
	}
	l.lost += lost
	l.expected += expected
	if l.expected < lossMinPackets || (l.hasFirstReport && now < l.nextFraction) {
		return
	}
	l.fraction = math.Min(float64(l.lost)/float64(l.expected), 1)
	l.hasFraction, l.decreasedSinceReport = true, false
	l.lost, l.expected = 0, 0
	l.nextFraction = now + lossUpdateInterval
	if !l.hasFirstReport {
		l.firstReport, l.hasFirstReport = now, true
	}
	l.lastReport = now
	l.update(now, rtt)
}

func (l *lossV1) setDelayLimit(bps float64) { l.delayLimit = bps }

// setRate forces the estimate (a probe result). As libwebrtc's SetSendBitrate it lifts the
// delay-based limit first: the caller sets the new one right after, and the stale limit (the
// estimate before the probe) would otherwise cap the probe result.
func (l *lossV1) setRate(now time.Duration, bps float64) {
	l.histLen = 0
	l.delayLimit = math.Inf(1)
	l.setTarget(now, bps)
}

func (l *lossV1) inStartPhase(now time.Duration) bool {
	return !l.hasFirstReport || now-l.firstReport < lossStartPhase
}

// update runs the rule; it is also called from ticks so that the delay limit is applied promptly.
func (l *lossV1) update(now time.Duration, rtt time.Duration) {
	if l.followInStartPhase(now) {
		return
	}
	l.pushHistory(now)
	if !l.hasFraction || now-l.lastReport > lossReportStale {
		l.setTarget(now, l.rate)
		return
	}
	switch {
	case l.fraction <= l.low:
		l.setTarget(now, l.minRecent()*l.inc+minIncreaseBps)
	case l.fraction > l.high:
		if !l.decreasedSinceReport && (!l.hasDecrease || now-l.lastDecrease >= lossDecreaseSpacing+rtt) {
			l.lastDecrease, l.hasDecrease, l.decreasedSinceReport = now, true, true
			l.setTarget(now, l.rate*(1-0.5*l.fraction))
		}
	default:
		l.setTarget(now, l.rate)
	}
}

// followInStartPhase trusts the delay-based estimate while no loss was reported in the first
// seconds, so that the initial probes lift the target at once; it reports whether it did.
func (l *lossV1) followInStartPhase(now time.Duration) bool {
	if l.fraction != 0 || !l.inStartPhase(now) || !finite(l.delayLimit) || l.delayLimit <= l.rate {
		return false
	}
	l.histLen = 0
	l.setTarget(now, l.delayLimit)
	return true
}

// applyLimit re-applies the delay-based limit after it changed (and follows it up in the start
// phase).
func (l *lossV1) applyLimit(now time.Duration) {
	if !l.followInStartPhase(now) {
		l.setTarget(now, l.rate)
	}
}

func (l *lossV1) setTarget(_ time.Duration, bps float64) {
	if !finite(bps) {
		return
	}
	bps = math.Min(bps, l.delayLimit)
	l.rate = math.Max(l.minBps, math.Min(bps, l.maxBps))
}

// pushHistory keeps the estimates of the last second as a monotonic queue of minima.
func (l *lossV1) pushHistory(now time.Duration) {
	for l.histLen > 0 && now-l.history[l.histHead].at > lossIncreaseWindow {
		l.histHead = (l.histHead + 1) % lossHistoryLen
		l.histLen--
	}
	for l.histLen > 0 && l.history[(l.histHead+l.histLen-1)%lossHistoryLen].bps >= l.rate {
		l.histLen--
	}
	if l.histLen == lossHistoryLen {
		l.histHead = (l.histHead + 1) % lossHistoryLen
		l.histLen--
	}
	l.history[(l.histHead+l.histLen)%lossHistoryLen] = lossPoint{now, l.rate}
	l.histLen++
}

func (l *lossV1) minRecent() float64 {
	if l.histLen == 0 {
		return l.rate
	}
	return l.history[l.histHead].bps
}
