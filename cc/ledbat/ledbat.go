package ledbat

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/stats"
)

// Controller is a LEDBAT (RFC 6817) or LEDBAT++ window controller. It implements
// cc.WindowController.
type Controller struct {
	cfg  Config
	mss  float64
	cwnd float64 // bytes

	base    stats.MinHistory
	current stats.MinFilter
	queue   time.Duration
	rtt     cc.RTTEstimator

	dupacks      int
	lastDecrease time.Duration
	decreased    bool
	now          time.Duration

	pp plusPlus // LEDBAT++ phase machine (unused in RFC 6817 mode)
}

// dupThresh is the duplicate-ack count that signals a loss (RFC 5681).
const dupThresh = 3

// New returns a LEDBAT controller (RFC 6817 unless WithPlusPlus is given).
func New(opts ...Option) *Controller {
	c := &Controller{cfg: newConfig(opts)}
	c.mss = float64(c.cfg.MSS)
	c.cwnd = c.cfg.InitCwnd * c.mss
	c.base = stats.NewMinHistory(c.cfg.BaseHistory, c.cfg.BaseBucket)
	c.current = stats.NewMinFilter(c.cfg.CurrentFilter)
	c.rtt = cc.NewRTTEstimator()
	c.rtt.MinRTO = c.cfg.MinRTO
	if c.cfg.PlusPlus {
		c.pp = plusPlus{phase: phaseSlowStart}
	}
	return c
}

// OnAck processes one ack; a third duplicate is a loss and asks for a retransmission.
func (c *Controller) OnAck(a cc.Ack) bool {
	c.now = max(c.now, a.Now)
	c.rtt.Update(a.RTT)
	if a.Acked <= 0 {
		c.dupacks++
		if c.dupacks == dupThresh {
			c.loss(c.now)
			return true
		}
		return false
	}
	c.dupacks = 0
	if !c.sample(a) {
		return false // no delay sample yet: no basis for a window change
	}
	acked := float64(a.Acked)
	if c.cfg.PlusPlus {
		c.ackPlusPlus(acked, a.InFlight)
	} else {
		c.ackRFC(acked, a.InFlight)
	}
	return false
}

// sample folds the ack's delay into the filters (one-way delay for RFC 6817, RTT for LEDBAT++)
// and updates the queuing-delay estimate. A zero delay means "none".
func (c *Controller) sample(a cc.Ack) bool {
	d := a.OneWayDelay
	if c.cfg.PlusPlus || d == 0 {
		d = a.RTT
	}
	if d != 0 {
		c.base.Add(c.now, d)
		c.current.Add(d)
	}
	if c.current.Len() == 0 {
		return false
	}
	c.queue = max(0, c.current.Min()-c.base.Min())
	return true
}

// ackRFC is RFC 6817 §2.4.2's per-ack update.
func (c *Controller) ackRFC(acked float64, inFlight int) {
	target := float64(c.cfg.Target)
	offTarget := (target - float64(c.queue)) / target
	c.cwnd += c.cfg.Gain * offTarget * acked * c.mss / c.cwnd
	c.capIncrease(inFlight)
	c.cwnd = max(c.cwnd, c.cfg.MinCwnd*c.mss)
}

// capIncrease keeps cwnd ≤ flightsize + ALLOWED_INCREASE·MSS, so an application-limited sender
// does not build up a window it never used. Without a flight size (0) nothing is capped.
func (c *Controller) capIncrease(inFlight int) {
	if inFlight > 0 {
		c.cwnd = min(c.cwnd, float64(inFlight)+c.cfg.AllowedIncrease*c.mss)
	}
}

// loss halves the window at most once per RTT (RFC 6817 §2.4.2).
func (c *Controller) loss(now time.Duration) {
	if c.decreased && now-c.lastDecrease < c.rtt.SRTT() {
		return
	}
	c.lastDecrease, c.decreased = now, true
	c.cwnd = min(c.cwnd, max(c.cwnd/2, c.cfg.MinCwnd*c.mss))
	if c.cfg.PlusPlus {
		c.pp.onLoss(c)
	}
}

// OnLoss reports a loss the transport detected itself.
func (c *Controller) OnLoss(now time.Duration, _ int) {
	c.now = max(c.now, now)
	c.loss(c.now)
}

// OnTimeout resets the window to one MSS (RFC 6817 §2.4.2) and backs off the RTO.
func (c *Controller) OnTimeout(now time.Duration, _ int) {
	c.now = max(c.now, now)
	c.cwnd = c.mss
	c.dupacks = 0
	c.rtt.Backoff()
	if c.cfg.PlusPlus {
		c.pp.onLoss(c)
	}
}

// Cwnd is the congestion window in bytes.
func (c *Controller) Cwnd() int { return int(c.cwnd) }

// RTO is the retransmission timeout.
func (c *Controller) RTO() time.Duration { return c.rtt.RTO() }

// QueueDelay is the current queuing-delay estimate.
func (c *Controller) QueueDelay() time.Duration { return c.queue }

// PacingRate is 1.25 × cwnd per smoothed RTT.
func (c *Controller) PacingRate() cc.Bitrate {
	return cc.PacingRateFor(c.Cwnd(), c.rtt.SRTT(), 1.25)
}

// State is a snapshot for display.
func (c *Controller) State() cc.State {
	s := cc.State{
		Algorithm:    "ledbat",
		Cwnd:         c.Cwnd(),
		Pacing:       c.PacingRate(),
		QueueDelayMs: ms(c.queue),
		RTTMs:        ms(c.rtt.SRTT()),
		Phase:        "congestion-avoidance",
	}
	if c.cfg.PlusPlus {
		s.Algorithm = "ledbat++"
		s.Phase = c.pp.phase.String()
		s.Ssthresh = int(c.pp.ssthresh)
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func finiteOr(v, fallback float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fallback
	}
	return v
}

var _ cc.WindowController = (*Controller)(nil)
