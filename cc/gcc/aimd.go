package gcc

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// rateState is the AIMD controller's state (draft §5.5 table; libwebrtc the same).
type rateState int8

const (
	stateHold rateState = iota
	stateIncrease
	stateDecrease
)

var rateStateNames = [...]string{"hold", "increase", "decrease"}

func (s rateState) String() string { return rateStateNames[s] }

// aimd is the delay-based rate controller both variants share. The state machine and the
// multiplicative increase (η^min(Δt/1 s, 1)) are common; draft marks the rules where the two
// differ:
//
//	                       draft-ietf-rmcat-gcc-02             libwebrtc AimdRateControl
//	additive increase      + max(1 kbit, α·packet bits),        + max(4 kbit/s, packet bits /
//	                       α = 0.5·min(Δt/(100 ms+RTT), 1)      (2·(RTT+100 ms)))·Δt
//	decrease               β·R̂                                 β·acked − 5 kbit/s (β·capacity if
//	                                                            that would increase)
//	cap                    Â ≤ 1.5·R̂, always                   no increase above 1.5·acked+10 kbit/s
//
// Both use additive increase once the link-capacity average exists (R̂ "near max") and go back to
// multiplicative when R̂ leaves its ±3σ band. Rates are in bit/s.
type aimd struct {
	cfg   *Config
	draft bool

	rate        float64
	state       rateState
	lastChange  time.Duration
	changed     bool
	rtt         time.Duration
	capacity    linkCapacity
	throughput  float64 // last known R̂ / acked rate, 0 when unknown
	lastDecrAmt float64
}

const (
	defaultRTT          = 200 * time.Millisecond
	minIncreaseBps      = 1000.0
	minAdditiveBpsPerS  = 4000.0
	decreaseOffsetBps   = 5000.0
	capOffsetBps        = 10000.0
	minReductionWait    = 10 * time.Millisecond
	maxReductionWait    = 200 * time.Millisecond
	expectedPacketBytes = 1200
	expectedFPS         = 30
)

func newAIMD(cfg *Config, draft bool) aimd {
	return aimd{cfg: cfg, draft: draft, rate: cfg.InitialRate.Bps(), rtt: defaultRTT}
}

func (a *aimd) setRTT(rtt time.Duration) {
	if rtt > 0 {
		a.rtt = rtt
	}
}

func (a *aimd) clamp(v float64) float64 {
	if !finite(v) {
		v = a.rate
	}
	return math.Max(a.cfg.MinRate.Bps(), math.Min(v, a.cfg.MaxRate.Bps()))
}

// setEstimate forces the estimate, as a probe result does (libwebrtc SetEstimate).
func (a *aimd) setEstimate(now time.Duration, bps float64) {
	a.rate = a.clamp(bps)
	a.lastChange, a.changed = now, true
}

func (a *aimd) transition(u cc.Usage) {
	switch u {
	case cc.Normal:
		if a.state == stateHold {
			a.state = stateIncrease
		}
	case cc.Overuse:
		a.state = stateDecrease
	case cc.Underuse:
		a.state = stateHold
	}
}

// update runs the controller with the detector's verdict and the measured throughput (bit/s,
// ≤ 0 when unknown), and returns the new estimate.
func (a *aimd) update(now time.Duration, u cc.Usage, throughput float64) float64 {
	if throughput > 0 && finite(throughput) {
		a.throughput = throughput
	}
	if !a.changed {
		a.lastChange, a.changed = now, true
	}
	a.transition(u)
	switch a.state {
	case stateIncrease:
		a.increase(now)
	case stateDecrease:
		a.decrease()
		a.state = stateHold // hold until the queues drain
		a.lastChange = now
	}
	if a.draft && a.throughput > 0 {
		a.rate = math.Min(a.rate, a.cfg.CapFactor*a.throughput) // draft §5.5: Â ≤ 1.5·R̂
	}
	a.rate = a.clamp(a.rate)
	return a.rate
}

func (a *aimd) increase(now time.Duration) {
	dt := now - a.lastChange
	a.lastChange = now
	if dt < 0 {
		dt = 0
	}
	if a.throughput > a.capacity.upper() {
		a.capacity.reset() // throughput left the band: the link changed, probe multiplicatively
	}
	limit := math.Inf(1)
	if !a.draft && a.throughput > 0 {
		limit = a.cfg.CapFactor*a.throughput + capOffsetBps
	}
	if a.rate >= limit {
		return
	}
	var next float64
	if a.capacity.has {
		next = a.rate + a.additive(dt)
	} else {
		next = a.rate + a.multiplicative(dt)
	}
	a.rate = math.Min(next, limit)
}

func (a *aimd) multiplicative(dt time.Duration) float64 {
	eta := math.Pow(a.cfg.Eta, math.Min(dt.Seconds(), 1))
	inc := a.rate * (eta - 1)
	if a.draft {
		return inc
	}
	return math.Max(inc, minIncreaseBps)
}

// expectedPacketBits is the average packet size at the current rate, assuming 30 frames per
// second cut into 1200-byte packets (both sources use this model).
func (a *aimd) expectedPacketBits() float64 {
	frameBits := a.rate / expectedFPS
	packets := math.Max(1, math.Ceil(frameBits/(expectedPacketBytes*8)))
	return frameBits / packets
}

func (a *aimd) additive(dt time.Duration) float64 {
	response := a.rtt + 100*time.Millisecond
	if a.draft {
		alpha := 0.5 * math.Min(float64(dt)/float64(response), 1)
		return math.Max(minIncreaseBps, alpha*a.expectedPacketBits())
	}
	perSecond := math.Max(minAdditiveBpsPerS, a.expectedPacketBits()/(2*response.Seconds()))
	return perSecond * dt.Seconds()
}

func (a *aimd) decrease() {
	if a.throughput <= 0 {
		a.rate *= a.cfg.Beta // nothing measured yet: cut the estimate itself
		return
	}
	next := a.cfg.Beta * a.throughput
	if !a.draft {
		if next > decreaseOffsetBps {
			next -= decreaseOffsetBps
		}
		if next > a.rate && a.capacity.has {
			next = a.cfg.Beta * a.capacity.bps()
		}
	}
	if next < a.rate {
		a.lastDecrAmt = a.rate - next
		a.rate = next
	}
	if a.throughput < a.capacity.lower() {
		a.capacity.reset()
	}
	a.capacity.onOveruse(a.throughput)
}

// timeToReduceFurther limits how often libwebrtc's variant cuts again while over-use persists:
// once per RTT (clamped to [10, 200] ms), or at once when throughput fell below half the estimate.
func (a *aimd) timeToReduceFurther(now time.Duration, throughput float64) bool {
	wait := min(max(a.rtt, minReductionWait), maxReductionWait)
	if now-a.lastChange >= wait {
		return true
	}
	return throughput > 0 && throughput < a.rate/2
}
