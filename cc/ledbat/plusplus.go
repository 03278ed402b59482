package ledbat

import (
	"math"
	"time"
)

// LEDBAT++ phases (draft-irtf-iccrg-ledbat-plus-plus-01 §4).
type phase int8

const (
	phaseSlowStart phase = iota // initial slow start, or the ramp back after a slowdown
	phaseAvoidance              // congestion avoidance
	phaseFrozen                 // slowdown: window held at MinCwnd
)

var phaseNames = [...]string{"slow-start", "congestion-avoidance", "slowdown"}

func (p phase) String() string { return phaseNames[p] }

type plusPlus struct {
	phase         phase
	ssthresh      float64 // window to return to after a slowdown; 0 during the initial slow start
	initialDone   bool
	nextSlowdown  time.Duration
	scheduled     bool
	slowdownStart time.Duration
	freezeUntil   time.Duration
}

// gain is GAIN = 1/min(MaxGainDivisor, ⌈2·TARGET/base⌉): a flow on a short path (small base delay)
// grows more slowly than Reno.
func (c *Controller) gain() float64 {
	base := c.base.Min()
	if base <= 0 {
		return 1 / c.cfg.MaxGainDivisor
	}
	div := math.Ceil(2 * float64(c.cfg.Target) / float64(base))
	return 1 / math.Max(1, math.Min(c.cfg.MaxGainDivisor, div))
}

// ackPlusPlus is LEDBAT++'s per-ack update.
func (c *Controller) ackPlusPlus(acked float64, inFlight int) {
	p := &c.pp
	p.maybeSlowdown(c)
	switch p.phase {
	case phaseFrozen:
		if c.now < p.freezeUntil {
			return
		}
		p.phase = phaseSlowStart
		fallthrough
	case phaseSlowStart:
		c.slowStart(acked)
	default:
		c.avoid(acked)
	}
	c.capIncrease(inFlight)
	c.cwnd = max(c.cwnd, c.cfg.MinCwnd*c.mss)
}

// slowStart grows by GAIN per acked byte until the queuing delay exceeds SlowStartExit·TARGET or,
// after a slowdown, the window is back where it was.
func (c *Controller) slowStart(acked float64) {
	p := &c.pp
	if float64(c.queue) > c.cfg.SlowStartExit*float64(c.cfg.Target) {
		p.endSlowStart(c)
		c.avoid(acked)
		return
	}
	c.cwnd += c.gain() * acked
	if p.ssthresh > 0 && c.cwnd >= p.ssthresh {
		c.cwnd = p.ssthresh
		p.endSlowStart(c)
	}
}

// avoid is congestion avoidance: below TARGET, +GAIN packets per RTT; above, the multiplicative
// decrease W += max(GAIN − C·W·(qd/TARGET − 1), −W/2) per RTT. Per ack, the per-RTT change is
// applied in proportion to acked/cwnd.
func (c *Controller) avoid(acked float64) {
	w := c.cwnd / c.mss
	perRTT := c.gain()
	if ratio := float64(c.queue) / float64(c.cfg.Target); ratio > 1 {
		perRTT = math.Max(perRTT-c.cfg.DecreaseConstant*w*(ratio-1), -w/2)
	}
	c.cwnd += finiteOr(perRTT*c.mss*acked/c.cwnd, 0)
}

func (p *plusPlus) endSlowStart(c *Controller) {
	p.phase = phaseAvoidance
	if !p.initialDone {
		// first slowdown two RTTs after the initial slow start ends
		p.initialDone = true
		p.schedule(c.now + 2*c.rtt.SRTT())
	} else if p.ssthresh > 0 {
		// the ramp back after a slowdown ended: space the next one by 9× this one's length
		length := c.now - p.slowdownStart
		p.schedule(c.now + time.Duration(c.cfg.SlowdownSpacing*float64(length)))
	}
	p.ssthresh = 0
}

func (p *plusPlus) schedule(at time.Duration) {
	p.nextSlowdown, p.scheduled = at, true
}

// maybeSlowdown starts a slowdown when one is due: remember the window, hold cwnd at MinCwnd for
// SlowdownRTTs, then slow-start back.
func (p *plusPlus) maybeSlowdown(c *Controller) {
	if !c.cfg.Slowdowns || !p.scheduled || p.phase != phaseAvoidance || c.now < p.nextSlowdown {
		return
	}
	p.scheduled = false
	p.phase = phaseFrozen
	p.ssthresh = c.cwnd
	p.slowdownStart = c.now
	p.freezeUntil = c.now + time.Duration(c.cfg.SlowdownRTTs*float64(c.rtt.SRTT()))
	c.cwnd = c.cfg.MinCwnd * c.mss
}

// onLoss leaves slow start (or a slowdown) for congestion avoidance.
func (p *plusPlus) onLoss(c *Controller) {
	if p.phase != phaseAvoidance {
		p.endSlowStart(c)
	}
}
