package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Sender is the send-side GCC that libwebrtc runs with transport-wide feedback (goog_cc): the
// trendline delay detector and AIMD give a delay-based estimate, the v1 loss controller bounds it,
// probing finds capacity quickly, and ALR detection keeps the estimate honest while the
// application sends less than it. It implements cc.RateController and cc.Prober.
type Sender struct {
	cfg      Config
	groups   interArrival
	trend    trendline
	detector overuseDetector
	deltas   int
	delay    aimd
	acked    ackedBitrate
	probes   probeController
	probeEst probeEstimator
	alr      alrDetector
	loss     lossV1

	rtt       time.Duration
	now       time.Duration
	started   bool
	lastRecv  time.Duration
	seenRecv  bool
	usage     cc.Usage
	prevUsage cc.Usage
	probed    float64 // the latest probe result, bit/s (0 before any)
	scratch   []cc.PacketResult
}

// NewSender returns a send-side GCC controller.
func NewSender(opts ...Option) *Sender {
	s := &Sender{cfg: newConfig(opts)}
	s.groups = interArrival{burst: s.cfg.BurstTime}
	s.resetDetector()
	s.delay = newAIMD(&s.cfg, false)
	s.acked = newAckedBitrate()
	s.probes = newProbeController(&s.cfg)
	s.alr = newALRDetector(&s.cfg)
	s.alr.setEstimate(s.cfg.InitialRate.Bps())
	s.loss = newLossV1(&s.cfg)
	return s
}

func (s *Sender) resetDetector() {
	s.groups.reset()
	s.trend = newTrendline(s.cfg.TrendlineWindow, s.cfg.TrendlineSmoothing)
	s.detector = newOveruseDetector(s.cfg.TrendKUp, s.cfg.TrendKDown, s.cfg.OveruseTime, s.cfg.InitialThreshold)
	s.deltas = 0
	s.usage = cc.Normal
}

func (s *Sender) advance(now time.Duration) {
	if !s.started {
		s.now, s.started = now, true
		s.probes.start(now)
		return
	}
	s.now = max(s.now, now)
}

// OnPacketSent feeds the application-limited detector.
func (s *Sender) OnPacketSent(p cc.SentPacket) {
	s.advance(p.SendTime)
	if s.alr.onSent(p.SendTime, p.Size) {
		s.acked.expectFastChange()
	}
}

// OnFeedback processes one transport feedback message.
func (s *Sender) OnFeedback(fb cc.Feedback) {
	s.advance(fb.Now)
	for i := range fb.Packets {
		if p := &fb.Packets[i]; p.Lost && p.ProbeCluster != 0 {
			if c, ok := s.probes.cluster(p.ProbeCluster); ok {
				s.probeEst.addLost(c)
			}
		}
	}
	received := sortReceived(&s.scratch, fb.Packets)
	s.loss.report(s.now, len(fb.Packets)-len(received), len(fb.Packets), s.rtt)
	for i := range received {
		s.onReceived(&received[i])
	}
	s.updateDelayBased()
	s.loss.setDelayLimit(s.delay.rate)
	s.loss.applyLimit(s.now)
	s.publish()
	if s.prevUsage == cc.Underuse && s.usage == cc.Normal {
		s.probes.recover(s.now, &s.alr)
	}
	s.prevUsage = s.usage
}

func (s *Sender) onReceived(p *cc.PacketResult) {
	s.acked.add(p.Arrival, p.Size)
	if p.ProbeCluster != 0 {
		if c, ok := s.probes.cluster(p.ProbeCluster); ok {
			s.probeEst.add(c, p)
		}
	}
	if s.seenRecv && p.Arrival-s.lastRecv > streamTimeout {
		s.resetDetector()
	}
	if !s.seenRecv || p.Arrival > s.lastRecv {
		s.lastRecv, s.seenRecv = p.Arrival, true
	}
	d, ok := s.groups.add(p.SendTime, p.Arrival, p.Size)
	if !ok {
		return
	}
	s.deltas = min(s.deltas+1, maxDeltaCount)
	slope := s.trend.update(d)
	scaled := scaleByDeltas(slope, s.deltas) * s.cfg.TrendlineGain
	s.usage = s.detector.detect(slope, scaled, msOf(d.sendDelta), s.deltas, d.arrival)
}

// probeFloor keeps a probe result from dragging the estimate far below what is being delivered
// (libwebrtc limits probe results to at least min(delay estimate, 0.85 × acked rate)).
const probeFloorRatio = 0.85

// updateDelayBased is libwebrtc's DelayBasedBwe decision after a feedback.
func (s *Sender) updateDelayBased() {
	acked := s.acked.bps()
	probe, hasProbe := s.probeEst.take()
	if hasProbe && acked > 0 {
		probe = max(probe, min(s.delay.rate, probeFloorRatio*acked))
	}
	switch {
	case s.usage == cc.Overuse:
		if acked > 0 && s.delay.timeToReduceFurther(s.now, acked) {
			s.delay.update(s.now, cc.Overuse, acked)
		} else if acked <= 0 && s.probed > 0 && s.delay.timeToReduceFurther(s.now, 0) {
			// Nothing acknowledged yet but a probe measured the path: back off from what it
			// measured, as from an acknowledged rate, instead of halving blindly.
			s.delay.update(s.now, cc.Overuse, s.probed)
		} else if acked <= 0 && s.delay.timeToReduceFurther(s.now, 0) {
			s.delay.setEstimate(s.now, s.delay.rate/2) // nothing acknowledged yet: halve
			s.delay.state = stateHold
		}
	case hasProbe:
		s.probed = probe
		s.delay.setEstimate(s.now, probe)
		s.loss.setRate(s.now, probe)
	default:
		s.delay.update(s.now, s.usage, acked)
	}
}

// publish passes the new target to the probe controller and the ALR detector.
func (s *Sender) publish() {
	s.probes.setEstimate(s.now, s.loss.rate)
	s.alr.setEstimate(s.loss.rate)
}

// OnRTT gives an RTT sample.
func (s *Sender) OnRTT(now, rtt time.Duration) {
	s.advance(now)
	if rtt > 0 {
		s.rtt = rtt
		s.delay.setRTT(rtt)
	}
}

// OnTick runs the timers: the loss controller's periodic update and probe scheduling.
func (s *Sender) OnTick(now time.Duration) {
	s.advance(now)
	s.loss.update(s.now, s.rtt)
	s.probes.process(s.now, &s.alr)
	s.publish()
}

// NextProbe hands out the next probe cluster to send, if any.
func (s *Sender) NextProbe(now time.Duration) (cc.ProbeCluster, bool) {
	s.advance(now)
	return s.probes.next()
}

// RequestProbe asks for a probe at rate, for example when the application wants to send more than
// the estimate allows. It does nothing when rate is not above the estimate.
func (s *Sender) RequestProbe(now time.Duration, rate cc.Bitrate) {
	s.advance(now)
	s.probes.request(s.now, rate.Bps())
}

// TargetRate is the final estimate: the loss-based rate, which never exceeds the delay-based one.
func (s *Sender) TargetRate() cc.Bitrate { return cc.BitrateFromFloat(s.loss.rate) }

// PacingRate is PacingFactor × the target.
func (s *Sender) PacingRate() cc.Bitrate {
	return cc.BitrateFromFloat(s.loss.rate * s.cfg.PacingFactor)
}

// InALR reports whether the sender is application-limited.
func (s *Sender) InALR() bool { return s.alr.inALR }

// State is a snapshot for display.
func (s *Sender) State() cc.State {
	probe := probePhaseNames[s.probes.phase]
	if s.probes.queued > 0 {
		probe = "pending"
	}
	return cc.State{
		Algorithm:       "gcc",
		Target:          s.TargetRate(),
		Pacing:          s.PacingRate(),
		Received:        cc.BitrateFromFloat(s.acked.bps()),
		DelayBased:      cc.BitrateFromFloat(s.delay.rate),
		LossBased:       cc.BitrateFromFloat(s.loss.rate),
		Usage:           s.usage,
		DelayGradientMs: s.detector.estimate,
		ThresholdMs:     s.detector.threshold,
		LossRate:        s.loss.recent,
		RTTMs:           msOf(s.rtt),
		Phase:           s.delay.state.String(),
		Probe:           probe,
		ALR:             s.alr.inALR,
	}
}

// Each controller satisfies the cc interfaces it documents.
var (
	_ cc.RateController    = (*Sender)(nil)
	_ cc.Prober            = (*Sender)(nil)
	_ cc.ProbeRequester    = (*Sender)(nil)
	_ cc.RateController    = (*DraftSender)(nil)
	_ cc.ReceiverEstimator = (*Receiver)(nil)
)
