package nada

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Sender is NADA's sender (RFC 8698 §5.2). It takes the receiver's reports (OnReport) or computes
// the same signal itself from per-packet transport feedback (OnFeedback, send-side mode), updates
// the reference rate r_ref, and derives the encoder target r_vin and sending rate r_send. It
// implements cc.RateController.
type Sender struct {
	cfg Config

	rRef     float64 // bit/s
	xPrev    float64 // ms
	hasPrev  bool
	last     time.Duration
	updated  bool
	rtt      time.Duration
	buffer   int // rate-shaping buffer, bytes
	report   Report
	now      time.Duration
	sig      signal        // send-side mode
	lastRecv time.Duration // latest arrival, in the receiver's clock
	hasRecv  bool
}

// NewSender returns a NADA sender.
func NewSender(opts ...Option) *Sender {
	s := &Sender{cfg: newConfig(opts)}
	s.rRef = s.cfg.InitialRate.Bps()
	s.sig = newSignal(&s.cfg)
	return s
}

// OnPacketSent is unused: NADA needs nothing from the send path.
func (s *Sender) OnPacketSent(cc.SentPacket) {}

// OnReport applies a receiver report arriving at now (the sender's clock).
func (s *Sender) OnReport(now time.Duration, r Report) {
	s.now = max(s.now, now)
	s.report = r
	s.update(now, r.RMode, ms(r.XCurr), r.RRecv.Bps())
}

// updateSlack sets how early, as a fraction 1/updateSlack of DELTA, feedback may arrive and still
// update the rate. Real feedback (a timer at the receiver, the network) arrives every DELTA give
// or take a millisecond: a strict DELTA gate skips each report that comes a little early, halving
// the update rate, and with it the accelerated ramp-up, on every real link. Feedback sent more
// often than DELTA still updates only once per DELTA.
const updateSlack = 5

// OnFeedback runs the send-side mode: the receiver's computation on per-packet feedback, then a
// rate update once about DELTA (at least DELTA − DELTA/updateSlack) passed since the last one. Packets are taken in the order given
// (sequence order, as TWCC and RFC 8888 list them); a run of lost packets is one loss event.
func (s *Sender) OnFeedback(fb cc.Feedback) {
	s.now = max(s.now, fb.Now)
	inLoss := false
	for i := range fb.Packets {
		p := &fb.Packets[i]
		if p.Lost {
			if !s.hasRecv {
				continue // no arrival yet to place the loss in the receiver's clock
			}
			if !inLoss {
				s.sig.onLost(s.lastRecv, 1)
			} else {
				s.sig.lostCount.Add(s.lastRecv, 1)
			}
			inLoss = true
			continue
		}
		inLoss = false
		if !s.hasRecv || p.Arrival > s.lastRecv {
			s.lastRecv, s.hasRecv = p.Arrival, true
		}
		s.sig.onReceived(p.SendTime, p.Arrival, p.Size, p.CE)
	}
	if !s.hasRecv || (s.updated && s.now-s.last < s.cfg.Delta-s.cfg.Delta/updateSlack) {
		return
	}
	s.report = s.sig.report(s.lastRecv)
	s.update(s.now, s.report.RMode, ms(s.report.XCurr), s.report.RRecv.Bps())
}

// OnRTT gives an RTT sample, used by the accelerated ramp-up's bound.
func (s *Sender) OnRTT(now, rtt time.Duration) {
	s.now = max(s.now, now)
	if rtt > 0 {
		s.rtt = rtt
	}
}

// OnTick does nothing: NADA updates on feedback.
func (s *Sender) OnTick(now time.Duration) { s.now = max(s.now, now) }

// SetShapingBuffer reports the rate-shaping buffer's size in bytes, for the buffer compensation of
// r_vin and r_send (RFC 8698 §5.2.2). Without it both equal r_ref.
func (s *Sender) SetShapingBuffer(bytes int) { s.buffer = max(bytes, 0) }

// update is the reference-rate calculation (RFC 8698 §5.2.1, eq. 3–7).
func (s *Sender) update(now time.Duration, rmode int, x, rRecv float64) {
	delta := s.cfg.Delta
	if s.updated {
		// δ is the time since the last update; capped at TAU so that a long feedback gap cannot
		// swing r_ref in one step (not in the RFC).
		delta = min(max(now-s.last, 0), s.cfg.Tau)
	}
	s.last, s.updated = now, true
	if !s.hasPrev {
		s.xPrev, s.hasPrev = x, true
	}
	if rmode == 0 {
		s.accelerate(rRecv)
	} else {
		s.gradual(delta, x)
	}
	s.xPrev = x
	s.rRef = math.Max(s.cfg.RMin.Bps(), math.Min(s.rRef, s.cfg.rateCap().Bps()))
	if !finite(s.rRef) {
		s.rRef = s.cfg.RMin.Bps()
	}
}

// accelerate is the bounded ramp-up: γ = min(GAMMA_MAX, QBOUND/(rtt+DELTA+DFILT)) keeps the queue
// the ramp-up can build within QBOUND; r_ref = max(r_ref, (1+γ)·r_recv).
func (s *Sender) accelerate(rRecv float64) {
	gamma := math.Min(s.cfg.GammaMax, ms(s.cfg.QBound)/ms(s.rtt+s.cfg.Delta+s.cfg.DFilt))
	if finite(rRecv) {
		s.rRef = math.Max(s.rRef, (1+gamma)*rRecv)
	}
}

// gradual is the gradual rate update around the equilibrium x = PRIO·XREF·RMAX/r_ref.
func (s *Sender) gradual(delta time.Duration, x float64) {
	tau := ms(s.cfg.Tau)
	offset := x - s.cfg.Prio*ms(s.cfg.XRef)*s.cfg.equilibriumRMax().Bps()/s.rRef
	diff := x - s.xPrev
	s.rRef -= s.cfg.Kappa*(ms(delta)/tau)*(offset/tau)*s.rRef + s.cfg.Kappa*s.cfg.Eta*(diff/tau)*s.rRef
}

// Equilibrium is the congestion signal at which the gradual update holds rate r:
// x = PRIO·XREF·RMAX/r (RMAX = RefRMax when unset).
func (s *Sender) Equilibrium(r cc.Bitrate) time.Duration {
	if r <= 0 {
		return s.cfg.XMax
	}
	return time.Duration(s.cfg.Prio * float64(s.cfg.XRef) * s.cfg.equilibriumRMax().Bps() / r.Bps())
}

func (s *Sender) compensation() float64 { return 8 * float64(s.buffer) * s.cfg.FPS }

// ReferenceRate is r_ref.
func (s *Sender) ReferenceRate() cc.Bitrate { return cc.BitrateFromFloat(s.rRef) }

// TargetRate is the encoder target r_vin = max(RMIN, r_ref − BETA_V·8·L_s·FPS).
func (s *Sender) TargetRate() cc.Bitrate {
	return cc.BitrateFromFloat(math.Max(s.cfg.RMin.Bps(), s.rRef-s.cfg.BetaV*s.compensation()))
}

// PacingRate is the sending rate r_send = min(RMAX, r_ref + BETA_S·8·L_s·FPS) (NoRMaxCap for an
// unset RMAX).
func (s *Sender) PacingRate() cc.Bitrate {
	return cc.BitrateFromFloat(math.Min(s.cfg.rateCap().Bps(), s.rRef+s.cfg.BetaS*s.compensation()))
}

// State is a snapshot for display.
func (s *Sender) State() cc.State {
	return cc.State{
		Algorithm:    "nada",
		Target:       s.TargetRate(),
		Pacing:       s.PacingRate(),
		Received:     s.report.RRecv,
		QueueDelayMs: ms(s.report.QueueDelay),
		SignalMs:     ms(s.report.XCurr),
		LossRate:     s.report.LossRate,
		RTTMs:        ms(s.rtt),
		Phase:        modeName(s.report.RMode),
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

var (
	_ cc.RateController    = (*Sender)(nil)
	_ cc.ReceiverEstimator = (*Receiver)(nil)
)
