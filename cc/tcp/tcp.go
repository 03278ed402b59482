package tcp

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Controller is a TCP congestion-control model. It implements cc.WindowController.
type Controller struct {
	cfg     Config
	variant Variant
	mss     float64

	cwnd, ssthresh float64 // bytes
	dupacks        int
	inRecovery     bool
	recoverLeft    float64 // bytes still to be acked before NewReno's recovery point
	rtt            cc.RTTEstimator
	lastReduction  time.Duration
	reduced        bool
	now            time.Duration

	cubic cubicState
}

// New returns a model of the given variant.
func New(v Variant, opts ...Option) *Controller {
	c := &Controller{cfg: newConfig(opts), variant: v}
	c.mss = float64(c.cfg.MSS)
	c.cwnd = c.cfg.initialWindow()
	c.ssthresh = math.Inf(1)
	if c.cfg.InitialSsthresh > 0 {
		c.ssthresh = float64(c.cfg.InitialSsthresh)
	}
	c.rtt = cc.NewRTTEstimator()
	c.rtt.MinRTO, c.rtt.MaxRTO, c.rtt.InitialRTO = c.cfg.MinRTO, c.cfg.MaxRTO, c.cfg.InitialRTO
	return c
}

// OnAck processes one ack (duplicates have Acked == 0) and reports whether the transport should
// retransmit the first unacknowledged segment now.
func (c *Controller) OnAck(a cc.Ack) bool {
	c.now = max(c.now, a.Now)
	c.rtt.Update(a.RTT)
	if a.CE {
		c.onECE(a.InFlight)
	}
	if a.Acked <= 0 {
		return c.onDupAck(a.InFlight)
	}
	c.dupacks = 0
	acked := float64(a.Acked)
	if c.inRecovery {
		return c.recoveryAck(acked)
	}
	if c.cwnd < c.ssthresh {
		c.cwnd += math.Min(acked, c.mss) // slow start (RFC 5681 §3.1)
		return false
	}
	c.avoid(acked)
	return false
}

func (c *Controller) onDupAck(inFlight int) bool {
	c.dupacks++
	if c.inRecovery {
		c.cwnd += c.mss // each further duplicate means a segment left the network
		return false
	}
	if c.dupacks != c.cfg.DupThresh {
		return false
	}
	c.enterRecovery(inFlight)
	c.cwnd = c.ssthresh + float64(c.cfg.DupThresh)*c.mss
	return true
}

// enterRecovery is the congestion response shared by fast retransmit and OnLoss.
func (c *Controller) enterRecovery(inFlight int) {
	flight := c.flight(inFlight)
	c.ssthresh = c.reduce(flight)
	c.cwnd = c.ssthresh
	c.inRecovery = true
	c.recoverLeft = flight
	c.lastReduction, c.reduced = c.now, true
}

// flight is FlightSize, or cwnd when the caller did not give it.
func (c *Controller) flight(inFlight int) float64 {
	if inFlight > 0 {
		return float64(inFlight)
	}
	return c.cwnd
}

// reduce returns the new ssthresh after a congestion event with the given flight size.
func (c *Controller) reduce(flight float64) float64 {
	if c.variant == Cubic {
		return c.cubicReduce(flight)
	}
	return math.Max(flight/2, 2*c.mss)
}

func (c *Controller) recoveryAck(acked float64) bool {
	c.recoverLeft -= acked
	if c.variant == Reno || c.recoverLeft <= 0 {
		c.cwnd = c.ssthresh // full ack (or Reno's first new ack): deflate and leave recovery
		c.inRecovery = false
		return false
	}
	// NewReno partial ack (RFC 6582 §3.2 step 5): retransmit the next hole, deflate by the
	// amount acked, add back one MSS when at least one MSS was acked.
	c.cwnd -= acked
	if acked >= c.mss {
		c.cwnd += c.mss
	}
	c.cwnd = math.Max(c.cwnd, c.mss)
	return true
}

func (c *Controller) avoid(acked float64) {
	if c.variant == Cubic {
		c.cubicAvoid(acked)
		return
	}
	c.cwnd += c.mss * acked / c.cwnd // RFC 5681 §3.1, byte counting
}

// onECE reacts to an ECN echo like a loss without retransmission, once per RTT (RFC 3168 §6.1.2).
func (c *Controller) onECE(inFlight int) {
	if c.inRecovery || (c.reduced && c.now-c.lastReduction < c.rtt.SRTT()) {
		return
	}
	flight := c.flight(inFlight)
	c.ssthresh = c.reduce(flight)
	c.cwnd = c.ssthresh
	c.lastReduction, c.reduced = c.now, true
}

// OnLoss reports a loss detected by the transport (SACK, RACK, ...): the same response as fast
// retransmit, without the window inflation. Ignored during recovery.
func (c *Controller) OnLoss(now time.Duration, inFlight int) {
	c.now = max(c.now, now)
	if !c.inRecovery {
		c.enterRecovery(inFlight)
	}
}

// OnTimeout applies RFC 5681 §3.1's response to a retransmission timeout and backs off the RTO.
// A timeout during fast recovery does not lower ssthresh again — it was set for this congestion
// episode already, and FlightSize is inflated by the recovery (Linux behaves the same way).
func (c *Controller) OnTimeout(now time.Duration, inFlight int) {
	c.now = max(c.now, now)
	if !c.inRecovery {
		c.ssthresh = c.reduce(c.flight(inFlight))
	}
	c.cwnd = c.mss
	c.inRecovery, c.dupacks = false, 0
	c.lastReduction, c.reduced = c.now, true
	c.rtt.Backoff()
}

// Cwnd is the congestion window in bytes.
func (c *Controller) Cwnd() int { return int(c.cwnd) }

// Ssthresh is the slow-start threshold in bytes (math.MaxInt while still arbitrarily high).
func (c *Controller) Ssthresh() int {
	if math.IsInf(c.ssthresh, 1) {
		return math.MaxInt
	}
	return int(c.ssthresh)
}

// InRecovery reports whether the model is in fast recovery.
func (c *Controller) InRecovery() bool { return c.inRecovery }

// RTO is the retransmission timeout.
func (c *Controller) RTO() time.Duration { return c.rtt.RTO() }

// SRTT is the smoothed RTT.
func (c *Controller) SRTT() time.Duration { return c.rtt.SRTT() }

// PacingRate follows Linux: 2 × cwnd/SRTT in slow start, 1.2 × in congestion avoidance.
func (c *Controller) PacingRate() cc.Bitrate {
	gain := 1.2
	if c.cwnd < c.ssthresh {
		gain = 2
	}
	return cc.PacingRateFor(c.Cwnd(), c.rtt.SRTT(), gain)
}

// State is a snapshot for display.
func (c *Controller) State() cc.State {
	phase := "congestion-avoidance"
	switch {
	case c.inRecovery:
		phase = "recovery"
	case c.cwnd < c.ssthresh:
		phase = "slow-start"
	}
	s := cc.State{
		Algorithm: c.variant.String(), Cwnd: c.Cwnd(), Pacing: c.PacingRate(),
		RTTMs: float64(c.rtt.SRTT()) / float64(time.Millisecond), Phase: phase,
	}
	if !math.IsInf(c.ssthresh, 1) {
		s.Ssthresh = int(c.ssthresh)
	}
	return s
}

var _ cc.WindowController = (*Controller)(nil)
