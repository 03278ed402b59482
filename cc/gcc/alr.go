package gcc

import (
	"math"
	"time"
)

// alrDetector finds application-limited regions, following libwebrtc's AlrDetector: an interval
// budget is refilled at ALRBudgetRatio (65 %) of the estimate and drained by the bytes actually
// sent; ALR starts when more than ALRStartRatio (80 %) of the budget is unused and ends when less
// than ALRStopRatio (50 %) is. The budget holds at most 500 ms worth of bytes and may go negative
// by as much.
type alrDetector struct {
	budgetRatio, startRatio, stopRatio float64
	rateBps                            float64
	remaining                          float64 // bytes
	last                               time.Duration
	hasLast                            bool
	inALR                              bool
	started, ended                     time.Duration
	everEnded                          bool
}

const alrWindow = 500 * time.Millisecond

func newALRDetector(cfg *Config) alrDetector {
	return alrDetector{budgetRatio: cfg.ALRBudgetRatio, startRatio: cfg.ALRStartRatio, stopRatio: cfg.ALRStopRatio}
}

func (d *alrDetector) setEstimate(bps float64) { d.rateBps = bps * d.budgetRatio }

func (d *alrDetector) maxBytes() float64 { return d.rateBps * alrWindow.Seconds() / 8 }

// onSent records bytes leaving the pacer at now and reports whether ALR just ended.
func (d *alrDetector) onSent(now time.Duration, bytes int) (ended bool) {
	if !d.hasLast {
		d.last, d.hasLast = now, true
		return false
	}
	dt := now - d.last
	if dt < 0 {
		dt = 0
	}
	d.last = max(d.last, now)
	limit := d.maxBytes()
	d.remaining = math.Min(d.remaining+d.rateBps*math.Min(dt.Seconds(), alrWindow.Seconds())/8, limit)
	d.remaining = math.Max(d.remaining-float64(bytes), -limit)
	if limit <= 0 {
		return false
	}
	ratio := d.remaining / limit
	switch {
	case !d.inALR && ratio > d.startRatio:
		d.inALR, d.started = true, now
	case d.inALR && ratio < d.stopRatio:
		d.inALR, d.ended, d.everEnded = false, now, true
		return true
	}
	return false
}
