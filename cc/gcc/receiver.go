package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Receiver is the draft's receive-side estimator (draft-ietf-rmcat-gcc-02 §5): it sees every
// received media packet with its send timestamp (abs-send-time), estimates the available rate Â
// and says when to send it back in a REMB message. It implements cc.ReceiverEstimator.
type Receiver struct {
	cfg        Config
	engine     draftDelay
	now        time.Duration
	lastUpdate time.Duration
	updated    bool
	lastUsage  cc.Usage
	remb       float64
	rembAt     time.Duration
	rembSent   bool
}

// NewReceiver returns a receive-side estimator.
func NewReceiver(opts ...Option) *Receiver {
	r := &Receiver{cfg: newConfig(opts)}
	r.engine = newDraftDelay(&r.cfg)
	return r
}

// OnPacket processes one received packet. Packets should come in arrival order; late ones are
// tolerated (a packet sent before the current group is ignored by the grouping).
func (r *Receiver) OnPacket(p cc.ReceivedPacket) {
	if p.Arrival > r.now || !r.updated {
		r.now = p.Arrival
	}
	if !r.engine.onPacket(p.SendTime, p.Arrival, p.Size) {
		return
	}
	// Run the rate controller at once when the verdict changes, otherwise every
	// RateUpdateInterval: the draft leaves the cadence open, and updating per group would make
	// the per-update additive step (at least 1 kbit) depend on the packet rate.
	due := !r.updated || r.engine.usage != r.lastUsage || r.now-r.lastUpdate >= r.cfg.RateUpdateInterval
	if due {
		r.engine.update(r.now)
		r.lastUpdate, r.updated, r.lastUsage = r.now, true, r.engine.usage
	}
}

// OnRTT gives the receiver an RTT sample (from RTCP XR or the sender); it sets the additive
// increase's response time.
func (r *Receiver) OnRTT(_ time.Duration, rtt time.Duration) { r.engine.rate.setRTT(rtt) }

// Estimate is the current available-rate estimate Â.
func (r *Receiver) Estimate() cc.Bitrate { return cc.BitrateFromFloat(r.engine.rate.rate) }

// REMB returns the value to send in a REMB message and whether one is due at now: the first one,
// then once per REMBInterval, and at once when the estimate dropped by REMBDropRatio or more
// since the last one sent.
func (r *Receiver) REMB(now time.Duration) (cc.Bitrate, bool) {
	est := r.engine.rate.rate
	due := !r.rembSent || now-r.rembAt >= r.cfg.REMBInterval || est <= r.remb*(1-r.cfg.REMBDropRatio)
	if !due {
		return 0, false
	}
	r.remb, r.rembAt, r.rembSent = est, now, true
	return cc.BitrateFromFloat(est), true
}

// State is a snapshot for display.
func (r *Receiver) State() cc.State {
	s := cc.State{Algorithm: "gcc-draft", Target: r.Estimate()}
	r.engine.fillState(&s)
	return s
}
